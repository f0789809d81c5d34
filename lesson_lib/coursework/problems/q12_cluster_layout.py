"""Problem q12: multiple choice, a layout for 2 nodes x 4 GPUs that holds the most sequences."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Choice, choice_problem
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.layout import check_layout
from lesson_lib.model.specimen import MODEL

NODES, GPUS_PER_NODE = 2, 4

#: Candidate layouts (description, tp, pp, TP group across nodes?); DP fills the rest, 8/(tp*pp).
LAYOUTS: tuple[tuple[str, int, int, bool], ...] = (
    ("TP = 8: one tensor-parallel group over all eight GPUs of both nodes.", 8, 1, True),
    (
        "TP = 4 inside each node, PP = 2 across the nodes (one pipeline stage per node).",
        4,
        2,
        False,
    ),
    ("TP = 2 with each pair made of one GPU from each node, PP = 4 inside the nodes.", 2, 4, True),
    ("TP = 4 made of two GPUs from each node, PP = 2.", 4, 2, True),
    ("TP = 4 inside each node, DP = 2: a whole replica of the model on each node.", 4, 1, False),
)


def _layout_problems(tp: int, pp: int, crosses_nodes: bool) -> list[str]:
    """What is wrong with a candidate layout for the specimen (empty for a sound one): the
    divisibility problems of :func:`~lesson_lib.model.layout.check_layout`, and TP across nodes."""
    problems = check_layout(MODEL, tp, pp)
    if (NODES * GPUS_PER_NODE) % (tp * pp):
        problems.append(f"TP x PP = {tp * pp} does not divide the {NODES * GPUS_PER_NODE} GPUs")
    if crosses_nodes:
        problems.append(
            f"a TP group crosses the node boundary, so all {MODEL.allreduces_per_token} "
            "all-reduces of every token would pay the network's latency instead of NVLink's"
        )
    return problems


def _sequences_held(tp: int, pp: int) -> int:
    """Full-length sequences the 2 x 4 GPUs hold in a sound layout (``plan_cluster``'s total)."""
    return plan_cluster(gpus_per_node=GPUS_PER_NODE, nodes=NODES, tp=tp, pp=pp).sequences_total


def _options() -> list[Choice]:
    sound = {
        (tp, pp): _sequences_held(tp, pp)
        for _, tp, pp, crosses in LAYOUTS
        if not _layout_problems(tp, pp, crosses)
    }
    best = max(sound.values())
    options = []
    for text, tp, pp, crosses in LAYOUTS:
        problems = _layout_problems(tp, pp, crosses)
        dp = NODES * GPUS_PER_NODE // (tp * pp)
        if problems:
            why, correct = "No: " + "; ".join(problems) + ".", False
        elif sound[(tp, pp)] == best:
            why, correct = (
                f"Right: TP = {tp} divides every head group and the FFN and stays on each "
                f"node's NVLink, and PP = {pp} gives each stage "
                f"{MODEL.super_blocks // pp} whole super-blocks, passing one activation per "
                f"token across the network. The weights are stored once, so "
                f"{sound[(tp, pp)]} full-length sequences fit.",
                True,
            )
        else:
            why, correct = (
                f"Sound, and simpler to run, but not the answer: each of the {dp} replicas "
                f"stores all the weights, so {sound[(tp, pp)]} full-length sequences fit "
                f"against {best}. Its throughput is about the same (see the cluster chapter); "
                "the question asks for sequences held.",
                False,
            )
        options.append(Choice(text, why, correct=correct))
    return options


PROBLEM = choice_problem(
    _options,
    qid="q12",
    title="A layout for 2 nodes of 4 GPUs",
    chapter="cluster",
    difficulty=3,
    template=(
        "You serve the specimen on 2 nodes with 4 GPUs each: NVLink inside a node, a "
        "network between them. You want every token's all-reduces on NVLink and as many "
        "full-length sequences in memory at once as possible. Which layout do you choose?"
        "\n\n{options}\n\n"
        "(Be ready to say why; `check_layout(MODEL, tp, pp)` tells you which degrees "
        "divide the model.)"
    ),
    defaults={"order": [3, 0, 4, 2, 1]},
    hint="Keep every TP group on one node's NVLink, check that the degrees divide "
    "the model's heads and super-blocks, and count how many copies of the weights each "
    "layout stores.",
)
