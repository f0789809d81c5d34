"""Problem q25: FP8 weights halve the streaming, not the all-reduces."""

from __future__ import annotations

from dataclasses import replace

from lesson_lib.coursework.problems.bank import ACCELERATORS, Mistake, Params, Problem, card_facts
from lesson_lib.coursework.variants import pick
from lesson_lib.model.overlap import FP8_BYTES, low_precision_decode
from lesson_lib.model.specimen import FAST, MODEL
from lesson_lib.model.step_time import StepBreakdown
from lesson_lib.model.units import GB, MS, US, format_seconds


def _step(p: Params, bytes_per_weight: float = FP8_BYTES) -> StepBreakdown:
    card, fabric = ACCELERATORS[p["card"]], replace(FAST, latency=p["latency_us"] * US)
    return low_precision_decode(bytes_per_weight, p["n"], accel=card, fabric=fabric)


def _facts(p: Params) -> dict[str, str]:
    step, bf16 = _step(p), _step(p, MODEL.dtype_bytes)
    return {
        **card_facts(p["card"]),
        "n": str(p["n"]),
        "latency": f"{p['latency_us']:g} us",
        "allreduces": str(MODEL.allreduces_per_token),
        "weights": f"{MODEL.params * FP8_BYTES / GB:g} GB",
        "streaming": format_seconds(step.weights_s, "ms", decimals=4),
        "allreduce_s": format_seconds(step.latency_s, "ms", decimals=2),
        "share": f"{100 * step.latency_s / step.total_s:.1f} %",
        "bf16_share": f"{100 * bf16.latency_s / bf16.total_s:.1f} %",
        "answer": format_seconds(step.total_s, "ms", decimals=3),
    }


def _mistakes(p: Params) -> list[Mistake]:
    step = _step(p)
    return [
        Mistake(
            "kept-bf16",
            _step(p, MODEL.dtype_bytes).total_s / MS,
            "That is bf16: FP8 halves the bytes.",
        ),
        Mistake(
            "halved-allreduces",
            (step.compute_s + step.latency_s / 2) / MS,
            "FP8 halves the weights' bytes; each all-reduce still costs the fabric's latency.",
        ),
        Mistake(
            "not-divided",
            (step.weights_s * p["n"] + step.latency_s) / MS,
            f"Each of the {p['n']} GPUs streams only 1/{p['n']} of the weights.",
        ),
    ]


PROBLEM = Problem(
    qid="q25",
    title="FP8 weights and the latency share",
    chapter="overlap",
    difficulty=3,
    unit="ms",
    template=(
        "The specimen's weights are stored in FP8, one byte each, and it decodes with tensor "
        "parallelism on **{n}** cards of the kind {card} ({hbm}); each of its {allreduces} "
        "all-reduces per token costs the fabric's latency, **{latency}**. With the lesson's "
        "arithmetic (a GPU's share of the weights over its HBM bandwidth, plus one latency per "
        "all-reduce), how long does a token take, in **ms**? What share do the all-reduces take?"
    ),
    solution_template=(
        "Weights: {weights}, so each GPU streams {weights} / {n} / {hbm} = {streaming}. "
        "All-reduces: {allreduces} x {latency} = {allreduce_s}, the same as in bf16. Token: "
        "**{answer}**, of which the all-reduces take {share} (in bf16 {bf16_share}): halving "
        "the bytes makes the wire's latency a larger share."
    ),
    defaults={"card": "h100", "n": 4, "latency_us": FAST.latency / US},
    sample=lambda rng: {
        "card": pick(rng, list(ACCELERATORS)),
        # Not 2 GPUs: there bf16 over 2 is FP8 over 1, and two mistakes give one number.
        "n": pick(rng, (4, 8)),
        "latency_us": pick(rng, (10.0, 25.0, 50.0)),
    },
    facts=_facts,
    reference=lambda p: _step(p).total_s / MS,
    mistakes=_mistakes,
    hint="FP8 halves the bytes each GPU streams; the all-reduces cost what they did.",
)
