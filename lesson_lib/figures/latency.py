"""Figures of the latency chapter: one decoded token as a chain, where its time goes, and how it scales."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from lesson_lib.figures._style import (
    FIGURE_WIDTH_IN,
    NEUTRALS,
    ROLE_COLORS,
    fabric_color,
    legend_below,
    new_figure,
    two_panels,
)
from lesson_lib.model._validate import require_number
from lesson_lib.model.collectives import allreduce_latency
from lesson_lib.model.latency import (
    SEGMENT_KINDS,
    decode_lines,
    speedup_curve,
    speedup_limit,
    token_timeline,
)
from lesson_lib.model.layout import check_layout
from lesson_lib.model.published import FABRIC_CLASSES, PUBLISHED
from lesson_lib.model.specimen import FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import MS, US, format_count, format_ratio, format_seconds

_TERMS = (
    ("compute_s", "compute (weights / HBM)", "compute"),
    ("latency_s", "all-reduce latency", "latency"),
    ("bandwidth_s", "all-reduce bytes / fabric", "bandwidth"),
)
_CLASS_MARKERS = dict(zip(FABRIC_CLASSES, ("o", "s", "^"), strict=True))
_CLASS_COLORS = dict(
    zip(FABRIC_CLASSES, (ROLE_COLORS[r] for r in ("fast", "slow", "network")), strict=True)
)

#: Largest GPU count the per-hop ring is drawn to. The fit's own measurements
#: stop at 8 GPUs, one NVLink node, and past a node the ring leaves NVLink.
PER_HOP_MAX_N: int = 8

#: The one measurement series the per-hop ring is fitted to, NCCL forced to a one-channel ring
#: (nccl-tests issue 123). Every other record ran other settings (the default algorithm, CUDA
#: graphs, tuned kernels) and is drawn hollow, not as a point of the same trend.
PER_HOP_FIT_SOURCE: str = "https://github.com/NVIDIA/nccl-tests/issues/123"


def _fabric_color(fabric: Fabric, index: int) -> str:
    # The per-hop ring is the fast fabric with another latency model: its colour, drawn dashed.
    return ROLE_COLORS["fast"] if fabric == FAST_RING else fabric_color(fabric, index)


#: Narrowest :func:`breakdown_figure` in inches, at which its labels and totals still fit.
BREAKDOWN_MIN_WIDTH_IN: float = 4.0
#: Width in inches under which :func:`breakdown_figure` writes each bar's label on two lines.
_WRAP_UNDER_IN = 4.6


def breakdown_figure(
    *,
    include_bandwidth: bool = True,
    title: str | None = "Time per decoded token:\ncompute shrinks with N, latency does not",
    width: float = FIGURE_WIDTH_IN,
) -> Figure:
    """Stacked bars: compute, latency and bandwidth terms of the lesson's three lines, in ms.

    Parameters
    ----------
    include_bandwidth : bool, default True
        Add the wire-bytes term (:func:`lesson_lib.model.latency.decode_lines`).
    title : str or None
    width : float, default :data:`~lesson_lib.figures._style.FIGURE_WIDTH_IN`
        Inches, at least :data:`BREAKDOWN_MIN_WIDTH_IN`. Narrower, the figure is scaled down less
        on a phone: at 4.2 in its 10 pt text shows at 11 px in a 342 px column. Under 4.6 in each
        bar's label takes two lines.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; each bar ends with its total in ms and tokens/s.
    """
    width = require_number("width", width, minimum=BREAKDOWN_MIN_WIDTH_IN, unit="in")
    lines = [(ln.label, ln.step) for ln in decode_lines(include_bandwidth=include_bandwidth)]
    wrap = width < _WRAP_UNDER_IN
    if wrap:  # "4 GPUs,\nslow fabric"
        lines = [(label.replace(", ", ",\n"), step) for label, step in lines]
    height = 0.7 * len(lines) + 1.9
    margins = None
    if not include_bandwidth:
        # The book's bars (no bandwidth term): fixed margins, in inches of what they hold: the
        # labels on the left (one line or two), the tick labels, x label and key below, the title.
        labels_in = 0.9 if wrap else 1.4688
        top = 0.4396 if title else 0.0416
        margins = (labels_in / width, 0.8144 / height, 1 - 0.0418 / width, 1 - top / height)
    fig, ax = new_figure(width, height, margins=margins)
    ys = np.arange(len(lines))
    left = np.zeros(len(lines))
    for attr, label, role in _TERMS:
        values = np.array([getattr(step, attr) / MS for _, step in lines])
        if not values.any():  # a term left out: no empty key
            continue
        ax.barh(ys, values, left=left, color=ROLE_COLORS[role], label=label, edgecolor="white")
        left += values
    longest = left.max()
    for y, (_, step) in zip(ys, lines, strict=True):
        text = f"{format_seconds(step.total_s, 'ms')}\n{format_count(step.tokens_per_s)} tokens/s"
        ax.text(step.total_s / MS + 0.015 * longest, y, text, va="center", fontsize=10)
    ax.set_yticks(ys, [label for label, _ in lines])
    ax.invert_yaxis()
    ax.set_xlim(0, longest * 1.4)
    ax.set_xlabel("time per decoded token (ms)")
    ax.grid(False, axis="y")
    # Narrow, the key's columns closer (2 em apart by default), and three entries one a row.
    terms = len(ax.get_legend_handles_labels()[0])
    fig.legend(loc="outside lower center", ncols=1 if wrap and terms > 2 else 2, fontsize=10,
               frameon=False, columnspacing=1.0 if wrap else 2.0)  # fmt: skip
    if title:
        # y=1.0: no x tick labels on top, so matplotlib's search for them can be skipped.
        ax.set_title(title, fontsize=11, y=1.0)
    return fig


def speedup_curves_figure() -> Figure:
    """Decode speed-up over one GPU against 1 to 16 GPUs, on the fast and the slow fabric.

    Dashed: each fabric's ceiling (:func:`lesson_lib.model.latency.speedup_limit`); dotted: perfect
    scaling; hollow: degrees :func:`lesson_lib.model.layout.check_layout` refuses for the specimen.

    Returns
    -------
    matplotlib.figure.Figure
    """
    ns = list(range(1, 17))
    valid = np.array([not check_layout(MODEL, n) for n in ns])
    fig, ax = new_figure(FIGURE_WIDTH_IN, 4.6, margins=(0.1015, 0.1036, 0.9913, 0.9044))
    ax.plot(ns, ns, ls=":", color=ROLE_COLORS["free"], label="perfect scaling (N x)")
    for i, fabric in enumerate((FAST, SLOW)):
        colour = _fabric_color(fabric, i)
        curve = np.asarray(speedup_curve(MODEL, GPU, fabric, ns))
        ax.plot(ns, curve, color=colour, label=fabric.name)
        for shown, face in ((valid, colour), (~valid, "white")):
            ax.plot(np.array(ns)[shown], curve[shown], "o", ms=5, color=colour, mfc=face)
        limit = speedup_limit(MODEL, GPU, fabric)
        ax.axhline(limit, color=colour, ls="--", lw=1)
        ceiling = f"ceiling {format_ratio(limit, decimals=1)}"
        # The fast ceiling's label at the left, clear of the diagonal it crosses at the right.
        x, ha = (min(ns), "left") if limit > max(ns) / 2 else (max(ns), "right")
        ax.text(x, limit, ceiling, color=colour, ha=ha, va="bottom", fontsize=10)
    ax.set_xlim(min(ns) - 0.3, max(ns) + 0.3)
    ax.set_ylim(0, max(ns) + 0.5)
    ax.set_xlabel("GPUs (tensor-parallel degree N)")
    ax.set_ylabel("decode speed-up over 1 GPU (x)")
    ax.set_title(
        "More GPUs buy less and less:\nthe latency term does not shrink", fontsize=11, y=1.0
    )  # y=1.0: see breakdown_figure
    hollow = "hollow: N the specimen cannot be split over"
    ax.plot([], [], "o", color=NEUTRALS[3], mfc="white", label=hollow)
    # Under the fast ceiling and above the diagonal: the one empty corner.
    ax.legend(loc="upper left", fontsize=10, framealpha=0.95, bbox_to_anchor=(0.0, 0.74))
    return fig


def fixed_vs_hop_figure() -> Figure:
    """Two stacked panels: latency per all-reduce against N, and the 2 -> 4 GPU step under both models.

    Top: the fast fabric's fixed latency and the per-hop ring (``FAST_RING``) to 16
    GPUs, the published measurements of up to 16 ranks, the slow fabric for scale.
    Bottom: time per token on 2 and 4 GPUs under each model, with the speed-up.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, top, bottom = two_panels(
        9.6,
        ((0.1015, 0.5631, 0.9918, 0.9749), (0.1015, 0.0636, 0.9918, 0.2803)),
        height_ratios=[1.9, 1],
    )
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    _latency_panel(top)
    _doubling_panel(bottom)
    return fig


def _latency_panel(ax: Axes, max_n: int = 16) -> None:
    """Latency per all-reduce against N: the fixed and per-hop models and the published points."""
    ns = np.arange(2, max_n + 1)
    # The per-hop ring stops where its fit's measurements stop (one node).
    ring_ns = ns[ns <= PER_HOP_MAX_N]
    hops = (
        f"per hop, to {PER_HOP_MAX_N} GPUs (one node):\n"
        f"{format_seconds(FAST_RING.latency, 'us')} + 2(N-1) x "
        f"{format_seconds(FAST_RING.hop_latency, 'us', decimals=3)}"
    )
    for fabric, label, xs, style in (
        (FAST, f"fixed: {FAST.name}", ns, "-"),
        (FAST_RING, hops, ring_ns, "--"),
        (SLOW, f"fixed: {SLOW.name}", ns, "-"),
    ):
        lat = [allreduce_latency(int(n), fabric) / US for n in xs]
        ax.plot(xs, lat, color=_fabric_color(fabric, 0), lw=2, ls=style, label=label)
    shown = set()
    for r in PUBLISHED:
        if r.ranks > max_n:
            continue
        cls = r.fabric_class
        fitted = r.source == PER_HOP_FIT_SOURCE
        kind = "one-channel ring, the per-hop fit" if fitted else "other settings"
        label = f"published, {cls}: {kind}" if (cls, fitted) not in shown else None
        ax.plot(r.ranks, r.latency_s / US, marker=_CLASS_MARKERS[cls], ls="none", ms=7,
                mfc=_CLASS_COLORS[cls] if fitted else "none", mec=_CLASS_COLORS[cls], mew=1.6,
                label=label)  # fmt: skip
        shown.add((cls, fitted))
    ax.set_xlabel("GPUs in the all-reduce (N)")
    ax.set_ylabel("time of one small all-reduce (us)")
    ax.set_xlim(1.5, max_n + 0.5)
    ax.set_ylim(0, None)
    ax.set_title("Latency per all-reduce: assumed and reported", fontsize=11, y=1.0)
    legend_below(ax, -0.16, ncols=1)


def _doubling_panel(ax: Axes) -> None:
    """Time per token on 2 and 4 GPUs under the fixed and the per-hop model, with the speed-up."""
    groups = (("fixed latency", FAST), ("latency grows per hop", FAST_RING))
    step = functools.partial(decode_step, MODEL, GPU, include_bandwidth=False)  # (fabric, n)
    width = 0.38
    for j, n in enumerate((2, 4)):
        times = [step(fab, n).total_s / MS for _, fab in groups]
        xs = np.arange(len(groups)) + (j - 0.5) * width
        bars = ax.bar(xs, times, width, color=(NEUTRALS[1], NEUTRALS[3])[j], label=f"{n} GPUs")
        ax.bar_label(bars, [format_seconds(t * MS, "ms") for t in times], fontsize=10)
    for i, (_, fab) in enumerate(groups):
        two, four = step(fab, 2), step(fab, 4)
        ax.text(i, two.total_s / MS * 1.12, f"2 -> 4: {format_ratio(speedup(two, four))}",
                ha="center", fontsize=10, weight="bold")  # fmt: skip
    ax.set_xticks(np.arange(len(groups)), [g[0] for g in groups])
    ax.set_ylabel("time per decoded token (ms)")
    ax.set_ylim(0, step(FAST, 2).total_s / MS * 1.3)
    ax.set_title("Doubling from 2 to 4 GPUs under each model", fontsize=11, y=1.0)
    legend_below(ax, -0.12, ncols=2)
    ax.grid(False, axis="x")


_KIND_LABELS = {
    "compute": "compute slice",
    "latency": "waiting on the all-reduce (latency)",
    "bandwidth": "the all-reduce's bytes",
}
#: Label, fabric and tensor-parallel degree of each timeline (the specimen's model and card).
_TIMELINES: tuple[tuple[str, Fabric, int], ...] = (
    ("2 GPUs, fast fabric", FAST, 2),
    ("4 GPUs, fast fabric", FAST, 4),
    ("4 GPUs, slow fabric", SLOW, 4),
)


def token_timeline_figure() -> Figure:
    """The first four all-reduces (two layers) of a decoded token on each of the lesson's lines.

    Returns
    -------
    matplotlib.figure.Figure
        Compute slices and all-reduce waits (us), each line labelled with its token's time.
    """
    fig, ax = new_figure(FIGURE_WIDTH_IN, 4.2, margins=(0.288, 0.1609, 0.9918, 0.859))
    _timelines(ax, _TIMELINES, 4)
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(_KIND_LABELS[k]) for k in SEGMENT_KINDS if _KIND_LABELS[k] in labels]
    fig.legend([handles[i] for i in order], [labels[i] for i in order],
               loc="outside upper center", ncol=1, fontsize=10, frameon=False)  # fmt: skip
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _timelines(ax: Axes, lines: Sequence[tuple[str, Fabric, int]], allreduces: int) -> None:
    """Each line's compute slices and all-reduce waits, labelled with its token's time."""
    seen: set[str] = set()
    longest = 0.0
    for row, (_label, fabric, n) in enumerate(lines):
        # Bytes left out, as in the breakdown: the chapter adds them once, at the end.
        whole = decode_step(MODEL, GPU, fabric, n, include_bandwidth=False).total_s
        segments = token_timeline(
            MODEL, GPU, fabric, n, allreduces=allreduces, include_bandwidth=False
        )
        for seg in (s for s in segments if s.duration_s > 0):
            label = None if seg.kind in seen else _KIND_LABELS[seg.kind]
            ax.barh(row, seg.duration_s / US, left=seg.start_s / US, color=ROLE_COLORS[seg.kind],
                    edgecolor="white", height=0.6, label=label)  # fmt: skip
            seen.add(seg.kind)
        end = sum(s.duration_s for s in segments)
        longest = max(longest, end / US)
        total = f"repeated x{MODEL.allreduces_per_token // allreduces}:\n"
        total += f"{format_seconds(whole, 'ms')} per token"
        ax.text(end / US + 4, row, total, va="center", fontsize=10)
    ax.set_yticks(range(len(lines)), [label for label, _, _ in lines], fontsize=10)
    ax.invert_yaxis()
    ax.set_xlabel(
        f"time from the token's start (us),\nfirst {allreduces} of its "
        f"{MODEL.allreduces_per_token} all-reduces",
        fontsize=10,
    )
    ax.set_xlim(-0.02 * longest, longest * 1.7)  # room for the totals after the bars
