"""The measured page: the lesson's latencies and claims against ten measured GPU systems.

Each decode line keeps the lesson's card on one system's fitted fabric (:mod:`lesson_lib.measured`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.chapters import latency, overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.measured import (
    PCIE_CLASS_BUS_BANDWIDTH,
    REFERENCE_SYSTEM,
    evaluate_claims,
    library_kernel,
    link_class,
    load_collectives,
    measured_fabric,
    smallest_engine_latency,
    systems,
)
from lesson_lib.model.published import published_numbers
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import format_bytes, format_count, format_ratio, format_seconds


@dataclass(frozen=True)
class _MeasuredLines:
    """The worked example's decode lines with one system's fitted fabrics."""

    system: str
    link: str
    alpha_2: float
    alpha_4: float
    line_2: float
    line_4: float


def _lines(system: str, link: str, two: Fabric, four: Fabric) -> _MeasuredLines:
    """The decode lines (compute and latency) on 2 GPUs over ``two`` and on 4 over ``four``."""
    line_2, line_4 = (
        decode_step(MODEL, GPU, fabric, n, include_bandwidth=False).total_s
        for fabric, n in ((two, 2), (four, 4))
    )
    return _MeasuredLines(system, link, two.latency, four.latency, line_2, line_4)


def _measured_lines() -> list[_MeasuredLines]:
    """Every system with 2- and 4-GPU library all-reduces, NVLink-class first."""
    out = []
    for system in sorted(systems()):
        two, four = (measured_fabric(system, n, library_kernel(system)).fabric for n in (2, 4))
        out.append(_lines(system, link_class(system), two, four))
    return sorted(out, key=lambda r: (r.link != "NVLink-class", r.system))


#: Columns of :func:`measured_lines_table`.
LINES_HEADER: tuple[str, ...] = (
    "system",
    "link",
    "alpha, 2 GPUs (us)",
    "alpha, 4 GPUs (us)",
    "2 GPUs (ms per token)",
    "4 GPUs (ms per token)",
    "2 -> 4 GPUs",
)


def measured_lines_table(caption: str | None = None) -> str:
    """HTML table of ``_measured_lines``, the lesson's own fabrics in the first two rows.

    Parameters
    ----------
    caption : str, optional

    Returns
    -------
    str
        Columns :data:`LINES_HEADER`.
    """
    # the lesson's stated fabrics first, as lines of the same kind
    named = [
        (label, _lines(label, "stated", fabric, fabric))
        for label, fabric in (("the lesson: fast", FAST), ("the lesson: slow", SLOW))
    ]
    named += [(systems()[r.system], r) for r in _measured_lines()]
    rows = [
        (
            name,
            r.link,
            f"{r.alpha_2 * 1e6:.1f}",
            f"{r.alpha_4 * 1e6:.1f}",
            f"{r.line_2 * 1e3:.2f}",
            f"{r.line_4 * 1e3:.2f}",
            format_ratio(r.line_2 / r.line_4),  # what doubling the GPUs buys on this wire
        )
        for name, r in named
    ]
    return html_table(LINES_HEADER, rows, caption=caption)


#: Columns of :func:`claims_table`.
CLAIMS_HEADER: tuple[str, ...] = ("claim", "tested on", "verdict", "where it breaks")


def claims_table(caption: str | None = None) -> str:
    """HTML table of :func:`lesson_lib.measured.evaluate_claims`: k of n and the counter-examples.

    Parameters
    ----------
    caption : str, optional

    Returns
    -------
    str
        Columns :data:`CLAIMS_HEADER`, at most four counter-examples a row.
    """
    rows = []
    for c in evaluate_claims():
        shown = list(c.breaks[:4])
        if len(c.breaks) > 4:
            shown.append(f"and {len(c.breaks) - 4} more")
        rows.append((c.statement, c.tested, c.verdict, "; ".join(shown) or "nowhere"))
    return html_table(CLAIMS_HEADER, rows, caption=caption)


def measured_numbers() -> dict[str, str]:
    """The chapter's own glued values.

    Returns
    -------
    dict of str to str
    """
    rows = load_collectives()
    lines = _measured_lines()
    nvlink = [r for r in lines if r.link == "NVLink-class"]
    pcie = [r for r in lines if r.link == "PCIe-class"]
    reference = next(r for r in lines if r.system == REFERENCE_SYSTEM)
    one_gpu = decode_step(MODEL, GPU, FAST, 1, include_bandwidth=False).total_s
    out = {
        "measured_systems": format_count(len(systems())),
        "measured_rows": format_count(len(rows)),
        "measured_tables": format_count(
            len({(r.system, r.runtime, r.kernel, r.op, r.gpus) for r in rows})
        ),
        "nvlink_alpha_2_low": format_seconds(min(r.alpha_2 for r in nvlink), "us"),
        "nvlink_alpha_2_high": format_seconds(max(r.alpha_2 for r in nvlink), "us"),
        "pcie_alpha_4_low": format_seconds(min(r.alpha_4 for r in pcie), "us"),
        "pcie_alpha_4_high": format_seconds(max(r.alpha_4 for r in pcie), "us"),
        "pcie_line_4_best": format_seconds(min(r.line_4 for r in pcie), "ms"),
        "pcie_line_4_worst": format_seconds(max(r.line_4 for r in pcie), "ms"),
        # one GPU decodes in its compute alone: no all-reduce to wait on
        "pcie_speedup_1_to_4_low": format_ratio(one_gpu / max(r.line_4 for r in pcie), decimals=1),
        "pcie_speedup_1_to_4_high": format_ratio(one_gpu / min(r.line_4 for r in pcie), decimals=1),
        "reference_line_2": format_seconds(reference.line_2, "ms"),
        "reference_device": systems()[REFERENCE_SYSTEM],
    }
    busbw = {s: measured_fabric(s, 2, library_kernel(s)).fabric.bandwidth for s in systems()}
    pcie_bw = [busbw[r.system] for r in pcie]
    nvlink_bw = [busbw[r.system] for r in nvlink]
    graph_speed = [
        r.alpha_2 / smallest_engine_latency(r.system, 2, "graph")
        for r in lines
        if smallest_engine_latency(r.system, 2, "graph") is not None
    ]
    slow_over = [SLOW.latency / r.alpha_4 for r in pcie]
    l40s = next(r for r in pcie if r.system == "l40s")

    def rate(value: float) -> str:
        return format_bytes(value, "GB", decimals=0) + "/s"

    out |= {
        "pcie_threshold": rate(PCIE_CLASS_BUS_BANDWIDTH),
        "pcie_busbw_low": rate(min(pcie_bw)),
        "pcie_busbw_high": rate(max(pcie_bw)),
        "nvlink_busbw_low": rate(min(nvlink_bw)),
        "graph_speedup_low": format_ratio(min(graph_speed), decimals=1),
        "graph_speedup_high": format_ratio(max(graph_speed), decimals=1),
        "slow_over_measured_low": format_ratio(min(slow_over), decimals=1),
        "slow_over_measured_high": format_ratio(max(slow_over), decimals=1),
        "l40s_alpha_4": format_seconds(l40s.alpha_4, "us"),
        "l40s_latency_total": format_seconds(MODEL.allreduces_per_token * l40s.alpha_4, "ms"),
        "l40s_line_4": format_seconds(l40s.line_4, "ms"),
    }
    for gpus in (2, 4, 8):  # the L40S's bus bandwidth collapses above two GPUs
        bandwidth = measured_fabric("l40s", gpus).fabric.bandwidth
        out[f"l40s_busbw_{gpus}"] = format_bytes(bandwidth, "GB", decimals=1) + "/s"
    return out | _launch_numbers() | {f"claim_{c.key}": c.verdict for c in evaluate_claims()}


def _launch_numbers() -> dict[str, str]:
    """Four L40S against two of the reference system, both in a CUDA graph or both eager.

    Each per-token line is the card's compute plus one engine all-reduce per layer step at the
    quickest smallest-message time of that launch mode
    (:func:`~lesson_lib.measured.smallest_engine_latency`), no bandwidth term.
    """
    out = {}
    for mode in ("graph", "eager"):
        lines = {}
        for name, system, gpus in (("l40s", "l40s", 4), ("reference", REFERENCE_SYSTEM, 2)):
            alpha = smallest_engine_latency(system, gpus, mode)
            fabric = Fabric(f"{system} {mode}", latency=alpha, bandwidth=FAST.bandwidth)
            lines[name] = decode_step(MODEL, GPU, fabric, gpus, include_bandwidth=False).total_s
            out[f"{mode}_{name}_alpha_{gpus}"] = format_seconds(alpha, "us")
            out[f"{mode}_{name}_line_{gpus}"] = format_seconds(lines[name], "ms")
        out[f"{mode}_four_over_two"] = format_ratio(lines["reference"] / lines["l40s"])
    return out


#: What ``book/measured.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, published_numbers, latency.scaling_numbers, measured_numbers)
