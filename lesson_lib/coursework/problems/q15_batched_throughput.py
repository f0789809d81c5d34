"""Problem q15: batched throughput of TP 4 x DP 2 on two nodes."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem
from lesson_lib.coursework.variants import pick
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.specimen import FAST, GPU, MODEL
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import format_count, format_seconds


def _plan(p: Params):
    return plan_cluster(MODEL, GPU, 4, 2, 4, 1, context_tokens=p["context"], batch=p["batch"])


def _facts(p: Params) -> dict[str, str]:
    plan = _plan(p)
    step = plan.batched_step
    return {
        "batch": str(p["batch"]),
        "context": format_count(p["context"]),
        "weights": format_seconds(step.weights_s, "ms"),
        "reads": format_seconds(step.kv_read_s, "ms"),
        "latency": format_seconds(step.latency_s, "ms"),
        "bandwidth": format_seconds(step.bandwidth_s, "ms"),
        "step": format_seconds(step.total_s, "ms"),
        "per_replica": format_count(plan.tokens_per_s_replica),
        "answer": format_count(plan.tokens_per_s_total),
    }


def _mistakes(p: Params) -> list[Mistake]:
    plan = _plan(p)
    no_reads = decode_step(MODEL, GPU, FAST, 4, batch=p["batch"])
    return [
        Mistake(
            "one-sequence-each",
            2 / plan.token_time_s,
            "That is two replicas decoding one sequence each. Each replica decodes its "
            "whole batch per step: throughput is batch / step time per replica.",
        ),
        Mistake(
            "kv-reads-forgotten",
            2 * p["batch"] / no_reads.total_s,
            "Each step also reads every sequence's KV cache and DeltaNet state: at long "
            "contexts that is most of the step.",
        ),
        Mistake(
            "one-replica",
            plan.tokens_per_s_replica,
            "That is one replica; DP 2 runs two, each with its own batch.",
        ),
    ]


PROBLEM = Problem(
    qid="q15",
    title="Batched throughput of two replicas",
    chapter="cluster",
    difficulty=3,
    unit="tokens/s",
    rtol=0.02,
    template=(
        "Two nodes of four GPUs serve the specimen as **TP 4 x DP 2** (TP inside each node, "
        "the lesson's fast fabric). Each replica decodes **{batch}** sequences together, each "
        "with a **{context}**-token context. How many tokens per second do the eight GPUs "
        "produce in all? Include reading the KV caches, and reading and writing back the "
        "DeltaNet state, in each step."
    ),
    solution_template=(
        "One replica's step: weights {weights} + KV reads and state reads and writes {reads} "
        "+ latency "
        "{latency} + bytes {bandwidth} = {step}. It yields {batch} tokens: {per_replica} "
        "tokens/s per replica, **{answer}** tokens/s for both."
    ),
    defaults={"batch": 8, "context": MODEL.max_context},
    sample=lambda rng: {
        "batch": pick(rng, (4, 8, 12, 16)),
        "context": pick(rng, (32_768, 65_536, 131_072, 262_144)),
    },
    facts=_facts,
    reference=lambda p: _plan(p).tokens_per_s_total,
    mistakes=_mistakes,
    hint="Time one replica's decode step for its whole batch (weights once, every "
    "sequence's KV reads, its state read and written back, 128 all-reduces of batch "
    "vectors), then divide its tokens by it.",
)
