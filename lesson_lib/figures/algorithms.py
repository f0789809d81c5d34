"""Figures of the all-reduce algorithms: latency against N, time against message size."""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.figure import Figure

from lesson_lib.figures._style import FIGURE_WIDTH_IN, NEUTRALS, ROLE_COLORS, new_figure, note
from lesson_lib.model.algorithms import VLLM_ONE_STAGE_LIMITS, tie_payload
from lesson_lib.model.collectives import ALGORITHMS, allreduce_latency, allreduce_time
from lesson_lib.model.latency import allreduce_anatomy
from lesson_lib.model.specimen import FAST_RING, MODEL
from lesson_lib.model.units import US, KiB, format_seconds

#: One colour and marker per algorithm, the same in every figure.
ALGORITHM_STYLE: dict[str, tuple[str, str]] = {
    "ring": (ROLE_COLORS["ring"], "o"),
    "two_shot": (ROLE_COLORS["two_shot"], "s"),
    "one_shot": (ROLE_COLORS["one_shot"], "^"),
}


def latency_by_n_figure() -> Figure:
    """Latency of one small all-reduce against 2 to 16 GPUs, one line per algorithm.

    The wire is ``FAST_RING``, whose per-hop latency makes each step cost something.

    Returns
    -------
    matplotlib.figure.Figure
        One axes, microseconds against GPUs.
    """
    ns = list(range(2, 17))
    fig, ax = new_figure(FIGURE_WIDTH_IN, 4.6, margins=(0.1015, 0.2696, 0.9918, 0.9446))
    for name, algo in ALGORITHMS.items():
        color, marker = ALGORITHM_STYLE[name]
        ys = [allreduce_latency(n, FAST_RING, name) / US for n in ns]
        ax.plot(ns, ys, marker=marker, color=color, label=algo.description, lw=2, ms=5)
    ax.set_xlabel("GPUs taking part (N)")
    ax.set_ylabel("latency of one small all-reduce (us)")
    ax.set_ylim(0, None)
    ax.set_xticks([n for n in ns if n % 2 == 0])
    fig.legend(loc="outside lower center", fontsize=10, frameon=False)  # off the lines
    ax.set_title("Only the ring's latency grows with the number of GPUs")
    return fig


def time_by_size_figure() -> Figure:
    """Time of one all-reduce against its payload on 8 GPUs of ``FAST_RING``, a line per algorithm.

    Marks the decode message, the one-shot/two-shot tie and vLLM's one-stage limit.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log axes, microseconds against KiB.
    """
    fabric, n = FAST_RING, 8
    sizes = np.logspace(np.log10(1 * KiB), np.log10(64 * 2**20), 200)
    fig, ax = new_figure(FIGURE_WIDTH_IN, 4.8, margins=(0.1153, 0.2635, 0.9766, 0.901))
    for name, algo in ALGORITHMS.items():
        color, _ = ALGORITHM_STYLE[name]
        ys = [allreduce_time(s, n, fabric, name) / US for s in sizes]
        ax.loglog(sizes / KiB, ys, color=color, label=algo.description, lw=2)
    tie = tie_payload(fabric, n, "one_shot", "two_shot")
    vllm = next(limit for most, limit in VLLM_ONE_STAGE_LIMITS if n <= most)
    decode = MODEL.hidden_vector_bytes
    # Marks named beside their lines at the top, where no curve runs; the curves' key under axes.
    marks = (
        (decode, ROLE_COLORS["decode"], ":", "decode: one hidden vector", "left"),
        (tie, NEUTRALS[3], "--", "model: one-shot = two-shot", "right"),
        (vllm, NEUTRALS[3], "-.", "vLLM switches to two-stage", "left"),
    )
    for x, color, style, label, side in marks:
        ax.axvline(x / KiB, color=color, ls=style, lw=1.2)
        note(ax, label, (x / KiB, 0.98), 3 if side == "left" else -3, 0, rotation=90,
             xycoords=("data", "axes fraction"), ha=side, va="top", color=color)  # fmt: skip
    ax.set_xlabel("payload of one all-reduce (KiB, log scale)")
    ax.set_ylabel("time of one all-reduce (us, log scale)")
    fig.legend(loc="outside lower center", fontsize=10, frameon=False)
    ax.set_title(f"{n} GPUs: fewest steps win small messages,\nfewest bytes win large ones")
    return fig


#: Colour and hatch of each part of one all-reduce: the first three are
#: parts of its latency, told apart by hatching; the last is its bytes.
_ANATOMY_STYLE = (
    *((ROLE_COLORS["latency"], h) for h in ("", "//", "..")),
    (ROLE_COLORS["bandwidth"], ""),
)
#: The anatomy's axes (left, bottom, right, top): constrained layout's left, the rest set by hand
#: so the key under the axes (which that layout leaves out) fits the figure.
_ANATOMY_MARGINS = (0.2364, 0.677, 0.9918, 0.96)


def allreduce_anatomy_figure() -> Figure:
    """One 2-GPU all-reduce on the fast fabric split into parts: launch, fixed cost, hops, bytes.

    An illustration, not a measurement: the launch is an assumption and the rest a straight
    line fitted through published 2- and 4-GPU times
    (:func:`lesson_lib.model.latency.allreduce_anatomy`).

    Returns
    -------
    matplotlib.figure.Figure
        One stacked bar in microseconds, its parts named in the key below it.
    """
    fig, ax = new_figure(FIGURE_WIDTH_IN, 3.0, margins=_ANATOMY_MARGINS)
    left = 0.0
    parts = allreduce_anatomy(MODEL.hidden_vector_bytes)
    total = sum(p.seconds for p in parts)
    for part, (color, hatch) in zip(parts, _ANATOMY_STYLE, strict=True):
        width = part.seconds / US
        label = f"{part.label}: {format_seconds(part.seconds, 'us', decimals=2)}"
        if part.seconds < total / 200:  # under 2 px of the bar: the key says why it is not seen
            label += " (too thin to see)"
        # Wrapped: the longest label would widen the figure past a phone's column.
        label = textwrap.fill(label, 44)
        ax.barh(0, width, left=left, color=color, hatch=hatch, edgecolor="white", height=0.6,
                label=label)  # fmt: skip
        left += width
    ax.set_yticks([0], ["one all-reduce,\n2 GPUs, fast"], fontsize=10)
    ax.set_xlabel("microseconds (us)", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=1, fontsize=10, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    return fig
