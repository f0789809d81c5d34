"""Problem q23: what independent jitter adds to a token's mean time."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem
from lesson_lib.coursework.variants import pick
from lesson_lib.model.specimen import JITTER_BUSY, MODEL
from lesson_lib.model.tails import persistent_straggler_cost, slowest_rank_wait
from lesson_lib.model.units import US, format_seconds


def _extra_us(p: Params, collectives: int = MODEL.allreduces_per_token) -> float:
    return collectives * slowest_rank_wait(p["n"], p["jitter_us"] * US) / US


def _facts(p: Params) -> dict[str, str]:
    n = p["n"]
    return {
        "n": str(n),
        "jitter": f"{p['jitter_us']:g} us",
        "allreduces": str(MODEL.allreduces_per_token),
        "sum": " + ".join(["1"] + [f"1/{k}" for k in range(2, n + 1)]),
        "harmonic": f"{slowest_rank_wait(n, 1.0):.4f}",
        "wait": format_seconds(_extra_us(p, 1) * US, "us", decimals=3),
        "answer": format_seconds(_extra_us(p) * US, "us", decimals=1),
    }


def _mistakes(p: Params) -> list[Mistake]:
    n, jitter = p["n"], p["jitter_us"]
    return [
        Mistake(
            "no-harmonic",
            persistent_straggler_cost(jitter * US) / US,
            f"That is {MODEL.allreduces_per_token} x one rank's mean delay, the cost of one "
            "rank late by the same amount every time. With independent delays each all-reduce "
            f"waits for the slowest of {n}, whose mean is longer: the mean delay x H_{n}.",
        ),
        Mistake(
            "n-not-harmonic",
            MODEL.allreduces_per_token * n * jitter,
            f"The slowest of {n} delays is not {n} times one delay: its mean is the mean delay "
            f"x H_{n} = 1 + 1/2 + ... + 1/{n}.",
        ),
        Mistake(
            "one-collective",
            _extra_us(p, 1),
            f"That is one all-reduce's wait; a token waits {MODEL.allreduces_per_token} times.",
        ),
    ]


PROBLEM = Problem(
    qid="q23",
    title="What jitter costs a token",
    chapter="tails",
    difficulty=3,
    unit="us",
    template=(
        "The specimen decodes with tensor parallelism on **{n}** GPUs. At each of its {allreduces} "
        "all-reduces per token, every rank arrives after its own independent delay, exponential "
        "with a mean of **{jitter}**, and the all-reduce cannot finish before the last rank does. "
        "By how much does the mean time per token grow over the time without jitter, in **us**?"
    ),
    solution_template=(
        "Each all-reduce waits for the slowest of {n} delays, whose mean is {jitter} x "
        "H_{n}, with H_{n} = {sum} = {harmonic}: {wait} per all-reduce. Times {allreduces} "
        "all-reduces: **{answer}** more per token."
    ),
    defaults={"n": 4, "jitter_us": JITTER_BUSY / US},
    sample=lambda rng: {"n": pick(rng, (2, 4, 8)), "jitter_us": pick(rng, (1.0, 2.0, 5.0, 10.0))},
    facts=_facts,
    reference=_extra_us,
    mistakes=_mistakes,
    hint="The slowest of n exponential delays of mean j has mean j x (1 + 1/2 + ... + 1/n); "
    "a token pays that at every all-reduce.",
)
