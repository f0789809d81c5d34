"""Problem q8: prefill wire time."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.collectives import allreduce_wire_bytes, ring_allreduce_factor
from lesson_lib.model.specimen import GPU, MODEL, PCIE_BANDWIDTH, PROMPT_TOKENS
from lesson_lib.model.specimen import SLOW as SLOW_FABRIC
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import prefill_step
from lesson_lib.model.units import GB, MS, GiB, format_count, format_rate, format_seconds


def _step(p: Params):
    fabric = Fabric("prefill fabric", SLOW_FABRIC.latency, p["bandwidth_gbs"] * GB)
    return prefill_step(MODEL, GPU, fabric, p["n"], p["tokens"])


def _facts(p: Params) -> dict[str, str]:
    step = _step(p)
    payload = p["tokens"] * MODEL.hidden_vector_bytes
    wire_total = MODEL.allreduces_per_token * allreduce_wire_bytes(payload, p["n"])
    return {
        "tokens": format_count(p["tokens"]),
        "n": str(p["n"]),
        "bandwidth": format_rate(p["bandwidth_gbs"] * GB),
        "allreduces": str(MODEL.allreduces_per_token),
        "vector": fmt_bytes(MODEL.hidden_vector_bytes, "KiB"),
        "payload": fmt_bytes(payload, "MiB"),
        "factor": format_count(ring_allreduce_factor(p["n"]), decimals=4),
        "wire_total": fmt_bytes(wire_total, "GiB", 3),
        "wire_total_gb": fmt_bytes(wire_total, "GB", 3),
        "time": format_seconds(step.bandwidth_s, "ms"),
        "latency_total": format_seconds(step.latency_s, "ms"),
        "flops": format_seconds(step.flops_s, "ms"),
    }


def _mistakes(p: Params) -> list[Mistake]:
    step = _step(p)
    payload = p["tokens"] * MODEL.hidden_vector_bytes
    bandwidth = p["bandwidth_gbs"] * GB
    return [
        Mistake(
            "payload-not-wire",
            MODEL.allreduces_per_token * payload / bandwidth / MS,
            "You used the payload, not the wire bytes: each rank sends 2(N-1)/N times it.",
        ),
        Mistake(
            "one-allreduce",
            step.bandwidth_s / MODEL.allreduces_per_token / MS,
            f"That is one all-reduce; the prompt goes through all {MODEL.allreduces_per_token}.",
        ),
        Mistake(
            "gib-as-gb",
            step.bandwidth_s * GiB / GB / MS,
            "GB/s is 1e9 bytes per second; convert GiB of traffic to bytes (x 2**30) first.",
        ),
    ]


PROBLEM = Problem(
    qid="q8",
    title="Prefill time on the wire",
    chapter="prefill",
    difficulty=2,
    unit="ms",
    template=(
        "The specimen prefills a prompt of **{tokens}** tokens with tensor parallelism "
        "on **{n}** GPUs. Each of its {allreduces} all-reduces now carries one hidden "
        "vector per prompt token. The fabric carries **{bandwidth}** per rank and "
        "direction. How long do the bytes take on the wire for the whole prompt (the "
        "bandwidth term only, all all-reduces together), in **ms**?"
    ),
    solution_template=(
        "Payload of one all-reduce: {tokens} x {vector} = {payload}. Each rank sends "
        "2(N-1)/N = {factor} times that, {allreduces} times: {wire_total} "
        "({wire_total_gb}). At {bandwidth}: **{time}**. Compare the latency term, "
        "{latency_total} on a slow fabric, and the arithmetic, {flops}: in prefill the "
        "bytes matter."
    ),
    defaults={"tokens": 2 * PROMPT_TOKENS, "n": 4, "bandwidth_gbs": PCIE_BANDWIDTH / GB},
    sample=lambda rng: {
        "tokens": pick(rng, (1024, 2048, 8192, 16384, 32768)),
        "n": pick(rng, (2, 4)),
        "bandwidth_gbs": pick(rng, (64, 100, 200, 450, 900)),
    },
    facts=_facts,
    reference=lambda p: _step(p).bandwidth_s / MS,
    mistakes=_mistakes,
    hint="Wire bytes = all-reduces x 2(N-1)/N x tokens x hidden vector bytes; "
    "divide by the bandwidth in bytes/s.",
)
