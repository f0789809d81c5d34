"""Figures of the prefill chapter: the alpha-beta curve with both messages, and where time goes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

from lesson_lib.figures._style import (
    NEUTRALS,
    ROLE_COLORS,
    fabric_color,
    new_figure,
    note,
    two_panels,
)
from lesson_lib.model._validate import require_int
from lesson_lib.model.collectives import allreduce_time, ring_allreduce_factor
from lesson_lib.model.prefill import per_token, place_on_curve, prefill_message_bytes
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import StepBreakdown
from lesson_lib.model.units import MS, format_bytes, format_rate, format_seconds

#: Payload range of the curve, bytes; 64 B to 1 GiB.
PAYLOAD_RANGE: tuple[float, float] = (2.0**6, 2.0**30)

#: Terms of a step, in drawing order; (StepBreakdown attribute, legend label, role colour).
TERMS: tuple[tuple[str, str, str], ...] = (
    ("compute_s", "compute (roofline)", "compute"),
    ("latency_s", "all-reduce latency", "latency"),
    ("bandwidth_s", "all-reduce bytes / bandwidth", "bandwidth"),
)

#: Colours of fabrics other than the lesson's two, darkest first.
_EXTRA_COLORS = (NEUTRALS[4], NEUTRALS[3], NEUTRALS[2])


def _draw_alpha_beta(ax: Axes, fabrics: Sequence[Fabric], n: int) -> None:
    """Each fabric's alpha-beta curve on ``ax`` (log-log), the lesson's two messages marked."""
    n = require_int("n", n, minimum=2)
    if len(fabrics) == 0:
        raise ValueError("fabrics must hold at least one Fabric")
    messages, fontsize = _messages(), 10
    low, high = PAYLOAD_RANGE
    top_exp = int(np.log2(high))
    sizes = np.geomspace(low, high, 200)
    factor = ring_allreduce_factor(n)
    for i, fabric in enumerate(fabrics):
        color = fabric_color(fabric, i, _EXTRA_COLORS)
        times = np.array([allreduce_time(float(m), n, fabric) for m in sizes])
        ax.plot(sizes, times, color=color, lw=2.2, label=fabric.name)
        point = place_on_curve(low, n, fabric)
        ax.axhline(point.latency_s, color=color, lw=1, ls=":")
        ax.plot(sizes, factor * sizes / fabric.bandwidth, color=color, lw=1, ls="--")
        cross = (point.crossover_bytes, 2 * point.latency_s)
        ax.plot(*cross, marker="D", ms=8, color=color, markeredgecolor="black", zorder=5)
        # Binary first, as the ticks are; the decimal value is the text's. Left of the
        # diamond and a little up: above its own curve, left of the other fabric's
        # bandwidth asymptote, below the next latency asymptote, right of decode's line.
        crossover = f"{format_bytes(cross[0], 'MiB')}\n= {format_bytes(cross[0], 'MB')}"
        note(ax, crossover, cross, -30, 8, ha="right", va="center", fontsize=fontsize,
             color="black")  # fmt: skip
        for _label, payload in messages:
            ax.plot([payload], [allreduce_time(payload, n, fabric)], "o", color=color,
                    markeredgecolor="black", zorder=6)  # fmt: skip
    middle = np.sqrt(low * high) * 64
    for i, (label, payload) in enumerate(messages):
        kind = label.partition(":")[0]
        colour = ROLE_COLORS[kind] if kind in ("decode", "prefill") else ROLE_COLORS["free"]
        ax.axvline(payload, color=colour, lw=1.2, ls="-.", zorder=1)
        right_side = payload < middle
        note(ax, label, (payload, 1.0), 4 if right_side else -4, -4 - 3.2 * fontsize * i,
             xycoords=("data", "axes fraction"), ha="left" if right_side else "right", va="top",
             fontsize=fontsize)  # fmt: skip
    ax.plot([], [], color="black", lw=1, ls=":", label="latency term alone (alpha)")
    ax.plot([], [], color="black", lw=1, ls="--", label="bandwidth term alone")
    ax.plot([], [], "D", color="white", markeredgecolor="black", label="crossover (terms equal)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    lowest = min(allreduce_time(low, n, f) for f in fabrics)
    highest = max(allreduce_time(high, n, f) for f in fabrics)
    ax.set_ylim(lowest / 10, highest * 4)
    # Labelled: the range's start and each power of 1024 (1 KiB, 1 MiB, 1 GiB), far from both
    # messages (10 KiB, 40 MiB), whose own lines are labelled; a tick beside a line reads as its
    # size. An unlabelled tick mark at every power of two.
    labelled = [low, *(2.0**k for k in range(10, top_exp + 1, 10))]
    ax.xaxis.set_major_locator(FixedLocator(labelled))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda v, _: format_bytes(v, system="binary", decimals=0))
    )
    ax.xaxis.set_minor_locator(FixedLocator([2.0**k for k in range(6, top_exp + 1)]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", which="minor", length=4)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_seconds(v, decimals=0)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("payload of one all-reduce (bytes, binary units, log scale)")
    ax.set_ylabel("time of one all-reduce (log scale)")


def _messages() -> list[tuple[str, float]]:
    prompt = prefill_message_bytes(MODEL, PROMPT_TOKENS)
    decode = MODEL.hidden_vector_bytes
    return [
        (f"decode: 1 vector\n{format_bytes(decode, 'KiB')}", decode),
        (f"prefill: {PROMPT_TOKENS:,} vectors\n{format_bytes(prompt, 'MiB')}", prompt),
    ]


def alpha_beta_figure(fabrics: Sequence[Fabric] = (FAST, SLOW), n: int = 2) -> Figure:
    """One all-reduce's time against its payload (log-log), the decode and prefill messages marked.

    Parameters
    ----------
    fabrics : sequence of Fabric, default (FAST, SLOW)
        One curve each, with its asymptotes and crossover.
    n : int, default 2
        Ranks; with two the curve is exactly ``alpha + m / B``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = new_figure(height=5.6, margins=(0.1574, 0.2183, 0.9552, 0.9569))
    _draw_alpha_beta(ax, fabrics, n)
    ax.set_title(f"Alpha-beta model of one all-reduce, ring of {n}", fontsize=11)
    # Under the axes: inside, the key would cover the decode message's line and label.
    fig.legend(loc="outside lower center", ncols=2, fontsize=10, frameon=False)
    return fig


def _draw_breakdown(ax: Axes, steps: Sequence[StepBreakdown], labels: Sequence[str]) -> None:
    y = np.arange(len(steps))[::-1]
    left = np.zeros(len(steps))
    for attr, label, role in TERMS:
        values = np.array([getattr(s, attr) for s in steps]) / MS
        ax.barh(y, values, left=left, color=ROLE_COLORS[role], label=label, height=0.6)
        left += values
    for yi, step, total in zip(y, steps, left, strict=True):
        note(ax, f"{format_seconds(step.total_s, 'ms')}", (total, yi), 4, 0, va="center")
    ax.set_yticks(y, labels)
    ax.set_xlim(0, left.max() * 1.55)  # room for the longest total's label
    ax.grid(False, axis="y")


def prefill_breakdown_figure(fabrics: Sequence[Fabric] = (FAST, SLOW), n: int = 4) -> Figure:
    """Compute, latency and bandwidth of a decoded token (top) and of the lesson's prompt, in ms.

    Parameters
    ----------
    fabrics : sequence of Fabric, default (FAST, SLOW)
        One bar per fabric in each panel.
    n : int, default 4
        Tensor-parallel degree (>= 2).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes, each on its own scale.
    """
    n = require_int("n", n, minimum=2)
    if len(fabrics) == 0:
        raise ValueError("fabrics must hold at least one Fabric")
    fig, ax_decode, ax_prefill = two_panels(
        5.2, ((0.4821, 0.6446, 0.9798, 0.9536), (0.4821, 0.1976, 0.9798, 0.5066))
    )
    labels = [f"{n} GPUs, {f.name}\n{format_rate(f.bandwidth)} per direction" for f in fabrics]
    per = [per_token(MODEL, GPU, f, n, PROMPT_TOKENS) for f in fabrics]
    _draw_breakdown(ax_decode, [p.decode for p in per], labels)
    _draw_breakdown(ax_prefill, [p.prefill for p in per], labels)
    ax_decode.set_title("decode: one token, bytes included", fontsize=11)
    ax_prefill.set_title(f"prefill: one {PROMPT_TOKENS:,}-token prompt", fontsize=11)
    for ax in (ax_decode, ax_prefill):
        ax.set_xlabel("time (ms)")
        ax.grid(True, axis="x", alpha=0.3)
    handles, names = ax_prefill.get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=2, fontsize=10, frameon=False)
    return fig
