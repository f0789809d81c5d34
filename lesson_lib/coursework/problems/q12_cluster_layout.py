"""Problem q12: multiple choice, a layout for 2 nodes x 4 GPUs.

Statement, parameter sampler, reference answer (computed by ``lesson_lib``),
usual mistakes and worked solution in one place; registered in
:mod:`lesson_lib.coursework.problems.registry`.
"""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import (
    Choice,
    Params,
    Problem,
    choice_facts,
    choice_reference,
    sample_order,
)
from lesson_lib.layout import check_layout
from lesson_lib.specimen import MODEL

NODES, GPUS_PER_NODE = 2, 4

#: Candidate layouts; (description, tp, pp, does a TP group cross the node boundary?).
LAYOUTS: tuple[tuple[str, int, int, bool], ...] = (
    ("TP = 8: one tensor-parallel group over all eight GPUs of both nodes.", 8, 1, True),
    (
        "TP = 4 inside each node, PP = 2 across the nodes (one pipeline stage per node).",
        4,
        2,
        False,
    ),
    (
        "TP = 2 with each pair made of one GPU from each node, PP = 4 inside the nodes.",
        2,
        4,
        True,
    ),
    ("TP = 4 made of two GPUs from each node, PP = 2.", 4, 2, True),
)


def layout_problems(tp: int, pp: int, crosses_nodes: bool) -> list[str]:
    """What is wrong with a candidate layout of :data:`LAYOUTS` for the specimen.

    Parameters
    ----------
    tp, pp : int
        Tensor- and pipeline-parallel degrees.
    crosses_nodes : bool
        True when a tensor-parallel group spans the node boundary.

    Returns
    -------
    list of str
        :func:`~lesson_lib.layout.check_layout`'s divisibility problems, plus
        the wire problem when TP crosses nodes; empty for a good layout.
    """
    problems = check_layout(MODEL, tp, pp)
    if tp * pp != NODES * GPUS_PER_NODE:
        problems.append(f"TP x PP = {tp * pp} does not use the {NODES * GPUS_PER_NODE} GPUs")
    if crosses_nodes:
        problems.append(
            f"a TP group crosses the node boundary, so all {MODEL.allreduces_per_token} "
            "all-reduces of every token would pay the network's latency instead of NVLink's"
        )
    return problems


def _choices(p: Params) -> list[Choice]:
    options = []
    for text, tp, pp, crosses in LAYOUTS:
        problems = layout_problems(tp, pp, crosses)
        if problems:
            why = "No: " + "; ".join(problems) + "."
        else:
            why = (
                f"Right: TP = {tp} divides every head group and the FFN and stays on each "
                f"node's NVLink, and PP = {pp} gives each stage "
                f"{MODEL.super_blocks // pp} whole super-blocks, passing one activation per "
                "token across the network."
            )
        options.append(Choice(text, why, correct=not problems))
    return [options[i] for i in p["order"]]


PROBLEM = Problem(
    qid="q12",
    title="A layout for 2 nodes of 4 GPUs",
    chapter="cluster",
    difficulty=3,
    kind="choice",
    unit="",
    template=(
        "You serve the specimen on 2 nodes with 4 GPUs each: NVLink inside a node, a "
        "network between them. Which layout do you choose?\n\n{options}\n\n"
        "(Be ready to say why; `check_layout(MODEL, tp, pp)` tells you which degrees "
        "divide the model.)"
    ),
    solution_template="The answer is **{letter}**.\n\n{explained}",
    defaults={"order": [3, 0, 2, 1]},
    sample=sample_order,
    facts=choice_facts(_choices),
    reference=choice_reference(_choices),
    choices=_choices,
    hint="Keep every TP group on one node's NVLink, and check that the degrees divide "
    "the model's heads and super-blocks.",
)
