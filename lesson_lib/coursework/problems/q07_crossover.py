"""Problem q7: crossover message size."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fabric_of, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.collectives import crossover_bytes, ring_allreduce_factor
from lesson_lib.model.specimen import MODEL, PCIE_BANDWIDTH, PROMPT_TOKENS
from lesson_lib.model.specimen import SLOW as SLOW_FABRIC
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import GB, US, MiB, format_count, format_rate, format_seconds


def _wire(p: Params) -> Fabric:
    return fabric_of(p["latency_us"], p["bandwidth_gbs"])


def _facts(p: Params) -> dict[str, str]:
    f = _wire(p)
    n = p["n"]
    return {
        "latency": format_seconds(f.latency, "us"),
        "bandwidth": format_rate(f.bandwidth),
        "n": str(n),
        "factor": format_count(ring_allreduce_factor(n), decimals=4),
        "alpha_b": fmt_bytes(f.latency * f.bandwidth, "MB", 3),
        "crossover": fmt_bytes(crossover_bytes(f, n), "MB", 3),
        "crossover_mib": fmt_bytes(crossover_bytes(f, n), "MiB", 3),
        "vector": fmt_bytes(MODEL.hidden_vector_bytes, "KiB"),
        "prompt": format_count(PROMPT_TOKENS),
        "prompt_payload": fmt_bytes(PROMPT_TOKENS * MODEL.hidden_vector_bytes, "MiB"),
    }


def _mistakes(p: Params) -> list[Mistake]:
    f = _wire(p)
    n = p["n"]
    return [
        Mistake(
            "alpha-b-only",
            f.latency * f.bandwidth / MiB,
            "That is alpha x B, right for 2 GPUs only: with N ranks the wire carries "
            "2(N-1)/N times the payload, so divide by that factor.",
        ),
        Mistake(
            "factor-multiplied",
            f.latency * f.bandwidth * ring_allreduce_factor(n) / MiB,
            "The factor 2(N-1)/N multiplies the payload on the wire, so the crossover "
            "payload is alpha x B divided by it, not multiplied.",
        ),
        Mistake(
            "us-as-ms",
            crossover_bytes(f, n) * 1e3 / MiB,
            "1000 times too large: a microsecond is 1e-6 s, not 1e-3 s.",
        ),
    ]


PROBLEM = Problem(
    qid="q7",
    title="The crossover message size",
    chapter="prefill",
    difficulty=2,
    unit="MiB",
    close_rtol=0.03,
    template=(
        "A fabric has a fixed cost of **{latency}** per all-reduce and "
        "**{bandwidth}** per rank and direction. For a ring all-reduce over **N = {n}** "
        "ranks, at what payload size does the bandwidth term (wire bytes / B) equal the "
        "latency term? Answer in **MiB** (2\u00b2\u2070 bytes)."
    ),
    solution_template=(
        "Set alpha = 2(N-1)/N x m / B and solve for the payload m: m = alpha x B / "
        "(2(N-1)/N). alpha x B = {latency} x {bandwidth} = {alpha_b}; the factor is "
        "{factor}; so m = {crossover} = **{crossover_mib}**. A decode message "
        "({vector}) is far below it: latency-bound. A {prompt}-token prefill message "
        "({prompt_payload}) is far above: bandwidth-bound."
    ),
    defaults={"latency_us": SLOW_FABRIC.latency / US, "bandwidth_gbs": PCIE_BANDWIDTH / GB, "n": 4},
    sample=lambda rng: {
        "latency_us": pick(rng, (5, 10, 20, 50)),
        "bandwidth_gbs": pick(rng, (50, 64, 100, 200, 450, 900)),
        "n": pick(rng, (2, 4, 8)),
    },
    facts=_facts,
    reference=lambda p: crossover_bytes(_wire(p), p["n"]) / MiB,
    mistakes=_mistakes,
    hint="alpha = 2(N-1)/N x m / B; keep seconds and bytes/s, then convert bytes to MiB (2**20 bytes).",
)
