"""Problem q11: the largest latency at which 4 GPUs still beat 2."""

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
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import US, format_seconds


def _parts(p: Params):
    card = ACCELERATORS[p["card"]]
    two = decode_step(MODEL, card, fabric_of(p["latency_us"]), 2, include_bandwidth=False)
    four_free = decode_step(MODEL, card, fabric_of(0.0), 4, include_bandwidth=False)
    return two, four_free


def _answer(p: Params) -> float:
    two, four_free = _parts(p)
    return (two.total_s - four_free.total_s) / MODEL.allreduces_per_token / US


def _facts(p: Params) -> dict[str, str]:
    two, four_free = _parts(p)
    budget = two.total_s - four_free.total_s
    return {
        **card_facts(p["card"]),
        "latency": format_seconds(p["latency_us"] * US, "us"),
        "allreduces": str(MODEL.allreduces_per_token),
        "compute_2": format_seconds(two.compute_s, "ms"),
        "comm_2": format_seconds(two.latency_s, "ms"),
        "total_2": format_seconds(two.total_s, "ms"),
        "compute_4": format_seconds(four_free.compute_s, "ms"),
        "budget": format_seconds(budget, "ms"),
        "answer": format_seconds(budget / MODEL.allreduces_per_token, "us", decimals=1),
    }


def _mistakes(p: Params) -> list[Mistake]:
    two, four_free = _parts(p)
    return [
        Mistake(
            "whole-budget",
            (two.total_s - four_free.total_s) / US,
            f"That is the whole time budget per token; it is shared by "
            f"{MODEL.allreduces_per_token} all-reduces, so divide by that.",
        ),
        Mistake(
            "own-latency",
            float(p["latency_us"]),
            "That is the 2-GPU fabric's own latency. The question is how slow the 4-GPU "
            f"fabric may be before it loses: solve compute_4 + {MODEL.allreduces_per_token} x "
            "alpha = the 2-GPU time.",
        ),
    ]


PROBLEM = Problem(
    qid="q11",
    title="How slow may the wire be?",
    chapter="latency",
    difficulty=3,
    unit="us",
    template=(
        "Two GPUs ({card}, {hbm} of HBM bandwidth) on a fabric of **{latency}** per "
        "all-reduce decode the specimen at a certain speed. Four GPUs of the same kind "
        "sit on a different fabric. Up to what latency per all-reduce on that fabric do "
        "the four GPUs still decode a token at least as fast as the two? Use the "
        "lesson's arithmetic; answer in **us** (microseconds)."
    ),
    solution_template=(
        "2 GPUs: {compute_2} + {allreduces} x {latency} = {total_2}. 4 GPUs stream "
        "their weights in {compute_4}, so the all-reduces may take {total_2} - "
        "{compute_4} = {budget} per token. Shared by {allreduces} all-reduces: "
        "**{answer}** each. Above that, the extra GPUs make decode slower."
    ),
    defaults={"latency_us": 10, "card": "h100"},
    sample=lambda rng: {
        "latency_us": pick(rng, (5, 8, 10, 12, 15)),
        "card": pick(rng, list(ACCELERATORS)),
    },
    facts=_facts,
    reference=_answer,
    mistakes=_mistakes,
    hint="Solve compute_4 + all-reduces x alpha = time of the 2-GPU step for alpha.",
)
