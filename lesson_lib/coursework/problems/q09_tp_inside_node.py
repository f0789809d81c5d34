"""Problem q9: multiple choice, why tensor parallelism stays inside a node."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Choice, choice_problem
from lesson_lib.model.specimen import MODEL


def _options() -> list[Choice]:
    return [
        Choice(
            f"It reconciles {MODEL.allreduces_per_layer} times per layer, "
            f"{MODEL.allreduces_per_token} blocking all-reduces for every token, so the wire's "
            "latency is paid over and over; only the fabric inside a node is fast enough, "
            "while pipeline and data parallelism talk rarely and can cross the network.",
            "Right: the form of parallelism that talks most often needs the quickest link. "
            "A pipeline stage boundary passes one activation per token; data parallelism "
            "synchronizes once per training step.",
            correct=True,
        ),
        Choice(
            "Because the weights would not fit in memory if the tensor-parallel group "
            "spanned two nodes.",
            "No: tensor parallelism splits the weights the same way whichever wire joins "
            "the GPUs; memory does not depend on where the group sits.",
        ),
        Choice(
            "Because tensor parallelism sends more bytes per decoded token than any network "
            "card can carry.",
            "No: a decoded token puts only a few MiB on each rank's wire; the trouble is the "
            "number of serial round trips, each paying the network's latency.",
        ),
        Choice(
            "Because the model's heads divide only by small numbers, so a tensor-parallel "
            "group can never be larger than one node.",
            "No: divisibility limits the degree (TP must divide the head counts), not where "
            "the group runs; a group of 4 could span two nodes and divide evenly.",
        ),
    ]


PROBLEM = choice_problem(
    _options,
    qid="q9",
    title="Why tensor parallelism stays inside a node",
    chapter="cluster",
    difficulty=2,
    template="Why is tensor parallelism kept inside one node?\n\n{options}",
    defaults={"order": [2, 0, 3, 1]},
    hint="Count how often each form of parallelism reconciles.",
)
