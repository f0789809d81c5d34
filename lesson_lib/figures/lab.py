"""Figures of the lab: a measured all-reduce against the fitted alpha-beta model."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from lesson_lib.figures._style import (
    INK,
    NEUTRALS,
    ROLE_COLORS,
    legend_below,
    new_figure,
    two_panels,
)
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
_SIZE_AXIS = "message size m (payload per rank, binary units, log scale)"


def _bytes_axis(ax: Axes, lo: float, hi: float) -> None:
    """Log x axis with ticks every factor of 16 (of 8 they run together), in binary units."""
    ax.set_xscale("log", base=2)
    first, last = int(np.floor(np.log2(lo))), int(np.ceil(np.log2(hi)))
    ticks = [2.0**e for e in range(first - first % 4, last + 1, 4)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda x, _: format_bytes(x, system="binary", decimals=0))
    )
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(lo / 1.6, hi * 1.6)


def _time_axis(ax: Axes) -> None:
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: format_seconds(y, decimals=1)))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _spread(m: Measurement) -> np.ndarray | None:
    if np.all(np.isnan(m.p10_s)):
        return None
    lo = np.where(np.isnan(m.p10_s), m.median_s, m.p10_s)
    hi = np.where(np.isnan(m.p90_s), m.median_s, m.p90_s)
    return np.vstack([m.median_s - lo, hi - m.median_s])


def _mark_sizes(ax: Axes, lo: float, hi: float) -> None:
    for nbytes, name in ((DECODE_BYTES, "decode"), (PREFILL_BYTES, "prefill")):
        if lo / 1.6 <= nbytes <= hi * 1.6:
            ax.axvline(nbytes, color=ROLE_COLORS[name], lw=1.6, ls=":", zorder=1)
            ax.annotate(f"{name}\n{format_bytes(nbytes, system='binary')}", (nbytes, 0.97),
                        xycoords=("data", "axes fraction"), ha="center", va="top", fontsize=10,
                        color=ROLE_COLORS[name],
                        bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none",
                              "alpha": 0.85})  # fmt: skip


def _measured(ax: Axes, m: Measurement, used: np.ndarray, ys: np.ndarray, ms: float,
              labels: tuple[str | None, str | None] = (None, None)) -> None:  # fmt: skip
    """The measured points: filled where the fit used them, hollow where it did not."""
    ax.plot(m.bytes[used], ys[used], "o", color=_MEASURED, ms=ms, label=labels[0])
    if (~used).any():
        ax.plot(m.bytes[~used], ys[~used], "o", mfc="white", mec=_MEASURED, ms=ms,
                label=labels[1])  # fmt: skip


def _fit_panel(ax: Axes, m: Measurement, fit: AlphaBetaFit, pingpong: float | None) -> None:
    """Medians with their spread, the fitted line, its asymptotes, the crossover, the messages."""
    lo, hi = float(m.bytes.min()), float(max(m.bytes.max(), PREFILL_BYTES))
    grid = np.geomspace(lo / 1.6, hi * 1.6, 200)
    ax.errorbar(m.bytes, m.median_s, yerr=_spread(m), fmt="none", ecolor=_MEASURED, alpha=0.5,
                lw=1.2)  # fmt: skip
    _measured(ax, m, fit.used, m.median_s, 5, ("measured (median; bars p10-p90), used by the fit",
                                                "measured, not used by the fit"))  # fmt: skip
    model = (f"model t = alpha + m/B: alpha = {format_seconds(fit.alpha)}, "
             f"B = {format_bytes(fit.bandwidth, 'GB')}/s")  # fmt: skip
    ax.plot(grid, fit.predict(grid), color=_MODEL, lw=1.8, label=model)
    ax.plot(grid, np.full_like(grid, fit.alpha), color=ROLE_COLORS["latency"], ls="--", lw=1,
            label="alpha alone (latency term)")  # fmt: skip
    ax.plot(grid, grid / fit.bandwidth, color=ROLE_COLORS["bandwidth"], ls="--", lw=1,
            label="m/B alone (bandwidth term)")  # fmt: skip
    if pingpong is not None:
        ax.axhline(pingpong, color=ROLE_COLORS["free"], ls="-.", lw=1,
                   label=f"pingpong one-way latency = {format_seconds(pingpong)}")  # fmt: skip
    cross = fit.crossover_bytes
    ax.plot([cross], [2 * fit.alpha], "D", color=_MODEL, ms=6,
            label=f"crossover alpha x B = {format_bytes(cross, system='binary')}")  # fmt: skip
    _mark_sizes(ax, lo, hi)
    tmin = min(float(np.nanmin(m.median_s)), fit.alpha) / 2
    tmax = max(float(np.nanmax(m.median_s)), float(fit.predict(hi))) * 8  # room for labels
    ax.set_ylim(tmin, tmax)
    _time_axis(ax)
    ax.set_ylabel("time per all-reduce (log scale)")


def _residual_panel(ax: Axes, m: Measurement, fit: AlphaBetaFit) -> None:
    """Measured / model for each size on a log axis, 1 the exact fit."""
    ratio = 1.0 + fit.residuals
    ax.axhline(1.0, color=_MODEL, lw=1)
    _measured(ax, m, fit.used, ratio, 4)
    ax.set_yscale("log", base=2)
    span = max(2.0, float(np.max(np.maximum(ratio, 1 / ratio))) * 1.3)
    ax.set_ylim(1 / span, span)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("measured / model\n(log scale)")
    ax.set_xlabel(_SIZE_AXIS)
    ax.grid(True, which="major", alpha=0.3)
    _bytes_axis(ax, float(m.bytes.min()), float(max(m.bytes.max(), PREFILL_BYTES)))


def measured_vs_model(
    measurement: Measurement, fit: AlphaBetaFit, *, pingpong_latency: float | None = None
) -> Figure:
    """Measured all-reduce time per size (log-log) against ``alpha + m/B``, with residuals.

    Top: medians with their p10-p90 spread (filled: sizes the fit used), the
    line, its asymptotes, the crossover and the lesson's two messages.
    Bottom: measured / model. Titled with the measurement's label (what, where, when).

    Parameters
    ----------
    measurement : Measurement
    fit : AlphaBetaFit
        A fit of it (:func:`lesson_lib.lab.fit.fit_measurement`).
    pingpong_latency : float, optional
        One-way latency from ``mpi4py.bench pingpong``, seconds, drawn beside ``alpha``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, top, bottom = two_panels(7.4, sharex=True, height_ratios=[3, 1.1])
    _fit_panel(top, measurement, fit, pingpong_latency)
    top.set_title(textwrap.fill(measurement.label(), 52), fontsize=10, loc="left")
    top.grid(True, which="major", alpha=0.3)
    _residual_panel(bottom, measurement, fit)
    # The key of the top panel sits under the figure: inside, it hid measured points.
    handles, labels = top.get_legend_handles_labels()
    legend_below(bottom, -0.36, handles=handles, labels=labels)
    return fig


def compare_ranks(measurements: Sequence[Measurement]) -> Figure:
    """All-reduce time per size for several rank counts on one log-log plot.

    Parameters
    ----------
    measurements : sequence of Measurement
        For example the 2-rank and the 4-rank sweep; an oversubscribed one's
        legend entry names the machine's usable cores.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not measurements:
        raise ValueError("measurements must hold at least one Measurement")
    fig, ax = new_figure(height=4.4)
    lo = min(float(m.bytes.min()) for m in measurements)
    hi = max(float(m.bytes.max()) for m in measurements)
    for i, m in enumerate(measurements):
        color = _SERIES[i % len(_SERIES)]
        label = f"{m.ranks} ranks"
        if m.machine.get("oversubscribed"):
            label += f" (oversubscribed: {m.machine.get('usable_cores', '?')} cores)"
        ax.errorbar(m.bytes, m.median_s, yerr=_spread(m), fmt="o-", color=color, ms=4, lw=1,
                    alpha=0.9, label=label)  # fmt: skip
    _mark_sizes(ax, lo, hi)
    _time_axis(ax)
    bottom, top = ax.get_ylim()
    ax.set_ylim(bottom, top * 6)  # room above the data for the size labels
    _bytes_axis(ax, lo, hi)
    ax.set_xlabel(_SIZE_AXIS)
    ax.set_ylabel("time per all-reduce (median; log scale)")
    # Under the axes: inside, the key hid measured points wherever it sat.
    legend_below(ax, -0.14)
    return fig
