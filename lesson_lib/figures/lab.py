"""Figures of the lab: a measured all-reduce against the fitted alpha-beta model."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from lesson_lib.figures._style import FIGURE_WIDTH_IN, INK, NEUTRALS, ROLE_COLORS
from lesson_lib.lab.fit import AlphaBetaFit
from lesson_lib.lab.records import Measurement
from lesson_lib.model.specimen import MODEL, PROMPT_TOKENS
from lesson_lib.model.units import format_bytes, format_seconds

#: The lesson's two message sizes, one token's hidden vector (decode) and a
#: 4,096-token prompt's hidden vectors (prefill), bytes.
DECODE_BYTES: float = MODEL.hidden_vector_bytes
PREFILL_BYTES: float = PROMPT_TOKENS * MODEL.hidden_vector_bytes

_MEASURED = NEUTRALS[3]
_MODEL = INK
_SERIES = (INK, NEUTRALS[2], NEUTRALS[4], NEUTRALS[1])


def _bytes_axis(ax: object, lo: float, hi: float) -> None:
    """Log x axis with ticks every factor of 8, labelled in binary units."""
    ax.set_xscale("log", base=2)
    first, last = int(np.floor(np.log2(lo))), int(np.ceil(np.log2(hi)))
    ticks = [2.0**e for e in range(first - first % 3, last + 1, 3)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda x, _: format_bytes(x, system="binary", decimals=0))
    )
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(lo / 1.6, hi * 1.6)


def _time_axis(ax: object) -> None:
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: format_seconds(y, decimals=1)))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _spread(m: Measurement) -> np.ndarray | None:
    if np.all(np.isnan(m.p10_s)):
        return None
    lo = np.where(np.isnan(m.p10_s), m.median_s, m.p10_s)
    hi = np.where(np.isnan(m.p90_s), m.median_s, m.p90_s)
    return np.vstack([m.median_s - lo, hi - m.median_s])


def _mark_sizes(ax: object, lo: float, hi: float) -> None:
    for nbytes, name, role in (
        (DECODE_BYTES, "decode", "decode"),
        (PREFILL_BYTES, "prefill", "prefill"),
    ):
        if lo / 1.6 <= nbytes <= hi * 1.6:
            ax.axvline(nbytes, color=ROLE_COLORS[role], lw=1.6, ls=":", zorder=1)
            ax.annotate(
                f"{name}\n{format_bytes(nbytes, system='binary')}",
                (nbytes, 0.97),
                xycoords=("data", "axes fraction"),
                ha="center",
                va="top",
                fontsize=10,
                color=ROLE_COLORS[role],
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
            )


def measured_vs_model(
    measurement: Measurement,
    fit: AlphaBetaFit,
    *,
    pingpong_latency: float | None = None,
    title: str | None = None,
) -> Figure:
    """Measured all-reduce time per size (log-log) against ``alpha + m/B``, with residuals.

    Top: medians with their 10th-90th percentile spread (filled markers: sizes
    the fit used), the fitted line, its two asymptotes (``alpha`` and ``m/B``),
    the crossover ``alpha x B`` and the lesson's decode (10 KiB) and prefill
    (40 MiB) messages. Bottom: the residuals as measured / model (1 = exact).

    Parameters
    ----------
    measurement : Measurement
        The sweep.
    fit : AlphaBetaFit
        A fit of it (:func:`lesson_lib.lab.fit.fit_measurement`).
    pingpong_latency : float, optional
        One-way point-to-point latency from ``mpi4py.bench pingpong``, seconds;
        drawn as a horizontal line for comparison with ``alpha``.
    title : str, optional
        Defaults to the measurement's label (what, where, when).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = Figure(figsize=(FIGURE_WIDTH_IN, 7.4), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1.1])
    m = measurement
    lo, hi = float(m.bytes.min()), float(max(m.bytes.max(), PREFILL_BYTES))
    grid = np.geomspace(lo / 1.6, hi * 1.6, 200)
    spread = _spread(m)
    used = fit.used
    top.errorbar(m.bytes, m.median_s, yerr=spread, fmt="none", ecolor=_MEASURED, alpha=0.5, lw=1.2)
    top.plot(
        m.bytes[used],
        m.median_s[used],
        "o",
        color=_MEASURED,
        ms=5,
        label="measured (median; bars p10-p90), used by the fit",
    )
    if (~used).any():
        top.plot(
            m.bytes[~used], m.median_s[~used], "o", mfc="white", mec=_MEASURED, ms=5,
            label="measured, not used by the fit",
        )  # fmt: skip
    top.plot(grid, fit.predict(grid), color=_MODEL, lw=1.8, label=(
        f"model t = alpha + m/B: alpha = {format_seconds(fit.alpha)}, "
        f"B = {format_bytes(fit.bandwidth, 'GB')}/s"
    ))  # fmt: skip
    top.plot(
        grid,
        np.full_like(grid, fit.alpha),
        color=ROLE_COLORS["latency"],
        ls="--",
        lw=1,
        label="alpha alone (latency term)",
    )
    top.plot(
        grid,
        grid / fit.bandwidth,
        color=ROLE_COLORS["bandwidth"],
        ls="--",
        lw=1,
        label="m/B alone (bandwidth term)",
    )
    if pingpong_latency is not None:
        top.axhline(
            pingpong_latency, color=ROLE_COLORS["free"], ls="-.", lw=1,
            label=f"pingpong one-way latency = {format_seconds(pingpong_latency)}",
        )  # fmt: skip
    cross = fit.crossover_bytes
    top.plot(
        [cross],
        [2 * fit.alpha],
        "D",
        color=_MODEL,
        ms=6,
        label=f"crossover alpha x B = {format_bytes(cross, system='binary')}",
    )
    _mark_sizes(top, lo, hi)
    tmin = min(float(np.nanmin(m.median_s)), fit.alpha) / 2
    tmax = max(float(np.nanmax(m.median_s)), float(fit.predict(hi))) * 8  # room for labels
    top.set_ylim(tmin, tmax)
    _time_axis(top)
    top.set_ylabel("time per all-reduce (log scale)")
    top.set_title(
        textwrap.fill(title if title is not None else m.label(), 52), fontsize=10, loc="left"
    )
    top.grid(True, which="major", alpha=0.3)

    ratio = 1.0 + fit.residuals
    bottom.axhline(1.0, color=_MODEL, lw=1)
    bottom.plot(m.bytes[used], ratio[used], "o", color=_MEASURED, ms=4)
    if (~used).any():
        bottom.plot(m.bytes[~used], ratio[~used], "o", mfc="white", mec=_MEASURED, ms=4)
    bottom.set_yscale("log", base=2)
    span = max(2.0, float(np.max(np.maximum(ratio, 1 / ratio))) * 1.3)
    bottom.set_ylim(1 / span, span)
    bottom.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}x"))
    bottom.yaxis.set_minor_formatter(NullFormatter())
    bottom.set_ylabel("measured / model\n(log scale)")
    bottom.set_xlabel("message size m (payload per rank, binary units, log scale)")
    bottom.grid(True, which="major", alpha=0.3)
    _bytes_axis(bottom, lo, hi)
    # The key of the top panel sits under the figure: inside, it hid measured points.
    bottom.legend(
        *top.get_legend_handles_labels(),
        fontsize=10,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.36),
        frameon=False,
    )
    return fig


def compare_ranks(
    measurements: Sequence[Measurement],
    fits: Sequence[AlphaBetaFit | None] | None = None,
    *,
    cores: int | None = None,
) -> Figure:
    """All-reduce time per size for several rank counts on one log-log plot.

    Parameters
    ----------
    measurements : sequence of Measurement
        For example the 2-rank and the 4-rank sweep.
    fits : sequence of AlphaBetaFit or None, optional
        A fitted line for each measurement (None: no line).
    cores : int, optional
        Cores of the machine, named in the legend of oversubscribed runs.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not measurements:
        raise ValueError("measurements must hold at least one Measurement")
    fits = list(fits) if fits is not None else [None] * len(measurements)
    if len(fits) != len(measurements):
        raise ValueError("fits must be as long as measurements")
    fig = Figure(figsize=(FIGURE_WIDTH_IN, 4.4), layout="constrained")
    ax = fig.add_subplot()
    lo = min(float(m.bytes.min()) for m in measurements)
    hi = max(float(m.bytes.max()) for m in measurements)
    for i, (m, fit) in enumerate(zip(measurements, fits, strict=True)):
        color = _SERIES[i % len(_SERIES)]
        label = f"{m.ranks} ranks"
        if m.machine.get("oversubscribed"):
            label += f" (oversubscribed: {cores or m.machine.get('usable_cores', '?')} cores)"
        ax.errorbar(
            m.bytes,
            m.median_s,
            yerr=_spread(m),
            fmt="o-",
            color=color,
            ms=4,
            lw=1,
            alpha=0.9,
            label=label,
        )
        if fit is not None:
            grid = np.geomspace(lo, hi, 100)
            ax.plot(
                grid,
                fit.predict(grid),
                ls="--",
                color=color,
                lw=1,
                label=f"{m.ranks} ranks, fitted alpha = {format_seconds(fit.alpha)}",
            )
    _mark_sizes(ax, lo, hi)
    _time_axis(ax)
    bottom, top = ax.get_ylim()
    ax.set_ylim(bottom, top * 6)  # room above the data for the size labels
    _bytes_axis(ax, lo, hi)
    ax.set_xlabel("message size m (payload per rank, binary units, log scale)")
    ax.set_ylabel("time per all-reduce (median; log scale)")
    # Under the axes: inside, the key hid measured points wherever it sat.
    ax.legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    ax.grid(True, which="major", alpha=0.3)
    return fig
