"""The cluster explorer: GPUs per node, nodes, TP and PP -> validity and time per token.

The message lists every problem of an invalid layout (never a traceback) and
prices it anyway, so a reader can see what a forbidden split would have
bought; the picture is :func:`lesson_lib.figures.cluster.layout_figure`.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
from matplotlib.figure import Figure

from lesson_lib._validate import require_int
from lesson_lib.cluster import INTER_NODE, ClusterPlan, plan_cluster
from lesson_lib.figures.cluster import layout_figure
from lesson_lib.specimen import FAST, GPU, MODEL
from lesson_lib.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.units import format_bytes, format_count, format_seconds

#: Largest cluster the explorer draws; GPUs per node, nodes.
MAX_GPUS_PER_NODE = 8
MAX_NODES = 4
#: Largest TP or PP degree the explorer accepts, all the GPUs it can draw.
MAX_DEGREE = MAX_GPUS_PER_NODE * MAX_NODES


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _items(lines: tuple[str, ...] | list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


def cluster_report(plan: ClusterPlan) -> str:
    """The explorer's message for one plan: verdict, problems, flags and prices.

    Parameters
    ----------
    plan : ClusterPlan
        The layout.

    Returns
    -------
    str
        HTML paragraphs; problems and flags as bulleted lists.
    """
    parts = []
    if plan.problems:
        parts.append(
            '<p role="alert" style="color:#D55E00"><b>Not a valid layout.</b> '
            f"Problems:</p>{_items(plan.problems)}"
        )
    else:
        parts.append(
            f"<p><b>Valid layout:</b> {plan.gpus} GPUs = TP {plan.tp} x PP {plan.pp} "
            f"x DP {plan.dp}.</p>"
        )
    if plan.flags:
        parts.append(f"<p><b>Flagged:</b></p>{_items(plan.flags)}")
    where = "the network" if plan.tp_crosses_nodes else "NVLink inside the node"
    tp_line = (
        "One GPU per replica: no tensor-parallel all-reduces."
        if plan.tp == 1
        else f"TP all-reduces run on {where}: {format_seconds(plan.step.communication_s, 'ms')} "
        "per token."
    )
    pp_line = (
        ""
        if plan.pp == 1
        else f" {_count(plan.pp - 1, 'pipeline hand-off')} per token, "
        f"{plan.pp_network_boundaries} across the network: "
        f"{format_seconds(plan.pp_send_s, 'us')}."
    )
    prefix = "If built anyway: " if plan.problems else ""
    if plan.dp == 0:
        rate = "no complete replica fits in this cluster"
    elif plan.batch == 0:
        rate = "no sequence fits beside the weights, so nothing is decoded"
    else:
        rate = (
            f"batched, {_count(plan.batch, 'sequence')} per replica: "
            f"{format_seconds(plan.batched_token_time_s, 'ms')} per token each, "
            f"{format_count(plan.tokens_per_s_replica)} tokens/s per replica, "
            f"{format_count(plan.tokens_per_s_total)} tokens/s for {_count(plan.dp, 'replica')}"
        )
    parts.append(
        f"<p>{html.escape(tp_line)}{html.escape(pp_line)}</p>"
        f"<p>{prefix}One sequence alone: <b>{format_seconds(plan.token_time_s, 'ms')} per "
        f"token</b>; {rate}. "
        f"Weights per GPU {format_bytes(plan.weights_per_gpu_bytes, 'GB')} of "
        f"{format_bytes(plan.accel.memory_bytes, 'GB')}; "
        f"{_count(plan.sequences_per_replica, 'full-length sequence')} "
        f"({format_count(plan.context_tokens)} tokens) fit per replica.</p>"
    )
    return "".join(parts)


def cluster_widget(
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    intra: Fabric = FAST,
    inter: Fabric = INTER_NODE,
) -> widgets.VBox:
    """GPUs per node, nodes, TP and PP -> validity report, time per token, diagram.

    Parameters
    ----------
    model : ModelSpec, default MODEL
        The model.
    accel : Accelerator, default GPU
        One card.
    intra : Fabric, default FAST
        The wire inside a node.
    inter : Fabric, default INTER_NODE
        The network between nodes.

    Returns
    -------
    LessonWidget
        Controls ``gpus_per_node``, ``nodes``, ``tp`` and ``pp``; starts at
        2 nodes x 4 GPUs, TP 4 x PP 2.
    """
    from lesson_lib.widgets._base import LessonWidget

    style = {"description_width": "initial"}
    layout = widgets.Layout(width="170px")
    controls = [
        widgets.IntText(value=4, description="GPUs per node", style=style, layout=layout),
        widgets.IntText(value=2, description="nodes", style=style, layout=layout),
        widgets.IntText(value=4, description="TP", style=style, layout=layout),
        widgets.IntText(value=2, description="PP", style=style, layout=layout),
    ]

    figure: Figure | None = None  # this widget's own figure, redrawn in place

    def render(gpus_per_node: int, nodes: int, tp: int, pp: int) -> tuple[str, Figure]:
        nonlocal figure
        require_int("gpus_per_node", gpus_per_node, maximum=MAX_GPUS_PER_NODE)
        require_int("nodes", nodes, maximum=MAX_NODES)
        require_int("tp", tp, maximum=MAX_DEGREE)
        require_int("pp", pp, maximum=MAX_DEGREE)
        plan = plan_cluster(model, accel, gpus_per_node, nodes, tp, pp, intra=intra, inter=inter)
        width = max(2.6 + 1.4 * nodes * min(gpus_per_node, 4) / 4, 4.6)
        figure = layout_figure([plan], width=width, height=3.0, reuse=figure)
        return cluster_report(plan), figure

    return LessonWidget(
        controls,
        render,
        ["gpus_per_node", "nodes", "tp", "pp"],
        alt=(
            "The chosen cluster: nodes as boxes with their GPUs inside, coloured by pipeline "
            "stage; tensor-parallel groups outlined (green inside a node, dashed vermillion "
            "when split across nodes); arrows for pipeline hand-offs and dashed arcs between "
            "data-parallel replicas, above the network band."
        ),
    )
