"""Measured collectives from ten GPU systems, and the lesson's claims scored against them.

The tables come from NVIDIA aiconfigurator (``aiconfigurator-core`` 0.12.0, Apache-2.0;
``lesson_lib/data/measured/NOTICE`` says which files and how ``tools/fetch_measured.py`` converted
them): NCCL (oneCCL on B60), vLLM, SGLang and TensorRT-LLM collectives on 2 to 8 GPUs (16 on GB300),
bytes and seconds. :func:`measured_fabric` fits alpha-beta to one table; :func:`evaluate_claims`
scores each claim on every system.
"""

from __future__ import annotations

import csv
import functools
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files

import numpy as np

from lesson_lib.model.alpha_beta_fit import AlphaBetaFit, fabric_from_fit, fit_alpha_beta
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step

#: Bus bandwidth below which a system's two-GPU NCCL all-reduce marks it PCIe-class.
PCIE_CLASS_BUS_BANDWIDTH: float = 100e9

#: The communication libraries' kernels (every other kernel is a serving engine's).
LIBRARY_KERNELS: tuple[str, ...] = ("nccl", "oneccl")

#: The system whose two-GPU fabric stands for "two fast GPUs", the lesson's card.
REFERENCE_SYSTEM = "h100_sxm"


@dataclass(frozen=True)
class MeasuredCollective:
    """One measured collective: a table row, in SI units."""

    #: The table's system folder (``"h100_sxm"``).
    system: str
    #: What ran it and its version, as the rows name them (``"nccl 2.29.2"``, ``"vllm 0.19.0"``).
    runtime: str
    #: ``"nccl"``, ``"oneccl"`` or an engine kernel (``"vllm_graph"``, ``"trtllm"`` ...).
    kernel: str
    #: ``"all_reduce"``, ``"all_gather"``, ``"reduce_scatter"`` or ``"alltoall"``.
    op: str
    #: GPUs taking part.
    gpus: int
    #: The message, bytes (16-bit elements x 2).
    message_bytes: int
    #: Time of one collective, seconds (the median of repeated rows).
    latency_s: float
    #: Rows of the source merged into this one.
    samples: int


def _data_file(name: str):  # type: ignore[no-untyped-def]
    return files("lesson_lib") / "data" / "measured" / name


#: The table's numeric columns; every other column is text.
_COLUMN_TYPES: dict[str, type] = {
    "gpus": int,
    "message_bytes": int,
    "latency_s": float,
    "samples": int,
}


@functools.cache
def load_collectives() -> tuple[MeasuredCollective, ...]:
    """Every shipped measurement (``lesson_lib/data/measured/collectives.csv``).

    Returns
    -------
    tuple of MeasuredCollective
        Sorted by system, runtime, kernel, op, GPUs and size.
    """
    with _data_file("collectives.csv").open() as f:
        rows = csv.reader(f)  # a third quicker than DictReader over ten thousand rows
        kinds = [_COLUMN_TYPES.get(name, str) for name in next(rows)]  # the fields, in order
        columns = zip(kinds, zip(*rows, strict=True), strict=True)  # by column: twice as quick
        return tuple(map(MeasuredCollective, *(map(kind, column) for kind, column in columns)))


@functools.cache
def _tables() -> dict[tuple[str, int, str, str], tuple[MeasuredCollective, ...]]:
    """The measurements grouped by (system, GPUs, kernel, op): one scan, read by every lookup."""
    grouped: dict[tuple[str, int, str, str], list[MeasuredCollective]] = {}
    for r in load_collectives():
        grouped.setdefault((r.system, r.gpus, r.kernel, r.op), []).append(r)
    return {key: tuple(rows) for key, rows in grouped.items()}


@functools.cache
def systems() -> dict[str, str]:
    """Each measured system and the device its tables name.

    Returns
    -------
    dict of str to str
        System folder -> device, e.g. ``"l40s": "NVIDIA L40S"``.
    """
    with _data_file("systems.csv").open() as f:
        return {r["system"]: r["device"] for r in csv.DictReader(f)}


def _require_system(system: str) -> str:
    if system not in systems():
        raise ValueError(f"system must be one of {', '.join(sorted(systems()))}, got {system!r}")
    return system


def measured_table(
    system: str, gpus: int, kernel: str = "nccl", op: str = "all_reduce", runtime: str | None = None
) -> tuple[str, np.ndarray, np.ndarray]:
    """One table: sizes and latencies of one kernel's collective on one system.

    Parameters
    ----------
    system, gpus : str, int
        A key of :func:`systems` and the GPUs taking part.
    kernel, op : str, default "nccl", "all_reduce"
        The kernel and the collective, as :class:`MeasuredCollective` names them.
    runtime : str, optional
        ``"nccl 2.29.2"`` ...; the newest that measured it by default.

    Returns
    -------
    tuple of (str, numpy.ndarray, numpy.ndarray)
        The runtime, the sizes in bytes (ascending) and the latencies in seconds; an unknown system,
        or no matching table, is a ValueError naming what exists.
    """
    _require_system(system)
    rows = list(_tables().get((system, gpus, kernel, op), ()))
    runtimes = sorted(
        {r.runtime for r in rows}, key=lambda v: [int(p) for p in re.findall(r"\d+", v)]
    )
    if runtime is None and runtimes:
        runtime = runtimes[-1]
    rows = [r for r in rows if r.runtime == runtime]
    if not rows:
        have = sorted({(r.kernel, r.op, r.gpus) for r in load_collectives() if r.system == system})
        raise ValueError(
            f"no {op} table of kernel {kernel!r} on {gpus} GPUs of {system}"
            + (f" measured by {runtime!r}" if runtime else "")
            + f"; it has (kernel, op, gpus): {have}"
        )
    rows.sort(key=lambda r: r.message_bytes)
    sizes = np.array([r.message_bytes for r in rows], dtype=float)
    times = np.array([r.latency_s for r in rows], dtype=float)
    return str(runtime), sizes, times


def _latency_at(sizes: np.ndarray, times: np.ndarray, message_bytes: float) -> float:
    """A table's latency at ``message_bytes``, interpolated on log-log axes."""
    table = np.concatenate([sizes, times])
    if not (len(sizes) and np.all(np.isfinite(table) & (table > 0))):
        raise ValueError("the measured table must hold rows of finite sizes and latencies > 0")
    if not sizes[0] <= message_bytes <= sizes[-1]:
        raise ValueError(
            f"message_bytes must be within the measured {sizes[0]:g}..{sizes[-1]:g} bytes, "
            f"got {message_bytes:g}"
        )
    return float(np.exp(np.interp(np.log(message_bytes), np.log(sizes), np.log(times))))


def smallest_engine_latency(system: str, gpus: int, mode: str) -> float | None:
    """The quickest all-reduce of any message size by a system's engine kernels in one launch mode.

    Parameters
    ----------
    system, gpus
        As for :func:`measured_table`.
    mode : {"graph", "eager"}
        Inside a CUDA graph (kernels named ``*_graph``) or launched eagerly.

    Returns
    -------
    float or None
        Seconds, the minimum over every size of every such table; None when none was measured.
    """
    _require_system(system)
    values = [
        r.latency_s
        for (at, count, kernel, op), rows in _tables().items()
        if (at, count, op) == (system, gpus, "all_reduce")
        and kernel not in LIBRARY_KERNELS
        and kernel.endswith(f"_{mode}")
        for r in rows
    ]
    return min(values) if values else None


@dataclass(frozen=True)
class FittedFabric:
    """A :class:`~lesson_lib.model.specs.Fabric` fitted to one measured table."""

    system: str
    runtime: str
    kernel: str
    gpus: int
    #: The lab's fit, with the sizes it used and every residual.
    fit: AlphaBetaFit
    #: Its ``latency`` is the fit's alpha, its ``bandwidth`` the fit's bus bandwidth.
    fabric: Fabric


@functools.cache
def measured_fabric(
    system: str, gpus: int, kernel: str = "nccl", op: str = "all_reduce", runtime: str | None = None
) -> FittedFabric:
    """Fit the lesson's alpha-beta model to one measured table.

    Parameters
    ----------
    system, gpus, kernel, op, runtime
        As for :func:`measured_table`.

    Returns
    -------
    FittedFabric
        6.3 us of latency for ``measured_fabric("h100_sxm", 2)``.
    """
    runtime, sizes, times = measured_table(system, gpus, kernel, op, runtime)
    fit = fit_alpha_beta(sizes, times, ranks=max(gpus, 2))
    name = f"{system} {gpus} GPUs, {kernel} ({runtime})"
    return FittedFabric(system, runtime, kernel, gpus, fit, fabric_from_fit(fit, name))


@functools.cache
def library_kernel(system: str) -> str:
    """The communication library a system's tables were measured with.

    Parameters
    ----------
    system : str
        A key of :func:`systems`.

    Returns
    -------
    str
        ``"nccl"``, or ``"oneccl"`` on Intel's Arc Pro B60.
    """
    _require_system(system)
    kernels = {key[2] for key in _tables() if key[0] == system}
    for kernel in LIBRARY_KERNELS:
        if kernel in kernels:
            return kernel
    raise ValueError(f"{system} has no communication library table")  # pragma: no cover


def link_class(system: str) -> str:
    """``"PCIe-class"`` or ``"NVLink-class"``, by its two-GPU all-reduce's bus bandwidth.

    Parameters
    ----------
    system : str
        A key of :func:`systems`.

    Returns
    -------
    str
        ``"PCIe-class"`` below :data:`PCIE_CLASS_BUS_BANDWIDTH`.
    """
    fitted = measured_fabric(system, 2, library_kernel(system))
    return "PCIe-class" if fitted.fabric.bandwidth < PCIE_CLASS_BUS_BANDWIDTH else "NVLink-class"


def _library_tables() -> list[tuple[str, int]]:
    """(system, GPUs) of every communication-library all-reduce table."""
    keys = [key for key in _tables() if key[3] == "all_reduce" and key[2] in LIBRARY_KERNELS]
    return sorted({(system, gpus) for system, gpus, _, _ in keys})


#: One case a claim is tested on: what was compared, with its numbers, and whether it holds.
_Case = tuple[str, bool]


@dataclass(frozen=True)
class Claim:
    """One of the lesson's claims, as a sentence the measurements can contradict."""

    key: str
    #: The claim, as the lesson makes it.
    statement: str
    #: What is compared on each case.
    tested: str
    #: Every case measured, described with its numbers and whether the claim holds.
    cases: Callable[[], Iterator[_Case]]


@dataclass(frozen=True)
class ClaimResult:
    """How one of the lesson's claims fares on the measured systems."""

    key: str
    statement: str
    tested: str
    #: The cases (systems, or system and GPUs) where it holds.
    holds: tuple[str, ...]
    #: The cases where it does not, each with the numbers that break it.
    breaks: tuple[str, ...]

    @property
    def total(self) -> int:
        """Cases tested."""
        return len(self.holds) + len(self.breaks)

    @property
    def verdict(self) -> str:
        """``"holds on k of n"``."""
        return f"holds on {len(self.holds)} of {self.total}"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"


#: One hidden vector of the specimen, the message of a decode all-reduce at batch 1.
DECODE_MESSAGE_BYTES: float = MODEL.hidden_vector_bytes
#: The lesson's prompt's message, every prompt token's hidden vector at once.
PREFILL_MESSAGE_BYTES: float = PROMPT_TOKENS * MODEL.hidden_vector_bytes


def _of_class(link: str) -> Iterator[str]:
    """The measured systems of one link class, by name."""
    return (system for system in sorted(systems()) if link_class(system) == link)


def _library_fit(system: str, gpus: int) -> FittedFabric:
    return measured_fabric(system, gpus, library_kernel(system))


def _four_slow_lose() -> Iterator[_Case]:
    fast = measured_fabric(REFERENCE_SYSTEM, 2).fabric
    two_fast = decode_step(MODEL, GPU, fast, 2, include_bandwidth=False).total_s
    for system in _of_class("PCIe-class"):
        slow = _library_fit(system, 4).fabric
        four = decode_step(MODEL, GPU, slow, 4, include_bandwidth=False).total_s
        yield f"{system}: {four * 1e3:.2f} ms against {two_fast * 1e3:.2f} ms", four > two_fast


def _bound(message_bytes: float, by_latency: bool) -> Iterator[_Case]:
    """Cases of "an all-reduce of ``message_bytes`` is latency- (else bandwidth-) bound"."""
    for system, gpus in _library_tables():
        fit = _library_fit(system, gpus).fit
        terms = [("alpha", fit.alpha), ("bytes", message_bytes / fit.bandwidth)]
        (bound, bound_s), (other, other_s) = terms if by_latency else terms[::-1]
        text = f"{bound} {_us(bound_s)}, {other} {_us(other_s)}"
        yield f"{system} x{gpus}: {text}", bound_s > other_s


def _decode_latency(system: str, gpus: int, kernel: str) -> float:
    _, sizes, times = measured_table(system, gpus, kernel)
    return _latency_at(sizes, times, DECODE_MESSAGE_BYTES)


#: Above this many PCIe-only GPUs vLLM and SGLang refuse their own all-reduce kernel and
#: run NCCL (vLLM's ``custom_all_reduce.py``, cited in the algorithms chapter).
ENGINE_KERNEL_MAX_PCIE_GPUS = 2


def _engine_kernel_beats_library() -> Iterator[_Case]:
    engine = {
        (system, gpus)
        for system, gpus, kernel, op in _tables()
        if op == "all_reduce"
        and kernel not in LIBRARY_KERNELS
        and (gpus <= ENGINE_KERNEL_MAX_PCIE_GPUS or link_class(system) != "PCIe-class")
    }
    for system, gpus in sorted(engine):
        try:
            library = _decode_latency(system, gpus, library_kernel(system))
        except ValueError:
            continue
        kernels = {key[2] for key in _tables() if key[:2] == (system, gpus)}
        best, name = min(
            (_decode_latency(system, gpus, k), k) for k in sorted(kernels - set(LIBRARY_KERNELS))
        )
        yield f"{system} x{gpus}: {name} {_us(best)}, library {_us(library)}", best < library


def _graph_cuts_latency() -> Iterator[_Case]:
    rows = load_collectives()
    graphs = {(r.system, r.runtime, r.kernel, r.gpus) for r in rows if r.kernel.endswith("_graph")}
    for system, runtime, kernel, gpus in sorted(graphs):
        eager = kernel.replace("_graph", "_eager")
        try:
            g = float(measured_table(system, gpus, kernel, runtime=runtime)[2][0])
            e = float(measured_table(system, gpus, eager, runtime=runtime)[2][0])
        except ValueError:
            continue
        yield f"{system} {runtime} x{gpus}: {_us(g)} in a graph, {_us(e)} eager", g < e


def _latency_grows_with_gpus() -> Iterator[_Case]:
    for system in sorted(systems()):
        counts = sorted(g for s, g in _library_tables() if s == system)
        if len(counts) < 2:
            continue
        alphas = [_library_fit(system, g).fabric.latency for g in counts]
        case = ", ".join(f"{_us(a)} on {g}" for a, g in zip(alphas, counts, strict=True))
        yield f"{system}: {case}", all(b > a for a, b in itertools.pairwise(alphas))


def _stated_latency(fabric: Fabric, gpus: int, link: str) -> Callable[[], Iterator[_Case]]:
    """The cases of "the stated latency is at least a measured system's" (two decimals: ties show)."""

    def cases() -> Iterator[_Case]:
        for system in _of_class(link):
            try:
                alpha = _library_fit(system, gpus).fabric.latency
            except ValueError:
                continue
            yield f"{system}: {alpha * 1e6:.2f} us", alpha <= fabric.latency

    return cases


#: The claims scored, in the order the page lists them.
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "four_slow_lose",
        "Four GPUs on the slow link decode one stream slower than two on the fast one.",
        "each PCIe-class system's 4-GPU fitted fabric against the H100 SXM's 2-GPU one, "
        "the H100's compute in both (NVLink-class systems are the other box, not scored)",
        _four_slow_lose,
    ),
    Claim(
        "decode_latency_bound",
        "A decode all-reduce at batch 1 is latency-bound.",
        "each library all-reduce table: fitted alpha against one hidden vector's bytes",
        functools.partial(_bound, DECODE_MESSAGE_BYTES, by_latency=True),
    ),
    Claim(
        "prefill_bandwidth_bound",
        "A prefill all-reduce is bandwidth-bound.",
        "each library all-reduce table: the prompt's bytes against fitted alpha",
        functools.partial(_bound, PREFILL_MESSAGE_BYTES, by_latency=False),
    ),
    Claim(
        "engine_kernel_beats_library",
        "An engine's one-shot or two-shot all-reduce beats the library's at decode sizes.",
        "each system and GPU count where engines run their own kernel: the fastest engine "
        "kernel against the library at one hidden vector (PCIe-class systems above "
        f"{ENGINE_KERNEL_MAX_PCIE_GPUS} GPUs are left out: engines run NCCL there)",
        _engine_kernel_beats_library,
    ),
    Claim(
        "graph_cuts_latency",
        "A CUDA graph cuts a small all-reduce's latency.",
        "each engine kernel measured both ways: the smallest message in a graph and eager",
        _graph_cuts_latency,
    ),
    Claim(
        "latency_grows_with_gpus",
        "The library's small-message latency grows with the number of GPUs.",
        "each system: fitted alpha at 2, 4 and 8 GPUs",
        _latency_grows_with_gpus,
    ),
    Claim(
        "fast_latency_upper",
        "The fast fabric's stated latency is at least as long as a measured NVLink system's.",
        f"each NVLink-class system's 2-GPU fitted alpha against {FAST.latency * 1e6:.2f} us",
        _stated_latency(FAST, 2, "NVLink-class"),
    ),
    Claim(
        "slow_latency_upper",
        "The slow fabric's stated latency is at least as long as a measured PCIe system's.",
        f"each PCIe-class system's 4-GPU fitted alpha against {SLOW.latency * 1e6:.2f} us",
        _stated_latency(SLOW, 4, "PCIe-class"),
    ),
)


@functools.cache
def evaluate_claims() -> tuple[ClaimResult, ...]:
    """Score every claim of :data:`CLAIMS` on the shipped measurements, in their order.

    Returns
    -------
    tuple of ClaimResult
    """
    results = []
    for claim in CLAIMS:
        cases = list(claim.cases())
        holds = tuple(case for case, held in cases if held)
        breaks = tuple(case for case, held in cases if not held)
        results.append(ClaimResult(claim.key, claim.statement, claim.tested, holds, breaks))
    return tuple(results)
