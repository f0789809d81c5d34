"""Problem q14: the decode batch at which all-reduces turn bandwidth-bound."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fabric_of, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.collectives import allreduce_factor, crossover_tokens
from lesson_lib.model.specimen import FAST, MODEL
from lesson_lib.model.units import GB, US, format_count, format_rate


def _reference(p: Params) -> float:
    return crossover_tokens(MODEL, fabric_of(p["latency_us"], p["bandwidth_gbs"]), p["n"])


def _facts(p: Params) -> dict[str, str]:
    n = p["n"]
    alpha_b = p["latency_us"] * US * p["bandwidth_gbs"] * GB
    return {
        "n": str(n),
        "latency": f"{p['latency_us']:g} us",
        "bandwidth": format_rate(p["bandwidth_gbs"] * GB, "GB"),
        "vector": fmt_bytes(MODEL.hidden_vector_bytes, "KiB", decimals=0),
        "vector_bytes": format_count(MODEL.hidden_vector_bytes),
        "factor": format_count(allreduce_factor(n), decimals=3),
        "alpha_b": format_count(alpha_b) + " bytes",
        "answer": format_count(_reference(p)),
    }


def _mistakes(p: Params) -> list[Mistake]:
    n = p["n"]
    alpha_b = p["latency_us"] * US * p["bandwidth_gbs"] * GB
    return [
        Mistake(
            "factor-forgotten",
            alpha_b / MODEL.hidden_vector_bytes,
            "Each GPU sends 2(N-1)/N of the payload in a ring all-reduce, so the bytes term "
            "is 2(N-1)/N x b x the hidden vector / B.",
        ),
        Mistake(
            "kib-as-kb",
            alpha_b / (allreduce_factor(n) * 10_000),
            "A hidden vector of 5,120 bf16 values is 10,240 bytes (10 KiB), not 10,000.",
        ),
        Mistake(
            "bytes-not-sequences",
            alpha_b,
            "alpha x B is the crossover in bytes; the question asks for sequences, each "
            "adding one hidden vector to every all-reduce.",
        ),
    ]


PROBLEM = Problem(
    qid="q14",
    title="The batch at the crossover",
    chapter="batching",
    difficulty=3,
    unit="sequences",
    template=(
        "The specimen is decoded with tensor parallelism on **{n}** GPUs, over a fabric that "
        "costs **{latency}** per all-reduce and moves **{bandwidth}** per direction, with a "
        "ring all-reduce. A batch of b sequences puts b hidden vectors ({vector} each) into "
        "every all-reduce. At what batch b are the all-reduce's latency and bandwidth terms "
        "equal? Write the two terms first, then solve."
    ),
    solution_template=(
        "Latency term: alpha. Bandwidth term: {factor} x b x {vector_bytes} bytes / B. "
        "Equal at b = alpha x B / ({factor} x {vector_bytes}) = {alpha_b} / "
        "({factor} x {vector_bytes}) = **{answer}** sequences. Smaller batches are "
        "latency-bound, larger ones bandwidth-bound, whatever the phase."
    ),
    defaults={"n": 4, "latency_us": FAST.latency / US, "bandwidth_gbs": FAST.bandwidth / GB},
    sample=lambda rng: {
        "n": pick(rng, (2, 4, 8)),
        "latency_us": pick(rng, (5.0, 10.0, 20.0)),
        "bandwidth_gbs": pick(rng, (100.0, 200.0, 450.0)),
    },
    facts=_facts,
    reference=_reference,
    mistakes=_mistakes,
    hint="Set alpha equal to 2(N-1)/N x b x (hidden vector bytes) / B and solve for b.",
)
