"""Problem q21: a sharded cache over a NIC per GPU."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.kv_transfer import kv_transfer_bytes, sharded_transfer
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.specimen import INTER_NODE, MODEL
from lesson_lib.model.units import MS, format_count, format_rate, format_seconds

#: GPUs per node in the statement (all of a node's NICs, one per GPU).
GPUS_PER_NODE = 8


def _time(p: Params) -> float:
    return sharded_transfer(MODEL, p["context"], INTER_NODE, p["n"], p["n"]).time_s


def _facts(p: Params) -> dict[str, str]:
    n, ctx = p["n"], p["context"]
    t = sharded_transfer(MODEL, ctx, INTER_NODE, n, n)
    heads = MODEL.num_kv_heads
    copies = (
        f"With {n} GPUs and only {heads} KV heads, each decode GPU holds one whole head, "
        f"1/{heads} of the KV cache (heads are copied), and 1/{n} of the state."
        if n > heads
        else f"Each decode GPU holds 1/{n} of the {heads} KV heads and 1/{n} of the state."
    )
    return {
        "n": str(n),
        "context": format_count(ctx),
        "per_node": str(GPUS_PER_NODE),
        "nic": format_rate(INTER_NODE.bandwidth),
        "latency": format_seconds(INTER_NODE.latency, "us"),
        "kv": fmt_bytes(MODEL.kv_bytes(ctx), "GiB", 3),
        "state": fmt_bytes(MODEL.state_bytes, "MiB", 4),
        "copies": copies,
        "kv_each": fmt_bytes(MODEL.kv_bytes(ctx) * kv_share(MODEL, n), "GiB", 4),
        "state_each": fmt_bytes(MODEL.state_bytes * state_share(MODEL, n), "MiB", 4),
        "port": fmt_bytes(t.port_bytes, "GB", 3),
        "time": format_seconds(t.time_s, "ms"),
    }


def _mistakes(p: Params) -> list[Mistake]:
    n, ctx = p["n"], p["context"]
    total = kv_transfer_bytes(MODEL, ctx)
    bw, alpha = INTER_NODE.bandwidth, INTER_NODE.latency
    kv_each = MODEL.kv_bytes(ctx) * kv_share(MODEL, n)
    return [
        Mistake(
            "one-nic",
            (alpha + total / bw) / MS,
            "Each GPU sends its own shard through its own NIC: the shards cross at once, "
            "not one after another through a single NIC.",
        ),
        Mistake(
            "node-bandwidth",
            (alpha + total / (GPUS_PER_NODE * bw)) / MS,
            f"Only the {n} GPUs that hold the cache send it; the node's other NICs belong "
            "to other GPUs. Count bandwidth per GPU, not per node.",
        ),
        Mistake(
            "kv-head-replication",
            (alpha + MODEL.kv_bytes(ctx) / n / bw + MODEL.state_bytes / n / bw) / MS,
            f"There are only {MODEL.num_kv_heads} KV heads: past that many GPUs each one "
            "holds a whole head, so its share of the KV cache stops shrinking.",
        ),
        Mistake(
            "state-forgotten",
            (alpha + kv_each / bw) / MS,
            "Each GPU also sends its share of the Gated DeltaNet state.",
        ),
        Mistake(
            "bits-twice",
            (alpha + (kv_each + MODEL.state_bytes * state_share(MODEL, n)) / (8 * bw)) / MS,
            "50 GB/s is already bytes per second (400 Gb/s / 8): do not divide by 8 again.",
        ),
    ]


PROBLEM = Problem(
    qid="q21",
    title="A sharded cache over a NIC per GPU",
    chapter="kv_transfer",
    difficulty=3,
    unit="ms",
    # Three figures tell leaving out the state (under 1 % at full context) apart.
    sig_figs=3,
    template=(
        "A prefill instance of the specimen runs with tensor parallelism on **{n}** GPUs "
        "of one node and hands each request's cache to a decode instance on **{n}** GPUs "
        "of another node. Each node has {per_node} GPUs and one NIC per GPU, each "
        "{nic} per direction with {latency} of latency; each prefill GPU sends its "
        "own shard to the decode GPU that needs it. How long does the hand-off of one "
        "**{context}**-token request take, in **ms**?"
    ),
    solution_template=(
        "The cache is {kv} of KV plus {state} of state. {copies} So the busiest NIC "
        "carries {kv_each} + {state_each} = {port}, all NICs at once: {port} / {nic} "
        "+ {latency} = **{time}**."
    ),
    defaults={"n": 4, "context": MODEL.max_context},
    sample=lambda rng: {
        "n": pick(rng, (2, 4, 8)),
        "context": pick(rng, (32_768, 65_536, 131_072, MODEL.max_context)),
    },
    facts=_facts,
    reference=lambda p: _time(p) / MS,
    mistakes=_mistakes,
    hint="Per GPU: its share of the KV heads (never less than one head) and of the state; "
    "all NICs send at once, so the time is one GPU's bytes / one NIC's rate + latency.",
)
