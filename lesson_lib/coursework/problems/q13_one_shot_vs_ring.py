"""Problem q13: how much a one-shot all-reduce saves over a ring."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.collectives import allreduce_factor, allreduce_steps, allreduce_time
from lesson_lib.model.specimen import FAST_RING, MODEL, NVLINK_BANDWIDTH
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import US, format_count, format_rate, format_seconds


def _time(p: Params, algorithm: str) -> float:
    name = f"{p['base_us']:g} us + {p['hop_us']:g} us a step"
    fabric = Fabric(name, p["base_us"] * US, NVLINK_BANDWIDTH, hop_latency=p["hop_us"] * US)
    return allreduce_time(MODEL.hidden_vector_bytes, p["n"], fabric, algorithm)


def _saving_us(p: Params) -> float:
    return (_time(p, "ring") - _time(p, "one_shot")) / US


def _facts(p: Params) -> dict[str, str]:
    n, hop = p["n"], p["hop_us"]

    def us(seconds: float) -> str:
        return format_seconds(seconds, "us", decimals=3)

    return {
        "n": str(n),
        "base": f"{p['base_us']:g} us",
        "hop": f"{hop:g} us",
        "bandwidth": format_rate(NVLINK_BANDWIDTH, "GB"),
        "vector": fmt_bytes(MODEL.hidden_vector_bytes, "KiB", decimals=0),
        "ring_steps": str(allreduce_steps(n, "ring")),
        "ring_factor": format_count(allreduce_factor(n, "ring"), decimals=3),
        "one_factor": str(n - 1),
        "ring_time": us(_time(p, "ring")),
        "one_time": us(_time(p, "one_shot")),
        "saving": format_count(_saving_us(p), decimals=2) + " us",
    }


def _mistakes(p: Params) -> list[Mistake]:
    n, hop = p["n"], p["hop_us"]
    bytes_extra = (
        (allreduce_factor(n, "one_shot") - allreduce_factor(n, "ring"))
        * MODEL.hidden_vector_bytes
        / NVLINK_BANDWIDTH
        / US
    )
    return [
        Mistake(
            "ring-one-pass",
            (n - 1 - 1) * hop - bytes_extra,
            "A ring all-reduce is two passes around the ring, a reduce-scatter and an "
            "all-gather: 2(N-1) steps, not N-1.",
        ),
        Mistake(
            "oneshot-steps",
            (2 * (n - 1) - (n - 1)) * hop - bytes_extra,
            "One-shot reads every peer's buffer at once: one step on the critical path, not N-1.",
        ),
        Mistake(
            "ring-steps",
            (2 * n - 1) * hop - bytes_extra,
            "The ring of N GPUs makes 2(N-1) steps: N-1 to reduce-scatter and N-1 to all-gather.",
        ),
    ]


PROBLEM = Problem(
    qid="q13",
    title="One-shot against the ring",
    chapter="algorithms",
    difficulty=3,
    unit="us",
    template=(
        "A fabric charges **{base}** per all-reduce plus **{hop}** for every step on the "
        "critical path, and moves {bandwidth} per direction. On **{n}** GPUs, how many "
        "microseconds does a **one-shot** all-reduce of one hidden vector ({vector}) save "
        "over a **ring** all-reduce? Count steps and bytes per GPU for each algorithm "
        "before you compute."
    ),
    solution_template=(
        "Ring: {ring_steps} steps and {ring_factor} payloads per GPU, so {base} + "
        "{ring_steps} x {hop} plus the bytes: {ring_time}. One-shot: 1 step and "
        "{one_factor} payloads per GPU: {one_time}. It saves **{saving}**: at this size "
        "the steps are everything and the extra bytes almost nothing."
    ),
    defaults={"n": 8, "base_us": FAST_RING.latency / US, "hop_us": FAST_RING.hop_latency / US},
    sample=lambda rng: {
        "n": pick(rng, (4, 6, 8)),
        "base_us": pick(rng, (4.0, 5.0, 6.0, 8.0)),
        "hop_us": pick(rng, (1.0, 1.5, 2.0, 2.5)),
    },
    facts=_facts,
    reference=_saving_us,
    mistakes=_mistakes,
    hint="Each algorithm's time is base + steps x per-step latency + bytes per GPU / "
    "bandwidth; subtract the one-shot time from the ring time.",
)
