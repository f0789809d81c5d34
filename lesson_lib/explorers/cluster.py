"""The cluster explorer: a model, GPUs per node, nodes, TP, PP and EP, checked and priced.

Every state is one :func:`lesson_lib.model.cluster_planner.plan_cluster` call on the specimen or
Qwen3-235B-A22B (placed by EP, TP 1, PP 1), the lesson's card and fabrics. A layout that cannot
exist lists its problems in ``plan_cluster``'s words and is not priced. The chart draws what
:func:`lesson_lib.figures.cluster.layout_figure` draws.
"""

from __future__ import annotations

import functools
import textwrap
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, states
from lesson_lib.explorers.cluster_chart import chart, phone_layout
from lesson_lib.explorers.cluster_diagram import (
    FLAG,
    GPUS_PER_NODE_VALUES,
    NODE_VALUES,
    NOTHING,
    PP_VALUES,
    PROBLEM,
    DiagramTables,
    chart_params,
)
from lesson_lib.model.cluster_plan import ClusterPlan
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.units import format_bytes, format_count, format_seconds

#: The models offered by key: the specimen and an MoE whose 128 experts fit EP 8 on one 8-GPU node.
MODELS: dict[str, ModelSpec] = {"specimen": MODEL, "qwen3_235b": PRESETS["Qwen3-235B-A22B"]}
MODEL_LABELS: tuple[str, ...] = (
    f"{MODEL.name}, dense (the specimen)",
    f"{MODELS['qwen3_235b'].name}, MoE of {MODELS['qwen3_235b'].num_experts} experts",
)

# GPUs per node, nodes and PP offered are the sizes the diagram draws: the candidate layouts' sizes,
# up to 8 GPUs per node and 4 nodes, with PP 3 to show why some cuts are refused.
#: Degrees of the group that splits each layer, TP for the dense model, EP for
#: the MoE: for the MoE 2 and 4 are too few GPUs for its weights, 3 does not
#: divide its experts, 8 fills one node of eight, 16 and 32 cross the network.
GROUP_VALUES: tuple[int, ...] = (1, 2, 3, 4, 8, 16, 32)
# The defaults are the lesson's layout: two nodes of four GPUs, TP 4 in each and PP 2 across.
CONTROLS: tuple[Control, ...] = (
    Control("model", "model", tuple(MODELS), "specimen", MODEL_LABELS, input="radio"),
    Control("gpus_per_node", "GPUs per node", GPUS_PER_NODE_VALUES, 4, input="radio"),
    Control("nodes", "nodes", NODE_VALUES, 2, input="radio"),
    Control("group", "TP (dense) or EP (MoE)", GROUP_VALUES, 4, input="radio"),
    Control("pp", "PP", PP_VALUES, 2, input="radio"),
)

MESSAGE = Template(
    "{model_name}, {gpus} ({nodes} x {gpus_per_node}), {degrees}: {verdict}\n{priced}"
)
#: The message's last line for a layout that cannot be built, and for one the lesson does not model.
NOT_PRICED = "Nothing priced: this layout cannot be built."
NOT_MODELLED = "Nothing priced: the lesson does not model this layout."
#: Widest line of the message and of the list under the diagram, characters.
LINE_WIDTH: int = 104


def _refusal(model: ModelSpec, pp: int) -> str | None:
    """Why the explorer does not place PP on a mixture of experts (placed by EP alone); else None."""
    if model.is_moe and pp > 1:
        return (
            f"PP is not modelled with EP: {model.name} is placed by EP alone with "
            "data-parallel attention; set PP 1"
        )
    return None


@functools.cache
def _plan(model: str, gpus_per_node: int, nodes: int, group: int, pp: int) -> ClusterPlan:
    """The plan of a choice: the group is TP for a dense model (EP 1), EP for an MoE (TP 1)."""
    spec = MODELS[model]
    tp, ep = (1, group) if spec.is_moe else (group, 1)
    return plan_cluster(
        spec, GPU, gpus_per_node, nodes, tp, pp, intra=FAST, inter=INTER_NODE, ep=ep
    )


def _plan_at(state: dict[str, Any]) -> ClusterPlan | None:
    """The plan of a state (a row or a dict of the controls' values); None if not placed."""
    if _refusal(MODELS[state["model"]], state["pp"]):
        return None
    return _plan(*(state[c.name] for c in CONTROLS))


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@functools.cache
def _wrap(text: str, first: str = "") -> tuple[str, ...]:
    return tuple(textwrap.wrap(text, LINE_WIDTH, initial_indent=first, break_on_hyphens=False))


def _verdict(plan: ClusterPlan) -> str:
    """Valid or not, then the first problem, or else the first flag, in plan_cluster's words."""
    if plan.problems:
        head = f"cannot exist ({_count(len(plan.problems), 'problem')}, all listed below)"
        return "\n".join([head, *_wrap(plan.problems[0], "Problem: ")])
    weights = (
        f"weights {format_bytes(plan.weights_per_gpu_bytes, 'GB').removesuffix(' GB')} of "
        f"{format_bytes(plan.accel.memory_bytes, 'GB')} per GPU"
    )
    if not plan.flags:
        return f"valid; {weights}"
    head = f"valid, {_count(len(plan.flags), 'flag')} below; {weights}"
    return "\n".join([head, *_wrap(plan.flags[0], "Flag: ")])


def _one_parts(plan: ClusterPlan) -> str:
    """Where one sequence's time goes: the TP all-reduces or EP all-to-alls, the PP hand-offs."""
    if plan.ep > 1:
        where = "across nodes" if plan.ep_crosses_nodes else "on NVLink"
        return (
            f"{plan.step.collectives} EP all-to-alls {format_seconds(plan.step.communication_s, 'ms')}"
            f" {where}, {format_bytes(plan.step.wire_bytes, 'MiB')} from the busiest GPU"
        )
    if plan.tp == 1:
        tp = "no TP all-reduces"
    else:
        where = "across nodes" if plan.tp_crosses_nodes else "on NVLink"
        tp = f"TP all-reduces {format_seconds(plan.step.communication_s, 'ms')} {where}"
    if plan.pp == 1:
        return tp
    sends = format_seconds(plan.pp_send_s, "us", decimals=1)
    hand_offs = _count(plan.pp - 1, "PP send")
    return f"{tp}; {hand_offs} {sends}, {plan.pp_network_boundaries} across nodes"


def _batched(plan: ClusterPlan) -> str:
    if plan.batch == 0:
        return "No full-length sequence fits beside the weights, so nothing is decoded"
    fit = "" if plan.batch == plan.sequences_per_replica else f" ({plan.sequences_per_replica} fit)"
    replica = "EP group" if plan.ep > 1 else "replica"
    return (
        f"Batched, {_count(plan.batch, 'full-length sequence')} per {replica}{fit}: "
        f"{format_seconds(plan.batched_token_time_s, 'ms')} a token each, "
        f"{format_count(plan.tokens_per_s_total)} tokens/s from {_count(plan.dp, replica)}"
    )


def _priced(plan: ClusterPlan) -> str:
    """The message's last lines: one sequence's time and the batched throughput."""
    one = f"One sequence: {format_seconds(plan.token_time_s, 'ms')} per token ({_one_parts(plan)})"
    return f"{one}\n{_batched(plan)}"


def _state(**state: Any) -> dict[str, Any]:
    model = MODELS[state["model"]]
    gpus = _count(state["gpus_per_node"] * state["nodes"], "GPU")
    plan = _plan_at(state)
    if plan is None:
        degrees = f"EP {state['group']} x PP {state['pp']}"
        return {"model_name": model.name, "gpus": gpus, "dp": -1, "degrees": degrees,
                "verdict": "not placed: PP is not modelled with EP; set PP 1",
                "priced": NOT_MODELLED}  # fmt: skip
    degrees = f"EP {plan.ep}" if plan.ep > 1 else f"TP {plan.tp} x PP {plan.pp}"
    # No whole replica fits (DP 0): say how many GPUs one needs, not "DP 0".
    degrees += f" x DP {plan.dp}" if plan.dp else f" needs {plan.tp * plan.pp * plan.ep} GPUs"
    priced = NOT_PRICED if plan.problems else _priced(plan)
    return {"model_name": model.name, "gpus": gpus, "dp": plan.dp, "degrees": degrees,
            "verdict": _verdict(plan), "priced": priced}  # fmt: skip


def _note_paragraphs(state: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """The list under the diagram: every problem, then every flag, each wrapped into lines."""
    plan = _plan_at(state)
    if plan is None:
        why = _refusal(MODELS[state["model"]], state["pp"])
        return [(PROBLEM, _wrap(f"{why}.", "Not placed: "))]
    paragraphs = [(PROBLEM, _wrap(p, "Problem: ")) for p in plan.problems]
    paragraphs += [(FLAG, _wrap(f, "Flag: ")) for f in plan.flags]
    return paragraphs or [(NOTHING, ("No problems and no flags.",))]


def cluster_explorer() -> Explorer:
    """The live cluster explorer: choose a model, GPUs per node, nodes, TP or EP, and PP.

    Returns
    -------
    Explorer
        Starting at the lesson's two nodes of four GPUs as TP 4 x PP 2.
    """
    rows = states(CONTROLS, _state)
    tables = DiagramTables()
    for row in rows:
        state = {c.name: row[c.name] for c in CONTROLS}
        tables.add_state(state, _plan_at(state), _note_paragraphs(state))
    return Explorer(
        title="Cluster explorer: where TP, PP, EP and DP sit",
        description=(
            "The chosen cluster: nodes as boxes with their GPUs inside, coloured by pipeline "
            "stage (idle GPUs left blank); tensor-parallel and expert-parallel groups outlined, "
            "green inside a node and dashed wine red when split across nodes; under the nodes "
            "the wine-red network band; arrows for pipeline hand-offs, thicker across the "
            "network, one from a whole node to the next running down into the band, along it "
            "and up; dashed arcs between data-parallel replicas. A layout that cannot exist "
            "leaves the nodes empty. Below it, every problem and flag of the layout; the message "
            "above gives its verdict and, for a layout that can exist, its time per token and "
            "batched throughput."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart=chart(tables, [c.name for c in CONTROLS]),
        numeric=("gpus_per_node", "nodes", "group", "pp"),
        message_lines=5,
        params=chart_params(),
        narrow=phone_layout(),
    )
