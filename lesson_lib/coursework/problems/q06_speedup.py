"""Problem q6: speed-up from 2 to 4 GPUs on one fabric."""

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
from lesson_lib.model.specimen import SLOW as SLOW_FABRIC
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import US, format_ratio, format_seconds


def _steps(p: Params):
    card, fabric = ACCELERATORS[p["card"]], fabric_of(p["latency_us"])
    two = decode_step(MODEL, card, fabric, 2, include_bandwidth=False)
    four = decode_step(MODEL, card, fabric, 4, include_bandwidth=False)
    return two, four


def _facts(p: Params) -> dict[str, str]:
    two, four = _steps(p)
    return {
        **card_facts(p["card"]),
        "latency": format_seconds(p["latency_us"] * US, "us"),
        "allreduces": str(MODEL.allreduces_per_token),
        "compute_2": format_seconds(two.compute_s, "ms"),
        "compute_4": format_seconds(four.compute_s, "ms"),
        "comm": format_seconds(two.latency_s, "ms"),
        "total_2": format_seconds(two.total_s, "ms"),
        "total_4": format_seconds(four.total_s, "ms"),
        "speedup": format_ratio(speedup(two, four), decimals=3),
    }


def _mistakes(p: Params) -> list[Mistake]:
    two, four = _steps(p)
    return [
        Mistake(
            "perfect-scaling",
            2.0,
            "Twice the GPUs halves only the weight-streaming time; the all-reduce latency "
            "per token stays the same, so the speed-up is below 2.",
        ),
        Mistake(
            "inverted",
            1 / speedup(two, four),
            "Upside down: the speed-up is the 2-GPU time divided by the 4-GPU time (above 1).",
        ),
    ]


PROBLEM = Problem(
    qid="q6",
    title="Speed-up from 2 to 4 GPUs",
    chapter="latency",
    difficulty=2,
    unit="x",
    template=(
        "On a fabric that costs **{latency}** per small all-reduce, with cards of the "
        "kind {card} ({hbm} of HBM bandwidth), how many times faster does the specimen decode a token "
        "on **4** GPUs than on **2**? Use the lesson's arithmetic (weight streaming plus "
        "one latency per all-reduce)."
    ),
    solution_template=(
        "2 GPUs: {compute_2} + {allreduces} x {latency} = {total_2}. 4 GPUs: "
        "{compute_4} + {comm} = {total_4}. Speed-up = {total_2} / {total_4} = "
        "**{speedup}**: doubling the GPUs halved only the weight-streaming term, while "
        "the communication stayed the same."
    ),
    defaults={"latency_us": SLOW_FABRIC.latency / US, "card": "h100"},
    sample=lambda rng: {
        "latency_us": pick(rng, (2, 5, 15, 20, 30, 40)),
        "card": pick(rng, list(ACCELERATORS)),
    },
    facts=_facts,
    reference=lambda p: speedup(*_steps(p)),
    mistakes=_mistakes,
    hint="Compute both step times (compute + all-reduces x latency) and divide "
    "the 2-GPU time by the 4-GPU time.",
)
