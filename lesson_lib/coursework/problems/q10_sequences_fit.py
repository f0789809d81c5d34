"""Problem q10: how many full-length sequences fit, hybrid variant."""

from __future__ import annotations

import math
from dataclasses import replace

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes, hybrid_model
from lesson_lib.coursework.variants import pick
from lesson_lib.model.memory import max_sequences, memory_budget, state_share
from lesson_lib.model.specimen import GPU, MODEL
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.units import GB, GiB, format_count


def _model(p: Params) -> ModelSpec:
    return hybrid_model(p["attention_layers"], p["kv_heads"], p["head_dim"])


def _facts(p: Params) -> dict[str, str]:
    m = _model(p)
    n = p["n"]
    ctx = m.max_context
    empty = memory_budget(m, GPU, n, ctx, 0)
    one = memory_budget(m, GPU, n, ctx, 1)
    heads_per_rank = math.ceil(m.num_kv_heads / n)
    return {
        "attention_layers": str(m.num_attention_layers),
        "layers": str(m.num_layers),
        "linear_layers": str(m.num_linear_layers),
        "kv_heads": str(m.num_kv_heads),
        "head_dim": str(m.head_dim),
        "context": format_count(ctx),
        "n": str(n),
        "gpu": f"{fmt_bytes(GPU.memory_bytes, 'GiB', 1)} ({fmt_bytes(GPU.memory_bytes, 'GB')}, "
        "what a card sold as 80 GB exposes)",
        "weights": fmt_bytes(m.weight_bytes, "GB"),
        "weights_share": fmt_bytes(empty.weights_bytes, "GB"),
        "free": fmt_bytes(empty.free_bytes, "GB"),
        "per_token": fmt_bytes(m.kv_bytes_per_token, "KiB"),
        "kv_full": fmt_bytes(m.kv_bytes(ctx), "GiB"),
        "heads_per_rank": str(heads_per_rank),
        "kv_share": fmt_bytes(one.kv_bytes, "GiB", 3),
        "kv_share_gb": fmt_bytes(one.kv_bytes, "GB", 3),
        "state": fmt_bytes(m.state_bytes, "MiB", 1),
        "state_share": fmt_bytes(one.state_bytes, "MiB", 1),
        "per_seq": fmt_bytes(one.used_bytes - empty.used_bytes, "GB", 3),
        "answer": str(max_sequences(m, GPU, n, ctx)),
        "replicated": (
            f"There are only {m.num_kv_heads} KV heads for {n} GPUs, so each GPU still holds "
            f"{heads_per_rank} whole head{'s' if heads_per_rank > 1 else ''}: the cache does not shrink N-fold."
            if m.num_kv_heads < n
            else f"The {m.num_kv_heads} KV heads split evenly, {heads_per_rank} per GPU."
        ),
    }


def _mistakes(p: Params) -> list[Mistake]:
    m = _model(p)
    n = p["n"]
    ctx = m.max_context
    empty = memory_budget(m, GPU, n, ctx, 0)
    one = memory_budget(m, GPU, n, ctx, 1)
    per_seq = one.used_bytes - empty.used_bytes
    state = m.state_bytes * state_share(m, n)
    out = []
    if m.num_kv_heads < n:
        out.append(
            Mistake(
                "kv-head-replication",
                math.floor(empty.free_bytes / (m.kv_bytes(ctx) / n + state)),
                f"Only {m.num_kv_heads} KV heads: past that many GPUs the heads are replicated, "
                "so each GPU keeps a whole head's cache, not 1/N of the cache.",
            )
        )
    out += [
        Mistake(
            "weights-not-split",
            math.floor((GPU.memory_bytes - m.weight_bytes) / per_seq),
            "Tensor parallelism splits the weights too: each GPU holds 1/N of them.",
        ),
        Mistake(
            "label-gb",
            max_sequences(m, replace(GPU, memory_bytes=80 * GB), n, ctx),
            "The card exposes 79.1 GiB as PyTorch counts it, about 84.9 GB; reading its "
            "'80 GB' label as 80 x 10^9 bytes undercounts.",
        ),
        Mistake(
            "label-gib",
            max_sequences(m, replace(GPU, memory_bytes=80 * GiB), n, ctx),
            "Use the memory the card exposes (79.1 GiB), not the 80 GiB on its label.",
        ),
        Mistake(
            "state-forgotten",
            math.floor(empty.free_bytes / (per_seq - state)),
            "Each sequence also keeps the DeltaNet layers' fixed state beside its KV cache.",
        ),
    ]
    return out


PROBLEM = Problem(
    qid="q10",
    title="Sequences that fit, hybrid variant",
    chapter="sizing",
    difficulty=3,
    kind="count",
    unit="sequences",
    template=(
        "A hybrid model like the specimen (same parameters, {layers} layers, same "
        "Gated DeltaNet layers) has only **{attention_layers}** full-attention layers, "
        "each with **{kv_heads}** KV heads of dimension **{head_dim}**, and the rest are "
        "DeltaNet layers. It runs with tensor parallelism on **{n}** GPUs of {gpu} each. "
        "How many full-length sequences ({context} tokens) fit on each GPU beside its "
        "share of the weights? (Use `lesson_lib`'s memory model, which counts the "
        "DeltaNet state too.)"
    ),
    solution_template=(
        "Weights per GPU: {weights} / {n} = {weights_share}, leaving {free}. KV cache "
        "per token: {per_token}, so {kv_full} per full-length sequence. {replicated} "
        "Each GPU holds {heads_per_rank} of {kv_heads} heads: {kv_share} "
        "({kv_share_gb}) per sequence, plus {state_share} of DeltaNet state, "
        "{per_seq} in all. {free} / {per_seq}, rounded down: **{answer}** sequences."
    ),
    defaults={"attention_layers": 16, "kv_heads": 2, "head_dim": 256, "n": 4},
    sample=lambda rng: {
        "attention_layers": pick(rng, (8, 16, 32)),
        "kv_heads": pick(rng, (1, 2, 4, 8)),
        "head_dim": pick(rng, (128, 256)),
        "n": pick(rng, (2, 4)),
    },
    facts=_facts,
    reference=lambda p: max_sequences(_model(p), GPU, p["n"], MODEL.max_context),
    mistakes=_mistakes,
    hint="Free memory = card - weights/N; per sequence = this GPU's heads' KV cache + "
    "its share of the DeltaNet state; round down.",
)
