"""Problem q2: KV cache of one full-length sequence, pure attention."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import (
    CONTEXTS,
    PURE_ATTENTION_SHAPES,
    Mistake,
    Params,
    Problem,
    fmt_bytes,
    pure_attention_model,
)
from lesson_lib.coursework.variants import pick
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.units import GiB, format_count


def _model(p: Params) -> ModelSpec:
    return pure_attention_model(p["billions"], p["context"])


def _facts(p: Params) -> dict[str, str]:
    m = _model(p)
    return {
        "params": format_count(m.params / 1e9) + " billion",
        "layers": str(m.num_layers),
        "kv_heads": str(m.num_kv_heads),
        "q_heads": str(m.num_query_heads),
        "head_dim": str(m.head_dim),
        "context": format_count(m.max_context),
        "dtype": str(m.dtype_bytes),
        "per_token": fmt_bytes(m.kv_bytes_per_token, "KiB"),
        "per_token_bytes": format_count(m.kv_bytes_per_token),
        "kv_gib": fmt_bytes(m.kv_bytes(m.max_context), "GiB"),
        "kv_gb": fmt_bytes(m.kv_bytes(m.max_context), "GB"),
    }


def _mistakes(p: Params) -> list[Mistake]:
    m = _model(p)
    full = m.kv_bytes(m.max_context) / GiB
    out = [
        Mistake(
            "kv-half",
            full / 2,
            "Half the right size: the cache keeps both K and V, and each element takes "
            f"{m.dtype_bytes} bytes in bf16. Did you drop one of the two factors of 2?",
        ),
        Mistake(
            "kv-double",
            full * 2,
            "Twice the right size: count K and V once each, and bf16 is 2 bytes per element.",
        ),
    ]
    if m.num_query_heads and m.num_query_heads != m.num_kv_heads:
        out.append(
            Mistake(
                "query-heads",
                full * m.num_query_heads / m.num_kv_heads,
                "Only the KV heads are cached; with grouped-query attention there are fewer "
                "of them than query heads.",
            )
        )
    return out


PROBLEM = Problem(
    qid="q2",
    title="KV cache of one full-length sequence",
    chapter="sizing",
    difficulty=1,
    unit="GiB",
    decimals=2,
    close_rtol=0.02,
    template=(
        "The {params}-parameter pure-attention model has {layers} layers, all full "
        "attention, each with {kv_heads} KV heads of dimension {head_dim} "
        "({q_heads} query heads), bf16 ({dtype} bytes per element), and a maximum "
        "context of {context} tokens. How large is the KV cache of **one** sequence at "
        "full length, in **GiB** (2\u00b3\u2070 bytes)?"
    ),
    solution_template=(
        "Per token the cache keeps K and V for every layer and KV head: 2 x {layers} x "
        "{kv_heads} x {head_dim} x {dtype} B = {per_token_bytes} B = {per_token}. "
        "Times {context} tokens: **{kv_gib}** ({kv_gb} in decimal units). Query heads "
        "do not count: with grouped-query attention only the {kv_heads} KV heads are "
        "cached."
    ),
    defaults={"billions": 70, "context": 131_072},
    sample=lambda rng: {
        "billions": pick(rng, list(PURE_ATTENTION_SHAPES)),
        "context": pick(rng, CONTEXTS),
    },
    facts=_facts,
    reference=lambda p: _model(p).kv_bytes(p["context"]) / GiB,
    mistakes=_mistakes,
    hint="Bytes per token = 2 (K and V) x layers x KV heads x head dim x 2 bytes; "
    "multiply by the context and divide by 2**30.",
)
