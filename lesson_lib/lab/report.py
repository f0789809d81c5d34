"""What the lab chapter shows: a run (live or the shipped reference), its numbers, a table.

The chapter measures with the command line (:func:`lesson_lib.lab.main`)
and hands the exit status here. :func:`load_run` reads the results, or,
where MPI could not start, says so and falls back to the reference
measurement shipped in ``lesson_lib/lab/data``. :func:`lab_numbers` formats
every number the page's prose quotes, and :func:`fabric_table` recomputes
the lesson's decode and prefill steps with the measured machine as the wire.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from lesson_lib.lab.fit import AlphaBetaFit, fabric_from_fit, fit_measurement
from lesson_lib.lab.records import Measurement, ResultsError, load_reference, read_results
from lesson_lib.specimen import FAST, GPU, MODEL, PROMPT_TOKENS
from lesson_lib.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.step_time import decode_step, prefill_step
from lesson_lib.units import format_bytes, format_count, format_rate, format_ratio, format_seconds

#: What each exit status of ``python -m lesson_lib.lab run`` means, for the page.
EXIT_MEANINGS: dict[int, str] = {
    2: "bad options",
    3: "the sweep ran out of its time budget",
    4: "a rank failed or MPI could not start",
    5: "the job did not finish within its timeout",
    6: "no MPI is installed here (mpiexec or mpi4py missing)",
    7: "the results file was empty or corrupt",
}


@dataclass(frozen=True)
class LabRun:
    """A measurement, its fit, and whether it was measured just now.

    Attributes
    ----------
    measurement : Measurement
        The sweep.
    fit : AlphaBetaFit
        Its alpha-beta fit (default method, all sizes).
    live : bool
        True if measured by this run; False if the shipped reference.
    note : str
        Why the reference is shown instead (empty when live).
    """

    measurement: Measurement
    fit: AlphaBetaFit
    live: bool
    note: str = ""


def load_run(path: str | os.PathLike, status: int, ranks: int) -> LabRun:
    """Read a sweep's results, or fall back to the shipped reference.

    Parameters
    ----------
    path : str or path-like
        The results file the sweep was asked to write.
    status : int
        The sweep's exit status (0 = success).
    ranks : {2, 4}
        Which reference to use if needed.

    Returns
    -------
    LabRun
        Never raises for a failed or missing measurement: ``note`` says what
        happened and the reference is used.
    """
    note = ""
    if status == 0:
        try:
            m = read_results(path)
            if m.complete:
                return LabRun(m, fit_measurement(m), live=True)
            note = f"the sweep stopped early ({m.stop_reason})"
        except (ResultsError, ValueError) as exc:
            note = f"its results could not be used ({exc})"
    else:
        note = f"exit status {status}: {EXIT_MEANINGS.get(status, 'the sweep failed')}"
    ref = load_reference(ranks)
    return LabRun(ref, fit_measurement(ref), live=False, note=note)


def small_message_time(m: Measurement, max_bytes: float = 1024) -> float:
    """Median over sizes <= ``max_bytes`` of the median times, seconds.

    Parameters
    ----------
    m : Measurement
        A sweep.
    max_bytes : float, default 1024
        Upper end of "small".

    Returns
    -------
    float
        Seconds.
    """
    small = m.bytes <= max_bytes
    if not small.any():
        raise ValueError(f"no size <= {max_bytes:g} bytes in the measurement")
    return float(np.median(m.median_s[small]))


def _machine_text(m: Measurement) -> str:
    mach = m.machine
    parts = [mach.get("cpu", "unknown CPU")]
    if mach.get("logical_cores"):
        parts.append(f"{mach['logical_cores']} logical cores")
    if mach.get("mpi_library"):
        parts.append(" ".join(mach["mpi_library"].replace("Version:", "").split()))
    return ", ".join(parts)


def lab_numbers(
    run2: LabRun,
    pingpong_latency: float,
    run4: LabRun | None = None,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
) -> dict[str, str]:
    """Every number the lab page quotes, formatted, keyed by glue name.

    Parameters
    ----------
    run2 : LabRun
        The 2-rank sweep.
    pingpong_latency : float
        One-way latency from ``mpi4py.bench pingpong``, seconds.
    run4 : LabRun, optional
        The 4-rank sweep.
    model, accel : optional
        The lesson's model and GPU for "your machine as the interconnect".

    Returns
    -------
    dict of str to str
    """
    m, fit = run2.measurement, run2.fit
    mach = m.machine
    fabric = fabric_from_fit(fit)
    dec = decode_step(model, accel, fabric, m.ranks)
    dec_fast = decode_step(model, accel, FAST, m.ranks)
    pre = prefill_step(model, accel, fabric, m.ranks, PROMPT_TOKENS)
    pre_fast = prefill_step(model, accel, FAST, m.ranks, PROMPT_TOKENS)
    decode_bytes = model.hidden_vector_bytes
    prefill_bytes = PROMPT_TOKENS * model.hidden_vector_bytes
    load = mach.get("load_1min")
    out = {
        "lab_source": "measured while this page was built"
        if run2.live
        else "the reference measurement shipped with lesson_lib",
        "lab_machine": _machine_text(m),
        "lab_date": (m.started[:16].replace("T", " ") + " UTC") if m.started else "unknown date",
        "lab_cores": str(mach.get("logical_cores", "?")),
        "lab_load": "unknown" if load is None else f"{load:.1f}",
        "lab_llc": "unknown"
        if not mach.get("llc_bytes")
        else format_bytes(mach["llc_bytes"], system="binary", decimals=0),
        "lab_sizes": format_count(len(m.bytes)),
        "lab_min_size": format_bytes(m.bytes.min(), system="binary"),
        "lab_max_size": format_bytes(m.bytes.max(), system="binary"),
        "lab_alpha": format_seconds(fit.alpha),
        "lab_bandwidth": format_rate(fit.bandwidth, "GB"),
        "lab_busbw": format_rate(fit.bus_bandwidth, "GB"),
        "lab_crossover": format_bytes(fit.crossover_bytes, system="binary"),
        "lab_small_range": f"{format_bytes(fit.min_bytes, system='binary')} to "
        f"{format_bytes(fit.small_max, system='binary')}",
        "lab_large_range": f"{format_bytes(fit.large_min, system='binary')} to "
        f"{format_bytes(fit.max_bytes, system='binary')}",
        "lab_rms_residual": f"{100 * fit.rms_residual:.0f}%",
        "lab_max_residual": f"{100 * fit.max_residual:.0f}%",
        "lab_pingpong": format_seconds(pingpong_latency),
        "lab_alpha_over_pingpong": format_ratio(fit.alpha / pingpong_latency, decimals=1),
        "lab_t_decode": format_seconds(float(fit.predict(decode_bytes))),
        "lab_t_prefill": format_seconds(float(fit.predict(prefill_bytes))),
        "lab_decode_latency_total": format_seconds(dec.latency_s, "ms"),
        "lab_decode_total": format_seconds(dec.total_s, "ms"),
        "lab_decode_fast_total": format_seconds(dec_fast.total_s, "ms"),
        "lab_prefill_bandwidth": format_seconds(pre.bandwidth_s, "ms"),
        "lab_prefill_fast_bandwidth": format_seconds(pre_fast.bandwidth_s, "ms"),
        "lab_prefill_total": format_seconds(pre.total_s, "ms"),
        "lab_prefill_vs_fast": format_ratio(pre.total_s / pre_fast.total_s, decimals=1),
    }
    if run4 is not None:
        t2 = small_message_time(m)
        t4 = small_message_time(run4.measurement)
        out.update(
            {
                "lab_small_2": format_seconds(t2),
                "lab_small_4": format_seconds(t4),
                "lab_small_4_over_2": format_ratio(t4 / t2, decimals=1),
                "lab_4_max_size": format_bytes(run4.measurement.bytes.max(), system="binary"),
            }
        )
    return out


def fabric_table(
    fabrics: list[Fabric],
    n: int,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    prompt_tokens: int = PROMPT_TOKENS,
) -> str:
    """A Markdown table: the lesson's decode and prefill steps on each fabric.

    Parameters
    ----------
    fabrics : list of Fabric
        For example ``[FAST, SLOW, fabric_from_fit(fit)]``.
    n : int
        Tensor-parallel degree (GPUs).
    model, accel : optional
        The lesson's model and GPU.
    prompt_tokens : int, optional
        Prefill prompt length.

    Returns
    -------
    str
        Markdown, one row per fabric; times in ms.
    """
    head = (
        "| fabric | alpha (one small all-reduce) | bus bandwidth | decode: all-reduce "
        "latency per token | decode: time per token | prefill: wire time | prefill: total |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for fab in fabrics:
        dec = decode_step(model, accel, fab, n)
        pre = prefill_step(model, accel, fab, n, prompt_tokens)
        rows.append(
            f"| {fab.name} | {format_seconds(fab.latency)} | {format_rate(fab.bandwidth, 'GB')} "
            f"| {format_seconds(dec.latency_s, 'ms')} | {format_seconds(dec.total_s, 'ms')} "
            f"| {format_seconds(pre.bandwidth_s, 'ms')} | {format_seconds(pre.total_s, 'ms')} |"
        )
    return head + "\n".join(rows) + "\n"
