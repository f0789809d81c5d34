"""What the lab chapter shows: a run (live, or the shipped reference where MPI failed), its numbers, a table."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from lesson_lib.lab.cli import EXIT_MEANINGS
from lesson_lib.lab.fit import AlphaBetaFit, fabric_from_fit, fit_measurement
from lesson_lib.lab.pingpong import PingPong
from lesson_lib.lab.reading import (
    _alpha_reading,
    _b_relation,
    _compare,
    _line_verdict,
    _oversubscription,
    _regime,
    _split_summary,
    _split_verdict,
)
from lesson_lib.lab.records import Measurement, ResultsError, load_reference, read_results
from lesson_lib.model.specimen import FAST, GPU, MODEL, NVLINK_BANDWIDTH, PROMPT_TOKENS
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import decode_step, prefill_step
from lesson_lib.model.units import (
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)


@dataclass(frozen=True)
class LabRun:
    """A measurement, its fit, and whether it was measured just now."""

    #: The sweep as read from its results file.
    measurement: Measurement
    #: Its alpha-beta fit; None when it could not be fitted and none was required.
    fit: AlphaBetaFit | None
    #: True if measured by this run; False if the shipped reference.
    live: bool
    #: Why the reference is shown instead (empty when live).
    note: str = ""


def load_run(
    path: str | os.PathLike, status: int, ranks: int, *, require_fit: bool = True
) -> LabRun:
    """Read a sweep's results, or fall back to the shipped reference.

    Parameters
    ----------
    path : str or path-like
        The results file the sweep was asked to write.
    status : int
        The sweep's exit status (0 = success).
    ranks : {2, 4}
        Which reference to use if needed.
    require_fit : bool, default True
        False: a sweep that cannot be fitted is used, with ``fit=None``.

    Returns
    -------
    LabRun
        For a failed or missing measurement, the reference, ``note`` saying why.
    """
    note = ""
    if status == 0:
        try:
            m = read_results(path)
            if not m.complete:
                note = f"the sweep stopped early ({m.stop_reason})"
            else:
                try:
                    fit = fit_measurement(m)
                except ValueError:
                    if require_fit:
                        raise
                    fit = None
                return LabRun(m, fit, live=True)
        except (ResultsError, ValueError) as exc:
            note = f"its results could not be used ({exc})"
    else:
        note = f"exit status {status}: {EXIT_MEANINGS.get(status, 'the sweep failed')}"
    ref = load_reference(ranks)
    return LabRun(ref, fit_measurement(ref), live=False, note=note)


def load_pingpong(path: str | os.PathLike, status: int) -> tuple[PingPong, str]:
    """Read the pingpong probe a sweep ran on its ranks, or fall back to the shipped reference.

    Parameters
    ----------
    path : str or path-like
        The file ``lab run --pingpong`` was asked to write.
    status : int
        That run's exit status (0 = success).

    Returns
    -------
    tuple
        The :class:`~lesson_lib.lab.pingpong.PingPong` and why the reference is used (or "").
    """
    from lesson_lib.lab.pingpong import PingPongError, _read_pingpong, load_reference_pingpong

    if status == 0:
        try:
            return _read_pingpong(path), ""
        except (PingPongError, ResultsError) as exc:
            why = f"its results could not be used: {exc}"
    else:
        why = f"the sweep it follows ended with exit status {status}"
    return load_reference_pingpong(), f"the pingpong probe could not run ({why})"


def cache_fits(m: Measurement) -> tuple[AlphaBetaFit | None, AlphaBetaFit | None]:
    """Two fits whose B comes from messages inside and beyond the last-level cache.

    In cache: from 1 MiB to an eighth of the cache (each rank holds two
    buffers and MPICH copies through a shared segment, so a message occupies
    several times its size). Beyond: from the cache's size up.

    Parameters
    ----------
    m : Measurement
        A sweep whose ``machine`` knows ``llc_bytes``.

    Returns
    -------
    tuple
        ``(in_cache, beyond)``, None where no size or no cache size is known.
    """
    from lesson_lib.lab.fit import LARGE_MIN

    llc = m.machine.get("llc_bytes")
    if not llc:
        return None, None
    fits: list[AlphaBetaFit | None] = []
    for lo, hi in ((LARGE_MIN, llc / 8), (llc, float(m.bytes.max()))):
        try:
            fits.append(fit_measurement(m, large_min=lo, max_bytes=hi))
        except ValueError:  # no measured size in that range
            fits.append(None)
    return fits[0], fits[1]


def _small_message_time(m: Measurement, max_bytes: float = 1024) -> float:
    """Median over sizes <= ``max_bytes`` of the median times, seconds."""
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


def _provenance(run: LabRun) -> str:
    """One sentence saying where and when the shown measurement was made."""
    m = run.measurement
    when = (m.started[:16].replace("T", " ") + " UTC") if m.started else "an unknown date"
    where = _machine_text(m)
    load = m.machine.get("load_1min")
    busy = "" if load is None else f"; load average {load:.1f} as it started"
    if run.live:
        return f"This run: {where}, {when}{busy}."
    return (
        f"MPI could not run here ({run.note}). Shown instead: the reference "
        f"measurement that ships with lesson_lib, made on {where}, {when}{busy}."
    )


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
    run2, run4 : LabRun
        The 2-rank sweep and (optional) the 4-rank one.
    pingpong_latency : float
        One-way latency from ``mpi4py.bench pingpong``, seconds.
    model, accel : optional
        The lesson's model and GPU, on "your machine as the interconnect".

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
    out = {
        "lab_provenance": _provenance(run2),
        "lab_provenance_4": _provenance(run4) if run4 is not None else "",
        "lab_cores": str(mach.get("logical_cores", "?")),
        "lab_llc": "unknown"
        if not mach.get("llc_bytes")
        else format_bytes(mach["llc_bytes"], system="binary", decimals=0),
        "lab_alpha": format_seconds(fit.alpha),
        "lab_bandwidth": format_rate(fit.bandwidth, "GB"),
        "lab_busbw": format_rate(fit.bus_bandwidth, "GB"),
        "lab_alpha_over_fast": format_ratio(fit.alpha / FAST.latency, decimals=2),
        "lab_alpha_reading": _alpha_reading(fit),
        "lab_busbw_vs_nvlink": _compare(fit.bus_bandwidth, NVLINK_BANDWIDTH),
        "lab_busbw_nvlink_factor": format_ratio(
            max(fit.bus_bandwidth, NVLINK_BANDWIDTH) / min(fit.bus_bandwidth, NVLINK_BANDWIDTH),
            decimals=0,
        ),
        "lab_nvlink": format_rate(NVLINK_BANDWIDTH, "GB"),
        **_cache_numbers(m, fit),
        "lab_crossover": format_bytes(fit.crossover_bytes, system="binary"),
        "lab_small_range": f"{format_bytes(fit.min_bytes, system='binary')} to "
        f"{format_bytes(fit.small_max, system='binary')}",
        "lab_large_range": f"{format_bytes(fit.large_min, system='binary')} to "
        f"{format_bytes(fit.max_bytes, system='binary')}",
        "lab_rms_residual": f"{100 * fit.rms_residual:.0f}%",
        "lab_max_residual": f"{100 * fit.max_residual:.0f}%",
        "lab_pingpong": format_seconds(pingpong_latency),
        "lab_alpha_over_pingpong": format_ratio(fit.alpha / pingpong_latency, decimals=1),
        "lab_decode_latency_total": format_seconds(dec.latency_s, "ms"),
        "lab_decode_bandwidth_total": format_seconds(dec.bandwidth_s, "ms"),
        "lab_decode_total": format_seconds(dec.total_s, "ms"),
        "lab_prefill_bandwidth": format_seconds(pre.bandwidth_s),
        "lab_prefill_fast_bandwidth": format_seconds(pre_fast.bandwidth_s),
        "lab_prefill_total": format_seconds(pre.total_s),
        "lab_prefill_vs_fast": format_ratio(pre.total_s / pre_fast.total_s, decimals=1),
        "lab_decode_vs_fast": format_ratio(dec.total_s / dec_fast.total_s, decimals=2),
        "lab_decode_regime": _regime(decode_bytes, fit),
        "lab_prefill_regime": _regime(prefill_bytes, fit),
        "lab_split_verdict": _split_verdict(fit, decode_bytes, prefill_bytes),
        "lab_split_summary": _split_summary(fit, decode_bytes, prefill_bytes),
        "lab_prefill_line_verdict": _line_verdict(m, fit, prefill_bytes),
    }
    if run4 is not None:
        t2 = _small_message_time(m)
        t4 = _small_message_time(run4.measurement)
        out |= {
            "lab_small_2": format_seconds(t2),
            "lab_small_4": format_seconds(t4),
            "lab_small_4_over_2": format_ratio(t4 / t2, decimals=1),
            "lab_oversubscription_4": _oversubscription(run4.measurement),
        }
    return out


def _cache_numbers(m: Measurement, main: AlphaBetaFit) -> dict[str, str]:
    inside, beyond = cache_fits(m)

    def sizes(f: AlphaBetaFit | None) -> str:
        # The sizes B was fitted to, as a noun phrase: a range of one size is one size.
        if f is None:
            return "sizes in that range (none were measured)"
        used = m.bytes[(m.bytes >= f.large_min) & (m.bytes <= f.max_bytes)]
        if len(used) <= 1:
            shown = used[0] if len(used) else f.large_min
            return f"the one size {format_bytes(shown, system='binary')}"
        return (
            f"the sizes from {format_bytes(used.min(), system='binary')} to "
            f"{format_bytes(used.max(), system='binary')}"
        )

    def rate(f: AlphaBetaFit | None) -> str:
        return "not measured" if f is None else format_rate(f.bandwidth, "GB")

    return {
        "lab_b_in_cache": rate(inside),
        "lab_b_beyond_cache": rate(beyond),
        "lab_in_cache_sizes": sizes(inside),
        "lab_beyond_cache_sizes": sizes(beyond),
        "lab_b_relation": _b_relation(main, inside, beyond),
    }


def fabric_table(
    fabrics: list[Fabric],
    n: int,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    prompt_tokens: int = PROMPT_TOKENS,
) -> str:
    """An HTML table (:func:`lesson_lib.model.tables.html_table`): decode and prefill on each fabric.

    Parameters
    ----------
    fabrics : list of Fabric
        For example ``[FAST, SLOW, fabric_from_fit(fit)]``, a row each.
    n : int
        Tensor-parallel degree (GPUs).
    model, accel, prompt_tokens : optional
        The lesson's model, GPU and prompt length.

    Returns
    -------
    str
    """
    from lesson_lib.model.tables import html_table

    header = ["fabric", "alpha: one small all-reduce", "bus bandwidth"]
    header += ["decode: all-reduce latency per token", "decode: time per token"]
    header += ["prefill: wire time", "prefill: total"]
    rows = []
    for fab in fabrics:
        dec = decode_step(model, accel, fab, n)
        pre = prefill_step(model, accel, fab, n, prompt_tokens)
        row = [fab.name, format_seconds(fab.latency), format_rate(fab.bandwidth, "GB")]
        times = (dec.latency_s, dec.total_s, pre.bandwidth_s, pre.total_s)
        rows.append(row + [format_seconds(t, "ms") for t in times])
    caption = (
        f"The lesson's model on {n} GPUs: decode (one token) and prefill "
        f"({format_count(prompt_tokens)}-token prompt) with each fabric."
    )
    return html_table(header, rows, caption=caption)
