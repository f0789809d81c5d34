"""Figure of the cluster chapter: nodes, GPUs by pipeline stage, TP groups, PP and DP links."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch, Rectangle
from matplotlib.path import Path
from matplotlib.patheffects import withStroke

from lesson_lib.figures._style import (
    FIGURE_WIDTH_IN,
    INK,
    NEUTRALS,
    NODE_FILL,
    ROLE_COLORS,
    draw_key,
)
from lesson_lib.figures.cluster_geometry import BAND, CELL, FOOT, GPU, PAD, ClusterGrid
from lesson_lib.model.cluster_plan import (
    ClusterPlan,
    GpuSlot,
    dp_neighbours,
    spans_nodes,
    stage_hand_offs,
    tp_groups,
)
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.units import format_count

#: Fill of the GPUs of each pipeline stage, cycling past the fourth. Greys, not colours, since a
#: stage is a place in the pipeline, not one of the book's meanings; colours are for the links.
STAGE_COLORS: tuple[str, ...] = NEUTRALS[:4]
#: Outline of a TP group inside a node (NVLink) and across nodes (network).
TP_NVLINK_COLOR = ROLE_COLORS["fast"]
TP_NETWORK_COLOR = ROLE_COLORS["network"]


def _label_size(plan: ClusterPlan) -> float:
    """Base size of a panel's labels (a GPU's is one point smaller, 10.2 px on a phone): 12 pt
    up to eight GPUs."""
    return 12.0 if plan.gpus <= 8 else 8.5 if plan.gpus <= 16 else 6.5


def _gpu_text(plan: ClusterPlan, s: GpuSlot) -> str:
    parts = [f"TP{s.tp_rank}"]
    if plan.pp > 1:
        parts.append(f"S{s.stage}")
    if plan.dp > 1:
        parts.append(f"R{s.replica}")
    return "\n".join(parts)


def _draw_nodes(ax: Axes, plan: ClusterPlan, grid: ClusterGrid, size: float) -> None:
    """Each node's box and name, and every GPU: stage-coloured with its ranks, or idle."""
    top = grid.rows * CELL
    inset = (CELL - GPU) / 2
    used = {(s.node, s.slot): s for s in plan.placement}
    for node in range(plan.nodes):
        x0 = grid.node_x(node)
        ax.add_patch(
            FancyBboxPatch(
                (x0, -PAD - FOOT), grid.cols * CELL + 2 * PAD, top + 2 * PAD + FOOT,
                boxstyle="round,pad=0,rounding_size=0.2", facecolor=NODE_FILL,
                edgecolor="black", lw=1.2,
            )
        )  # fmt: skip
        ax.text(
            x0 + 0.15, -PAD - FOOT + 0.12, f"node {node}", ha="left", va="bottom",
            fontsize=size + 1, fontweight="bold",
        )  # fmt: skip
    for node in range(plan.nodes):
        for slot in range(plan.gpus_per_node):
            x, y = grid.cell(node, slot)
            s = used.get((node, slot))
            if s is None:
                ax.add_patch(
                    Rectangle((x + inset, y + inset), GPU, GPU, facecolor="white",
                              edgecolor=ROLE_COLORS["free"], hatch="///")
                )  # fmt: skip
                continue
            ax.add_patch(
                Rectangle((x + inset, y + inset), GPU, GPU, edgecolor="black", lw=0.6,
                          facecolor=STAGE_COLORS[s.stage % len(STAGE_COLORS)])
            )  # fmt: skip
            ax.text(
                x + CELL / 2, y + CELL / 2, _gpu_text(plan, s), ha="center", va="center",
                fontsize=size - 1, linespacing=1.0,
            )  # fmt: skip


def _draw_tp_groups(ax: Axes, plan: ClusterPlan, grid: ClusterGrid) -> None:
    """Outline each TP group's GPUs, row by row; join the pieces of one split by the network."""
    if plan.tp == 1:
        return
    for group in tp_groups(plan.placement).values():
        spans = spans_nodes(group)
        color = TP_NETWORK_COLOR if spans else TP_NVLINK_COLOR
        runs = grid.runs(group)
        for run in runs:
            xs = [grid.cell(s.node, s.slot)[0] for s in run]
            y = grid.cell(run[0].node, run[0].slot)[1]
            ax.add_patch(
                Rectangle(
                    (min(xs) + 0.04, y + 0.04), max(xs) - min(xs) + CELL - 0.08, CELL - 0.08,
                    fill=False, edgecolor=color, lw=2.2, ls="--" if spans else "-",
                )
            )  # fmt: skip
        if spans:
            for ends in grid.network_links(runs):
                ax.plot(*zip(*ends, strict=True), color=TP_NETWORK_COLOR, lw=1.5, ls="--")


def _draw_links(ax: Axes, plan: ClusterPlan, grid: ClusterGrid) -> None:
    """The pipeline hand-offs (thicker across the network) and the arcs between replicas."""
    for _, here, there, across in stage_hand_offs(tp_groups(plan.placement)):
        style = {"arrowstyle": "-|>", "mutation_scale": 12, "color": "black", "zorder": 4}
        route = grid.pp_band_route(here, there)
        if route:  # down into the network band, along it and up: the way the bytes go
            halo = [withStroke(linewidth=4.0, foreground="white")]  # seen on the dark band
            ax.add_patch(FancyArrowPatch(path=Path(route), lw=2.0, path_effects=halo, **style))
            continue
        a, b, rad = grid.pp_ends(here, there)
        ax.add_patch(
            FancyArrowPatch(a, b, lw=2.0 if across else 1.2, connectionstyle=f"arc3,rad={rad}",
                            **style)
        )  # fmt: skip
    for here, there in dp_neighbours(plan):
        ax.add_patch(
            FancyArrowPatch(
                grid.edge(here, "top"), grid.edge(there, "top"), arrowstyle="-",
                color=INK, lw=1.2, ls=(0, (2, 2)),
                connectionstyle="arc3,rad=-0.45", zorder=3,
            )
        )  # fmt: skip


def _draw_network(ax: Axes, plan: ClusterPlan, grid: ClusterGrid, size: float) -> float:
    """The network band under the nodes and each node's wire to it; the drawing's bottom."""
    if plan.nodes == 1:
        return -PAD - FOOT - 0.2
    right = grid.width(plan.nodes)
    network = ROLE_COLORS["network"]
    ax.add_patch(Rectangle((0, BAND - 0.45), right, 0.45, facecolor=network, edgecolor="none"))
    # Under the band, not in it: a hand-off between nodes runs along the band's middle.
    ax.text(
        right / 2, BAND - 0.5, "network (InfiniBand / RoCE)", ha="center", va="top",
        fontsize=size - 0.5, color=network, fontweight="bold",
    )  # fmt: skip
    for node in range(plan.nodes):
        cx = grid.node_x(node) + grid.cols * CELL / 2 + PAD
        ax.plot([cx, cx], [-PAD - FOOT, BAND], color=network, lw=3)
    return BAND - 0.95


def _draw_layout(ax: Axes, plan: ClusterPlan) -> None:
    """Draw one plan on ``ax``: nodes, GPUs, TP groups, PP and DP links, network."""
    size = _label_size(plan)
    grid = ClusterGrid(plan.gpus_per_node)
    _draw_nodes(ax, plan, grid, size)
    _draw_tp_groups(ax, plan, grid)
    _draw_links(ax, plan, grid)
    bottom = _draw_network(ax, plan, grid, size)
    ax.set_xlim(-0.2, grid.width(plan.nodes) + 0.2)
    ax.set_ylim(bottom, grid.rows * CELL + PAD + 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    title = (
        f"{plan.label}\n{format_count(plan.sequences_total)} sequences in flight, "
        f"{format_count(plan.tokens_per_s_total)} tokens/s in all"
    )
    # An explicit height skips matplotlib's search for tick labels in the way
    # (with the axis off there are none, but the search still makes ticks).
    ax.set_title(title, fontsize=size + 0.5, y=1.0)


def _legend_handles(plans: Sequence[ClusterPlan]) -> list[Patch | Line2D]:
    """Legend entries for the elements the plans actually use."""
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
    spans = [spans_nodes(g) for p in plans if p.tp > 1 for g in tp_groups(p.placement).values()]
    if not all(spans):
        handles.append(_line(TP_NVLINK_COLOR, "TP group, NVLink", lw=2.2))
    if any(spans):
        handles.append(_line(TP_NETWORK_COLOR, "TP group split by network", lw=2.2, ls="--"))
    if stages > 1:
        handles.append(_line("black", "PP: hidden vector + residual", lw=2, marker=">"))
    if any(dp_neighbours(p) for p in plans):
        handles.append(_line("black", "DP: nothing per token", lw=1.2, ls=(0, (2, 2))))
    if any(p.idle_gpus for p in plans):
        idle = {"facecolor": "white", "edgecolor": ROLE_COLORS["free"], "hatch": "///"}
        handles.append(Patch(**idle, label="idle GPU"))
    return handles


def _line(colour: str, label: str, **style: object) -> Line2D:
    return Line2D([], [], color=colour, label=label, **style)


def _recommended_plans() -> list[ClusterPlan]:
    """The rule applied to two nodes of four GPUs: TP 4 inside, PP 2 or DP 2 across."""
    return [plan_cluster(gpus_per_node=4, nodes=2, tp=4, pp=pp) for pp in (2, 1)]


def layout_figure(plans: Sequence[ClusterPlan] | None = None) -> Figure:
    """Draw plans one above the other (each the whole width) with one shared key.

    Parameters
    ----------
    plans : sequence of ClusterPlan, optional
        Default: TP 4 in each of two nodes of four GPUs, with PP 2 and with DP 2.
        Each is titled with its label, sequences and tokens/s.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``plans`` is empty.
    """
    plans = _recommended_plans() if plans is None else list(plans)
    if not plans:
        raise ValueError("plans must hold at least one ClusterPlan")
    width = FIGURE_WIDTH_IN
    handles = _legend_handles(plans)
    key_font = 11.0
    ncols = max(1, min(len(handles), int(width // 3.0)))
    key_rows = -(-len(handles) // ncols) if handles else 0
    key = (1.7 * key_rows + 0.8) * key_font / 72  # inches: rows of a draw_key, and a margin
    total = 2.9 * len(plans) + key  # inches: 2.9 a plan, and the key's rows
    # A bare Figure with fixed margins, not new_figure(): constrained layout
    # lets the titles of these equal-aspect axes run off the top.
    fig = Figure(figsize=(width, total))
    fig.subplots(len(plans), 1, squeeze=False)
    fig.subplots_adjust(left=0.01, right=0.99, top=1 - 0.45 / total, bottom=key / total, hspace=0.3)
    for ax, plan in zip(fig.axes, plans, strict=True):
        _draw_layout(ax, plan)
    if handles:
        # A key of known height, which the bottom margin above leaves room for.
        draw_key(
            fig, handles, x=0.5, y=0.15 / total, loc="lower center", ncols=ncols,
            fontsize=key_font,
        )  # fmt: skip
    return fig
