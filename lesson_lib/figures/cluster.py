"""Figure of the cluster chapter: where each GPU's share of the model sits.

:func:`layout_figure` draws one or more :class:`~lesson_lib.model.cluster_plan.ClusterPlan`
one above the other: nodes as boxes, GPUs inside coloured by pipeline stage, each
tensor-parallel group outlined (in the fast fabric's colour inside a node on
NVLink, in the network's and dashed when it spans nodes), pipeline hand-offs as arrows and data-parallel
replicas joined by dashed arcs, above the network that links the nodes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch, Rectangle

from lesson_lib.figures._style import (
    FIGURE_WIDTH_IN,
    INK,
    NEUTRALS,
    NODE_FILL,
    ROLE_COLORS,
    draw_key,
)
from lesson_lib.model.cluster_plan import ClusterPlan, GpuSlot
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.units import format_count

#: Fill of the GPUs of each pipeline stage, cycling past the fourth.
#: Greys, not colours: a stage is a place in the pipeline, not one of the
#: book's meanings, and the colours are kept for the links.
STAGE_COLORS: tuple[str, ...] = NEUTRALS[:4]
#: Outline of a TP group inside a node (NVLink) and across nodes (network).
TP_NVLINK_COLOR = ROLE_COLORS["fast"]
TP_NETWORK_COLOR = ROLE_COLORS["network"]

_CELL = 1.0  # one GPU cell, data units
_GPU = 0.78  # drawn square inside the cell
_PAD = 0.35  # node box padding
_FOOT = 0.55  # extra room at the bottom of a node box for its name
_GAP = 1.3  # between node boxes
_MAX_COLS = 4


def _cols(plan: ClusterPlan) -> int:
    return min(plan.gpus_per_node, _MAX_COLS)


def _rows(plan: ClusterPlan) -> int:
    return math.ceil(plan.gpus_per_node / _cols(plan))


def _node_x(plan: ClusterPlan, node: int) -> float:
    return node * (_cols(plan) * _CELL + 2 * _PAD + _GAP)


def _cell(plan: ClusterPlan, node: int, slot: int) -> tuple[float, float]:
    """Lower-left corner of a GPU cell; row 0 is the top row."""
    col, row = slot % _cols(plan), slot // _cols(plan)
    x = _node_x(plan, node) + _PAD + col * _CELL
    y = (_rows(plan) - 1 - row) * _CELL
    return x, y


def _center(plan: ClusterPlan, slots: Sequence[GpuSlot]) -> tuple[float, float]:
    points = [_cell(plan, s.node, s.slot) for s in slots]
    return (
        float(np.mean([p[0] for p in points])) + _CELL / 2,
        float(np.mean([p[1] for p in points])) + _CELL / 2,
    )


def _edge(plan: ClusterPlan, slots: Sequence[GpuSlot], side: str) -> tuple[float, float]:
    """Middle of the ``"top"``, ``"left"`` or ``"right"`` edge of a group's cells."""
    x, y = _center(plan, slots)
    xs = [_cell(plan, s.node, s.slot)[0] for s in slots]
    ys = [_cell(plan, s.node, s.slot)[1] for s in slots]
    if side == "left":
        return min(xs), y
    if side == "right":
        return max(xs) + _CELL, y
    return x, max(ys) + _CELL


def _pp_ends(
    plan: ClusterPlan, here: Sequence[GpuSlot], there: Sequence[GpuSlot]
) -> tuple[tuple[float, float], tuple[float, float], float]:
    """Ends and curvature of a PP arrow: straight between side-by-side groups, else an arc."""
    same_row = len({_cell(plan, s.node, s.slot)[1] for s in [*here, *there]}) == 1
    if same_row and here[0].node < there[0].node:
        return _edge(plan, here, "right"), _edge(plan, there, "left"), 0.0
    a, b = _edge(plan, here, "top"), _edge(plan, there, "top")
    if abs(a[0] - b[0]) < _CELL:  # stacked in one node: loop out on the right
        return _edge(plan, here, "right"), _edge(plan, there, "right"), -0.6
    return a, b, -0.3


def _groups(plan: ClusterPlan) -> dict[tuple[int, int], list[GpuSlot]]:
    """The placed GPUs by (replica, stage): one TP group each."""
    groups: dict[tuple[int, int], list[GpuSlot]] = {}
    for s in plan.placement:
        groups.setdefault((s.replica, s.stage), []).append(s)
    return groups


def _group_spans(plan: ClusterPlan) -> list[bool]:
    """For each placed TP group, whether it spans more than one node."""
    return [len({s.node for s in g}) > 1 for g in _groups(plan).values()]


def _dp_links(plan: ClusterPlan) -> list[tuple[list[GpuSlot], list[GpuSlot]]]:
    """Stage-0 groups of consecutive replicas that sit on different nodes."""
    groups = _groups(plan)
    return [
        (groups[(d, 0)], groups[(d + 1, 0)])
        for d in range(plan.dp - 1)
        if groups[(d, 0)][0].node != groups[(d + 1, 0)][0].node
    ]


def _label_size(plan: ClusterPlan) -> float:
    """Base size of a panel's labels: a GPU's label is one point smaller.

    Up to eight GPUs every label is at least 10 pt, legible at the book's
    column width when a panel takes the whole width.
    """
    return 11.0 if plan.gpus <= 8 else 8.5 if plan.gpus <= 16 else 6.5


def _gpu_text(plan: ClusterPlan, s: GpuSlot) -> str:
    parts = [f"TP{s.tp_rank}"]
    if plan.pp > 1:
        parts.append(f"S{s.stage}")
    if plan.dp > 1:
        parts.append(f"R{s.replica}")
    return "\n".join(parts)


def draw_layout(ax: Axes, plan: ClusterPlan, title: str | None = None) -> None:
    """Draw one plan on ``ax``: nodes, GPUs, TP groups, PP and DP links, network.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; its axis lines are turned off.
    plan : ClusterPlan
        The layout.
    title : str, optional
        Panel title; default the plan's label and its time per token.
    """
    size = _label_size(plan)
    rows = _rows(plan)
    top = rows * _CELL
    for node in range(plan.nodes):
        x0 = _node_x(plan, node)
        width = _cols(plan) * _CELL + 2 * _PAD
        ax.add_patch(
            FancyBboxPatch(
                (x0, -_PAD - _FOOT),
                width,
                top + 2 * _PAD + _FOOT,
                boxstyle="round,pad=0,rounding_size=0.2",
                facecolor=NODE_FILL,
                edgecolor="black",
                lw=1.2,
            )
        )
        ax.text(
            x0 + 0.15, -_PAD - _FOOT + 0.12, f"node {node}", ha="left", va="bottom",
            fontsize=size + 1, fontweight="bold",
        )  # fmt: skip

    used = {(s.node, s.slot): s for s in plan.placement}
    for node in range(plan.nodes):
        for slot in range(plan.gpus_per_node):
            x, y = _cell(plan, node, slot)
            inset = (_CELL - _GPU) / 2
            s = used.get((node, slot))
            if s is None:
                ax.add_patch(
                    Rectangle(
                        (x + inset, y + inset),
                        _GPU,
                        _GPU,
                        facecolor="white",
                        edgecolor=ROLE_COLORS["free"],
                        hatch="///",
                    )
                )
                continue
            ax.add_patch(
                Rectangle(
                    (x + inset, y + inset),
                    _GPU,
                    _GPU,
                    facecolor=STAGE_COLORS[s.stage % len(STAGE_COLORS)],
                    edgecolor="black",
                    lw=0.6,
                )
            )
            ax.text(
                x + _CELL / 2, y + _CELL / 2, _gpu_text(plan, s), ha="center", va="center",
                fontsize=size - 1, linespacing=1.0,
            )  # fmt: skip

    groups = _groups(plan)
    for group in groups.values():
        if plan.tp == 1:
            continue
        spans = len({s.node for s in group}) > 1
        color = TP_NETWORK_COLOR if spans else TP_NVLINK_COLOR
        runs: dict[tuple[int, int], list[GpuSlot]] = {}
        for s in group:
            runs.setdefault((s.node, s.slot // _cols(plan)), []).append(s)
        for run in runs.values():
            xs = [_cell(plan, s.node, s.slot)[0] for s in run]
            y = _cell(plan, run[0].node, run[0].slot)[1]
            ax.add_patch(
                Rectangle(
                    (min(xs) + 0.04, y + 0.04),
                    max(xs) - min(xs) + _CELL - 0.08,
                    _CELL - 0.08,
                    fill=False,
                    edgecolor=color,
                    lw=2.2,
                    ls="--" if spans else "-",
                )
            )
        if spans:
            ends = [_center(plan, run) for run in runs.values()]
            ax.plot(*zip(*ends, strict=True), color=TP_NETWORK_COLOR, lw=1.5, ls="--")

    for d in range(plan.dp):
        for p in range(plan.pp - 1):
            if (d, p) not in groups or (d, p + 1) not in groups:
                continue
            a, b, rad = _pp_ends(plan, groups[(d, p)], groups[(d, p + 1)])
            across = any(
                x.node != y.node for x, y in zip(groups[(d, p)], groups[(d, p + 1)], strict=True)
            )
            ax.add_patch(
                FancyArrowPatch(
                    a, b, arrowstyle="-|>", mutation_scale=12, color="black",
                    lw=2.0 if across else 1.2, connectionstyle=f"arc3,rad={rad}", zorder=4,
                )
            )  # fmt: skip
    for here, there in _dp_links(plan):
        ax.add_patch(
            FancyArrowPatch(
                _edge(plan, here, "top"), _edge(plan, there, "top"), arrowstyle="-",
                color=INK, lw=1.2, ls=(0, (2, 2)),
                connectionstyle="arc3,rad=-0.45", zorder=3,
            )
        )  # fmt: skip

    right = _node_x(plan, plan.nodes - 1) + _cols(plan) * _CELL + 2 * _PAD
    if plan.nodes > 1:
        band = -_PAD - _FOOT - 0.9
        ax.add_patch(
            Rectangle(
                (0, band - 0.45), right, 0.45, facecolor=ROLE_COLORS["network"], edgecolor="none"
            )
        )
        ax.text(
            right / 2,
            band - 0.225,
            "network (InfiniBand / RoCE)",
            ha="center",
            va="center",
            fontsize=size - 0.5,
            color="white",
            fontweight="bold",
        )
        for node in range(plan.nodes):
            cx = _node_x(plan, node) + _cols(plan) * _CELL / 2 + _PAD
            ax.plot([cx, cx], [-_PAD - _FOOT, band], color=ROLE_COLORS["network"], lw=3)
        bottom = band - 0.6
    else:
        bottom = -_PAD - _FOOT - 0.2
    ax.set_xlim(-0.2, right + 0.2)
    ax.set_ylim(bottom, top + _PAD + 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    if title is None:
        title = (
            f"{plan.label}\n{format_count(plan.sequences_total)} sequences in flight, "
            f"{format_count(plan.tokens_per_s_total)} tokens/s in all"
        )
    # An explicit height skips matplotlib's search for tick labels in the way
    # (with the axis off there are none, but the search still makes ticks).
    ax.set_title(title, fontsize=size + 0.5, y=1.0)


def legend_handles(plans: Sequence[ClusterPlan]) -> list[Patch | Line2D]:
    """Legend entries for the elements the plans actually use.

    Parameters
    ----------
    plans : sequence of ClusterPlan
        The plans drawn.

    Returns
    -------
    list
        Matplotlib artists with labels.
    """
    stages = max(p.pp for p in plans)
    handles: list[Patch | Line2D] = []
    if stages > 1:
        # A plan without PP is all stage S0; say so, or its GPUs look mislabelled.
        single = any(p.pp == 1 for p in plans)
        handles += [
            Patch(facecolor=STAGE_COLORS[s % len(STAGE_COLORS)], edgecolor="black",
                  label=f"pipeline stage S{s}" + (" (every GPU without PP)" if s == 0 and single else ""))
            for s in range(min(stages, len(STAGE_COLORS)))
        ]  # fmt: skip
    spans = [span for p in plans if p.tp > 1 for span in _group_spans(p)]
    if not all(spans):
        handles.append(Line2D([], [], color=TP_NVLINK_COLOR, lw=2.2, label="TP group, NVLink"))
    if any(spans):
        handles.append(
            Line2D(
                [], [], color=TP_NETWORK_COLOR, lw=2.2, ls="--", label="TP group split by network"
            )
        )
    if stages > 1:
        handles.append(
            Line2D([], [], color="black", lw=2, marker=">", label="PP: 1 hidden vector per token")
        )
    if any(_dp_links(p) for p in plans):
        handles.append(
            Line2D([], [], color="black", lw=1.2, ls=(0, (2, 2)), label="DP: nothing per token")
        )
    if any(p.idle_gpus for p in plans):
        handles.append(
            Patch(facecolor="white", edgecolor=ROLE_COLORS["free"], hatch="///", label="idle GPU")
        )
    return handles


def recommended_plans() -> list[ClusterPlan]:
    """The rule applied to two nodes of four GPUs: TP 4 inside, PP 2 or DP 2 across.

    Returns
    -------
    list of ClusterPlan
        ``[TP 4 x PP 2, TP 4 x DP 2]`` on 2 nodes x 4 GPUs.
    """
    return [
        plan_cluster(gpus_per_node=4, nodes=2, tp=4, pp=2),
        plan_cluster(gpus_per_node=4, nodes=2, tp=4, pp=1),
    ]


def layout_figure(
    plans: Sequence[ClusterPlan] | None = None,
    titles: Sequence[str | None] | None = None,
    *,
    width: float | None = None,
    height: float = 2.9,
) -> Figure:
    """Draw plans one above the other with one shared key.

    Stacked, not side by side: each plan takes the whole width, so a plan of
    up to eight GPUs keeps its labels legible at the book's column width.

    Parameters
    ----------
    plans : sequence of ClusterPlan, optional
        Default :func:`recommended_plans`.
    titles : sequence of str or None, optional
        One per plan; ``None`` entries use the plan's label and time.
    width : float, optional
        Figure width in inches; default FIGURE_WIDTH_IN.
    height : float, default 2.9
        Height of each plan's panel, inches; the key adds its own rows.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per plan, top to bottom.

    Raises
    ------
    ValueError
        If ``plans`` is empty or ``titles`` has a different length.
    """
    plans = recommended_plans() if plans is None else list(plans)
    if not plans:
        raise ValueError("plans must hold at least one ClusterPlan")
    titles = [None] * len(plans) if titles is None else list(titles)
    if len(titles) != len(plans):
        raise ValueError(f"titles must have {len(plans)} entries (one per plan), got {len(titles)}")
    width = width or FIGURE_WIDTH_IN
    handles = legend_handles(plans)
    key_font = 10.0
    ncols = max(1, min(len(handles), int(width // 3.0)))
    key_rows = -(-len(handles) // ncols) if handles else 0
    key = (1.7 * key_rows + 0.8) * key_font / 72  # inches: rows of a draw_key, and a margin
    total = height * len(plans) + key
    # A bare Figure with fixed margins, not new_figure(): constrained layout
    # lets the titles of these equal-aspect axes run off the top.
    fig = Figure(figsize=(width, total))
    fig.subplots(len(plans), 1, squeeze=False)
    fig.subplots_adjust(left=0.01, right=0.99, top=1 - 0.05 / total, bottom=key / total, hspace=0.3)
    for ax, plan, title in zip(fig.axes, plans, titles, strict=True):
        draw_layout(ax, plan, title)
    if handles:
        # A key of known height, which the bottom margin above leaves room for.
        draw_key(
            fig, handles, x=0.5, y=0.15 / total, loc="lower center", ncols=ncols,
            fontsize=key_font,
        )  # fmt: skip
    return fig
