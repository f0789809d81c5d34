"""Problem q5: decode time on another fabric."""

from __future__ import annotations

from typing import Any

from lesson_lib.coursework.problems.bank import (
    ACCELERATORS,
    Mistake,
    Params,
    Problem,
    card_facts,
    fabric_of,
    fmt_bytes,
)
from lesson_lib.coursework.variants import pick
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import MS, US, format_count, format_seconds


def _step(p: Params, **kw: Any):
    return decode_step(MODEL, ACCELERATORS[p["card"]], fabric_of(p["latency_us"]), p["n"], **kw)


def _facts(p: Params) -> dict[str, str]:
    step = _step(p, include_bandwidth=False)
    return {
        **card_facts(p["card"]),
        "n": str(p["n"]),
        "latency": format_seconds(p["latency_us"] * US, "us"),
        "weights": fmt_bytes(MODEL.weight_bytes, "GB"),
        "share": fmt_bytes(MODEL.weight_bytes / p["n"], "GB"),
        "compute": format_seconds(step.compute_s, "ms"),
        "allreduces": str(MODEL.allreduces_per_token),
        "comm": format_seconds(step.latency_s, "ms"),
        "total": format_seconds(step.total_s, "ms"),
        "tokens_per_s": format_count(step.tokens_per_s),
    }


def _mistakes(p: Params) -> list[Mistake]:
    step = _step(p, include_bandwidth=False)
    one = decode_step(MODEL, ACCELERATORS[p["card"]], fabric_of(p["latency_us"]), 1)
    return [
        Mistake(
            "compute-only",
            step.compute_s / MS,
            "That is the weight-streaming time alone: every token also waits for "
            f"{MODEL.allreduces_per_token} all-reduces, each costing the fabric's latency.",
        ),
        Mistake(
            "comm-only",
            step.latency_s / MS,
            "That is the communication alone: add the time to stream this GPU's share of "
            "the weights from HBM.",
        ),
        Mistake(
            "one-per-layer",
            (step.compute_s + step.latency_s / MODEL.allreduces_per_layer) / MS,
            f"There are {MODEL.allreduces_per_layer} all-reduces per layer, "
            f"{MODEL.allreduces_per_token} per token, not one per layer.",
        ),
        Mistake(
            "full-weights",
            (one.compute_s + step.latency_s) / MS,
            "With tensor parallelism each GPU streams only its 1/N share of the weights.",
        ),
    ]


PROBLEM = Problem(
    qid="q5",
    title="Decode time on another fabric",
    chapter="latency",
    difficulty=2,
    unit="ms",
    template=(
        "The specimen model runs on **{n}** GPUs ({card}, {hbm} of HBM bandwidth) joined "
        "by a fabric that costs **{latency}** per small all-reduce. Using the lesson's "
        "arithmetic (each GPU streams its share of the weights from HBM, plus one fixed "
        "latency per all-reduce; leave the bytes on the wire out), how long does one "
        "decoded token take, in **ms**?"
    ),
    solution_template=(
        "Weight streaming: {share} per GPU ({weights} / {n}) at {hbm} = {compute}. "
        "Communication: {allreduces} all-reduces x {latency} = {comm}. Total: "
        "**{total}** per token, about {tokens_per_s} tokens/s for one sequence."
    ),
    defaults={"n": 4, "latency_us": 25, "card": "h100"},
    sample=lambda rng: {
        "n": pick(rng, (2, 4)),
        # From 5 us up: at 2 us on two A100s the 128 latencies are 2 % of the step, and leaving them
        # out (or counting one per layer) fell within the right answer's tolerance.
        "latency_us": pick(rng, (5, 8, 10, 15, 20, 25, 30, 40)),
        "card": pick(rng, list(ACCELERATORS)),
    },
    facts=_facts,
    reference=lambda p: _step(p, include_bandwidth=False).total_s / MS,
    mistakes=_mistakes,
    hint="Time = (weights / N) / HBM bandwidth + all-reduces per token x latency.",
)
