"""Problem q24: the price of a million output tokens at a server's goodput."""

from __future__ import annotations

from functools import cache

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem
from lesson_lib.coursework.variants import pick
from lesson_lib.model import specimen
from lesson_lib.model.goodput import goodput, per_output_token, specimen_server


@cache
def _page_rate() -> float:
    """The goodput page's colocated goodput on 4 GPUs, requests/s, as the page prints it."""
    server = specimen_server("colocated", specimen.PROMPT_TOKENS, specimen.GOODPUT_OUTPUT_TOKENS)
    return round(goodput(server, specimen.TTFT_TARGET, 1 / specimen.TOKENS_PER_S), 2)


def _price(p: Params, gpus: int = 0, tokens: int = 0, hour: float = 3600.0) -> float:
    rate, per_gpu_s = p["rate"] or _page_rate(), p["usd"] / hour
    return per_output_token(rate, tokens or p["tokens"], gpus or p["gpus"], per_gpu_s) * 1e6


def _facts(p: Params) -> dict[str, str]:
    rate = p["rate"] or _page_rate()
    return {
        "gpus": str(p["gpus"]),
        "rate": f"{rate:g}",
        "tokens": str(p["tokens"]),
        "usd": f"{p['usd']:.2f} USD",
        "per_s": f"{p['gpus'] * p['usd'] / 3600:.6f} USD",
        "tokens_s": f"{rate * p['tokens']:,.2f}",
        "answer": f"{_price(p):.4f} USD",
    }


def _mistakes(p: Params) -> list[Mistake]:
    return [
        Mistake("one-gpu", _price(p, gpus=1), f"The server pays for all {p['gpus']} GPUs."),
        Mistake("per-request", _price(p, tokens=1), "That is per million requests, not tokens."),
        Mistake("per-thousand", _price(p) / 1e3, "The price asked is per million tokens."),
        Mistake("hours-as-seconds", _price(p, hour=1.0), "A GPU-hour is 3600 s: divide by it."),
    ]


PROBLEM = Problem(
    qid="q24",
    title="Price per million output tokens",
    chapter="goodput",
    difficulty=3,
    unit="USD",
    template=(
        "A server of **{gpus}** GPUs meets its TTFT and TPOT targets for up to **{rate}** "
        "requests/s (its goodput), each request answering **{tokens}** output tokens. One GPU "
        "costs **{usd}** an hour. What do a million output tokens cost at that goodput, in "
        "**USD**?"
    ),
    solution_template=(
        "The server costs {gpus} x {usd} / 3600 s = {per_s} a second and answers {rate} x "
        "{tokens} = {tokens_s} tokens a second; their ratio times a million: **{answer}** "
        "per million output tokens."
    ),
    defaults={
        "gpus": 4,
        "rate": None,
        "tokens": specimen.GOODPUT_OUTPUT_TOKENS,
        "usd": specimen.GPU_HOUR_USD,
    },
    sample=lambda rng: {
        "gpus": pick(rng, (2, 4, 8)),
        "rate": pick(rng, (2.5, 4.0, 5.0, 6.5, 8.0, 10.0)),
        "tokens": pick(rng, (128, 256, 512)),
        "usd": pick(rng, (2.0, 2.5, 3.5)),
    },
    facts=_facts,
    reference=_price,
    mistakes=_mistakes,
    hint="USD a second for all the GPUs (the hourly price / 3600), over output tokens a second "
    "(requests/s x tokens each), times a million.",
)
