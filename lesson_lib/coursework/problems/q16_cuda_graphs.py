"""Problem q16: what CUDA graphs do to the 2 -> 4 GPU speed-up."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import (
    ACCELERATORS,
    Mistake,
    Params,
    Problem,
    card_facts,
    fabric_of,
)
from lesson_lib.coursework.variants import pick
from lesson_lib.model.algorithms import cuda_graph_fabric
from lesson_lib.model.specimen import CUDA_GRAPH_LAUNCH_SAVING, FAST, MODEL
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import US, format_ratio, format_seconds


def _times(p: Params, saving_us: float) -> tuple[float, float]:
    card = ACCELERATORS[p["card"]]
    fabric = cuda_graph_fabric(fabric_of(p["latency_us"]), saving_us * US)
    steps = [decode_step(MODEL, card, fabric, n, include_bandwidth=False) for n in (2, 4)]
    return steps[0].total_s, steps[1].total_s


def _reference(p: Params) -> float:
    two, four = _times(p, p["saving_us"])
    return two / four


def _facts(p: Params) -> dict[str, str]:
    two, four = _times(p, p["saving_us"])
    before = _times(p, 0.0)
    return {
        **card_facts(p["card"]),
        "latency": f"{p['latency_us']:g} us",
        "saving": f"{p['saving_us']:g} us",
        "after": f"{p['latency_us'] - p['saving_us']:g} us",
        "allreduces": str(MODEL.allreduces_per_token),
        "two": format_seconds(two, "ms"),
        "four": format_seconds(four, "ms"),
        "before": format_ratio(before[0] / before[1], decimals=3),
        "answer": format_ratio(two / four, decimals=3),
    }


def _mistakes(p: Params) -> list[Mistake]:
    two, four = _times(p, 0.0)
    card = ACCELERATORS[p["card"]]
    weights_two, weights_four = (
        decode_step(MODEL, card, fabric_of(p["latency_us"]), n, include_bandwidth=False).compute_s
        for n in (2, 4)
    )
    return [
        Mistake(
            "no-graph",
            two / four,
            "That is the speed-up without the graph: CUDA graphs lower the fixed cost of "
            f"every one of the {MODEL.allreduces_per_token} all-reduces per token (not once "
            "per token), so the speed-up changes.",
        ),
        Mistake(
            "weights-only",
            weights_two / weights_four,
            "That is the speed-up of the weight streaming alone: the all-reduce latencies, "
            "lowered by the graph or not, stay the same from 2 to 4 GPUs.",
        ),
        Mistake(
            "inverted",
            four / two,
            "Upside down: the speed-up is the 2-GPU time divided by the 4-GPU time.",
        ),
    ]


PROBLEM = Problem(
    qid="q16",
    title="CUDA graphs and the speed-up",
    chapter="algorithms",
    difficulty=3,
    unit="x",
    template=(
        "Cards of the kind {card} ({hbm}) are joined by a fabric whose small all-reduce costs "
        "**{latency}**. Capturing the decode step in a CUDA graph removes **{saving}** of "
        "launch overhead from every all-reduce. With the lesson's arithmetic (weight streaming "
        "plus {allreduces} all-reduce latencies per token), what is the speed-up from 2 to 4 "
        "GPUs with the graph? Say first whether it is larger or smaller than without."
    ),
    solution_template=(
        "Each all-reduce now costs {after}. 2 GPUs: {two}; 4 GPUs: {four}. Speed-up "
        "**{answer}**, against {before} without the graph: lowering the part that does not "
        "shrink with N raises the speed-up."
    ),
    defaults={
        "card": "h100",
        "latency_us": FAST.latency / US,
        "saving_us": CUDA_GRAPH_LAUNCH_SAVING / US,
    },
    sample=lambda rng: {
        "card": pick(rng, list(ACCELERATORS)),
        # A saving of 4 us or more on a latency of 25 us or less keeps the speed-up with
        # the graph over 2 % from the one without on every card: their 1 % match
        # windows never meet (tests/test_coursework_mistake_separation.py).
        "latency_us": pick(rng, (10.0, 12.0, 15.0, 20.0, 25.0)),
        "saving_us": pick(rng, (4.0, 5.0, 6.0, 8.0)),
    },
    facts=_facts,
    reference=_reference,
    mistakes=_mistakes,
    hint="Lower the latency of each all-reduce by the saving, then divide the 2-GPU time by "
    "the 4-GPU time.",
)
