"""Problem q22: sequences that fit at TP 8 with decode context parallelism."""

from __future__ import annotations

import math

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.kv_transfer import (
    context_parallel_max_sequences,
    context_parallel_sequence_bytes,
)
from lesson_lib.model.memory import state_share
from lesson_lib.model.specimen import GPU, MODEL
from lesson_lib.model.units import format_count

TP = 8


def _facts(p: Params) -> dict[str, str]:
    ctx, dcp = p["context"], p["dcp"]
    free = GPU.memory_bytes - MODEL.weight_bytes / TP
    kv_each = MODEL.kv_bytes(ctx) / MODEL.num_kv_heads / dcp
    return {
        "context": format_count(ctx),
        "dcp": str(dcp),
        "tp": str(TP),
        "kv_heads": str(MODEL.num_kv_heads),
        "copies": str(TP // MODEL.num_kv_heads),
        "gpu": fmt_bytes(GPU.memory_bytes, "GiB", 1),
        "gpu_gb": fmt_bytes(GPU.memory_bytes, "GB", 2),
        "weights": fmt_bytes(MODEL.weight_bytes / TP, "GB", 2),
        "free": fmt_bytes(free, "GB", 2),
        "kv": fmt_bytes(MODEL.kv_bytes(ctx), "GiB", 2),
        "kv_each": fmt_bytes(kv_each, "GiB", 3),
        "state": fmt_bytes(MODEL.state_bytes, "MiB", 4),
        "state_each": fmt_bytes(MODEL.state_bytes * state_share(MODEL, TP), "MiB", 4),
        "per_sequence": fmt_bytes(context_parallel_sequence_bytes(MODEL, ctx, TP, dcp), "GB", 4),
        "answer": str(context_parallel_max_sequences(MODEL, GPU, ctx, TP, dcp)),
    }


def _mistakes(p: Params) -> list[Mistake]:
    ctx, dcp = p["context"], p["dcp"]
    free = GPU.memory_bytes - MODEL.weight_bytes / TP
    state_each = MODEL.state_bytes * state_share(MODEL, TP)
    kv_each = MODEL.kv_bytes(ctx) / MODEL.num_kv_heads / dcp
    out = [
        Mistake(
            "kv-head-replication",
            math.floor(free / (MODEL.kv_bytes(ctx) / TP / dcp + state_each)),
            f"Only {MODEL.num_kv_heads} KV heads for {TP} GPUs: each GPU holds a whole head, "
            f"1/{MODEL.num_kv_heads} of the cache, before DCP shards it.",
        ),
        Mistake(
            "weights-not-split",
            math.floor((GPU.memory_bytes - MODEL.weight_bytes) / (kv_each + state_each)),
            f"Each GPU holds 1/{TP} of the weights, not all of them.",
        ),
        Mistake(
            "state-forgotten",
            math.floor(free / kv_each),
            "Each sequence also keeps its share of the Gated DeltaNet state.",
        ),
    ]
    if dcp > 1:
        out.append(
            Mistake(
                "state-sharded-by-dcp",
                math.floor(free / (kv_each + state_each / dcp)),
                "DCP shards the attention layers' KV cache along the tokens; the DeltaNet "
                "state is split by tensor parallelism only.",
            )
        )
    return out


PROBLEM = Problem(
    qid="q22",
    title="Sequences at TP 8 with decode context parallelism",
    chapter="kv_transfer",
    difficulty=3,
    kind="count",
    unit="sequences",
    template=(
        "The specimen decodes with tensor parallelism on **{tp}** GPUs of {gpu} each "
        "({gpu_gb}), and decode context parallelism of **{dcp}** (1 means none): DCP "
        "shards each KV head's tokens over the GPUs that would otherwise hold copies of "
        "it. How many sequences of **{context}** tokens fit on each GPU beside its share "
        "of the weights?"
    ),
    solution_template=(
        "Weights per GPU: {weights}, leaving {free}. The {kv_heads} KV heads on {tp} GPUs: "
        "each head on {copies} GPUs, so each GPU holds 1/{kv_heads} of the {kv} cache, "
        "and DCP {dcp} divides that by {dcp}: {kv_each}. The state splits by TP only: "
        "{state_each} of {state}. Per sequence {per_sequence}; {free} / {per_sequence}, "
        "rounded down: **{answer}** sequences."
    ),
    defaults={"context": MODEL.max_context, "dcp": 2},
    sample=lambda rng: {
        # Nine lengths from 16,384 tokens to the longest: half the context at DCP 1 fits
        # as many as the whole at DCP 2, so fewer lengths gave five answers in all.
        "context": pick(
            rng,
            (16_384, 24_576, 32_768, 49_152, 65_536, 98_304, 131_072, 196_608, MODEL.max_context),
        ),
        "dcp": pick(rng, (1, 2)),
    },
    facts=_facts,
    reference=lambda p: context_parallel_max_sequences(MODEL, GPU, p["context"], TP, p["dcp"]),
    mistakes=_mistakes,
    hint="Free = card - weights / TP; per sequence = KV x (1 / KV heads) / DCP + the "
    "state / TP; round down.",
)
