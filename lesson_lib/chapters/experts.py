"""The experts page: every collective's cost, measured all-to-alls, and MoE decode under TP and EP."""

from __future__ import annotations

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.model._validate import require_int
from lesson_lib.model.collectives import (
    COLLECTIVES,
    allreduce_wire_bytes,
    alltoall_wire_bytes,
    collective_steps,
    collective_time,
    collective_wire_bytes,
)
from lesson_lib.model.experts import CARD, CONTEXT, EP, EXAMPLE, FP8, Layout, comparison
from lesson_lib.model.moe import (
    DCP_KINDS,
    alltoall_crossover_tokens,
    moe_decode_step,
    weights_per_gpu,
)
from lesson_lib.model.presets import PRESETS, SOURCES
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL, PROMPT_TOKENS
from lesson_lib.model.specs import Fabric, ModelSpec
from lesson_lib.model.units import format_bytes, format_count, format_ratio, format_seconds

#: Columns of :func:`comparison_rows`.
COMPARISON_HEADER: tuple[str, ...] = (
    "layout",
    "one sequence: ms per token",
    "collectives per token",
    "bytes on the wire per token (all GPUs)",
    "weights per GPU",
    "sequences that fit",
    "full node: cache each GPU reads per step",
    "full node: ms per token",
    "full node: tokens/s",
)

#: Each layout's row name in the table, by :data:`~lesson_lib.model.experts.LAYOUTS` key.
LAYOUT_NAMES: dict[str, str] = {
    "tp": f"TP {EP}, all-reduces",
    "ep": f"EP {EP} + DP attention, all-to-alls",
    "dcp": f"TP {EP} + DCP {EP}, all-reduces and DCP's collectives",
}


def comparison_rows(layouts: dict[str, Layout] | None = None) -> list[tuple[str, ...]]:
    """The layouts of :func:`~lesson_lib.model.experts.comparison` as table rows.

    Parameters
    ----------
    layouts : dict of str to Layout, optional
        Default :func:`~lesson_lib.model.experts.comparison` at its defaults.

    Returns
    -------
    list of tuple of str
        One row per layout, in :data:`COMPARISON_HEADER` order.
    """
    layouts = comparison() if layouts is None else layouts
    return [
        (
            LAYOUT_NAMES[key],
            format_seconds(lay.one.total_s, "ms"),
            format_count(lay.one.collectives),
            format_bytes(lay.one.wire_bytes_per_token, "MiB"),
            format_bytes(lay.one.weights_per_gpu_bytes, "GB", decimals=1),
            format_count(lay.sequences),
            format_bytes(lay.full.kv_read_bytes, "GB", decimals=1),
            format_seconds(lay.full.total_s, "ms"),
            format_count(lay.full.tokens_per_s),
        )
        for key, lay in layouts.items()
    ]


#: Columns of :func:`collective_rows` (the payloads those of its defaults).
COLLECTIVE_HEADER: tuple[str, ...] = (
    "collective",
    "the payload is",
    f"steps ({EP} ranks)",
    "bytes per rank (x payload)",
    f"time, {format_bytes(MODEL.hidden_vector_bytes, 'KiB')}",
    f"time, {format_bytes(PROMPT_TOKENS * MODEL.hidden_vector_bytes, 'MiB')}",
)


def collective_rows(
    n: int = EP, payloads: tuple[float, float] | None = None, fabric: Fabric = FAST
) -> list[tuple[str, ...]]:
    """Every collective over ``n`` ranks: steps, bytes per rank, time at two payloads.

    Parameters
    ----------
    n : int, default EP
        Ranks, from 2 to 4096.
    payloads : (float, float), optional
        A small and a large payload, bytes; default one hidden vector and a prefill's.
    fabric : Fabric, default FAST

    Returns
    -------
    list of tuple of str
        Rows in :data:`COLLECTIVE_HEADER` order.
    """
    n = require_int("n", n, minimum=2)
    vector = MODEL.hidden_vector_bytes
    small, large = payloads or (vector, PROMPT_TOKENS * vector)
    return [
        (
            c.description.partition(":")[0],
            c.payload,
            format_count(collective_steps(kind, n)),
            format_ratio(collective_wire_bytes(kind, 1.0, n), decimals=3),
            format_seconds(collective_time(kind, small, n, fabric), "us", decimals=2),
            format_seconds(collective_time(kind, large, n, fabric), "us", decimals=1),
        )
        for kind, c in COLLECTIVES.items()
    ]


#: Columns of :func:`measured_rows`.
MEASURED_HEADER: tuple[str, ...] = (
    "collective",
    "GPUs",
    "message",
    "measured (NCCL)",
    "model, fast fabric",
    "model / measured",
)


def measured_rows(fabric: Fabric = FAST) -> list[tuple[str, ...]]:
    """The shipped NCCL measurements beside the model's time on ``fabric``.

    Parameters
    ----------
    fabric : Fabric, default FAST

    Returns
    -------
    list of tuple of str
        Rows in :data:`MEASURED_HEADER` order.
    """
    from lesson_lib.model.measured_collectives import NCCL_H100  # reads the shipped tables

    return [
        (
            COLLECTIVES[r.kind].description.partition(":")[0],
            format_count(r.gpus),
            format_bytes(r.message_bytes, "MiB" if r.message_bytes > 1e6 else "B"),
            format_seconds(r.latency_s, "us", decimals=2),
            format_seconds(model, "us", decimals=2),
            format_ratio(model / r.latency_s),
        )
        for r in NCCL_H100
        for model in (collective_time(r.kind, r.message_bytes, r.gpus, fabric),)
    ]


#: Columns of :func:`preset_rows`.
PRESET_HEADER: tuple[str, ...] = (
    "model",
    "parameters",
    "active per token",
    "routed experts' share",
    "experts / top-k",
    "MoE layers",
    "all-to-alls per token",
    "KV cache per token",
)


def preset_rows() -> list[tuple[str, ...]]:
    """Each preset from its config: total and active parameters, experts, all-to-alls, KV.

    Returns
    -------
    list of tuple of str
        Rows in :data:`PRESET_HEADER` order.
    """
    return [
        (
            name,
            format_count(m.params / 1e9, decimals=1) + " B",
            format_count(m.active_params / 1e9, decimals=1) + " B",
            f"{100 * m.routed_expert_params / m.params:.1f} %" if m.is_moe else "-",
            f"{m.num_experts} / {m.experts_per_token}" if m.is_moe else "dense",
            f"{m.num_moe_layers} of {m.num_layers}" if m.is_moe else "-",
            format_count(m.alltoalls_per_token) if m.is_moe else "-",
            format_bytes(m.kv_bytes_per_token, "KiB", decimals=1),
        )
        for name, m in PRESETS.items()
    ]


def experts_numbers() -> dict[str, str]:
    """The chapter's own numbers, formatted.

    Returns
    -------
    dict of str to str
    """
    m = EXAMPLE
    k = m.experts_per_token
    vector = m.hidden_vector_bytes
    dispatch_bf16 = k * vector
    layouts = comparison()
    tp, ep = layouts["tp"], layouts["ep"]
    off = alltoall_wire_bytes(dispatch_bf16, EP)
    fp8_off = alltoall_wire_bytes(k * m.hidden_size * FP8, EP)
    # The all-reduce TP needs per token per layer, for the same bytes comparison.
    tp_layer = 2 * allreduce_wire_bytes(vector, EP)
    from lesson_lib.model.measured_collectives import DEEPEP_LL_H100, NCCL_H100

    deepep_one, deepep_128 = DEEPEP_LL_H100[0], DEEPEP_LL_H100[-1]
    nccl_small = {r.kind: r.latency_s for r in NCCL_H100 if r.elements == 256}
    across = moe_decode_step(m, CARD, INTER_NODE, EP, dispatch_bytes=FP8, context=CONTEXT)
    return {
        "ep": str(EP),
        "context": format_count(CONTEXT),
        "card": CARD.name,
        "ds_dense_layers": str(m.num_layers - m.num_moe_layers),
        "ds_moe_layers": str(m.num_moe_layers),
        "ds_alltoalls": str(m.alltoalls_per_token),
        "ds_allreduces": str(m.allreduces_per_token),
        "ds_experts": str(m.num_experts),
        "ds_k": str(k),
        "ds_shared": str(m.num_shared_experts),
        "ds_experts_per_gpu": str(m.num_experts // EP),
        "ds_hidden": format_count(m.hidden_size),
        "ds_vector": format_bytes(vector, "KiB"),
        "ds_params": format_count(m.params / 1e9) + " billion",
        "ds_active": format_count(m.active_params / 1e9, decimals=1) + " billion",
        "ds_card_params": format_count(SOURCES["DeepSeek-V3"].card_params / 1e9) + " billion",
        "ds_card_active": format_count(SOURCES["DeepSeek-V3"].card_active / 1e9) + " billion",
        "ds_expert_share": f"{100 * m.routed_expert_params / m.params:.1f} %",
        "ds_kv_token": format_count(m.kv_bytes_per_token) + " B",
        "dispatch_bf16": format_bytes(dispatch_bf16, "KiB"),
        "dispatch_off": format_bytes(off, "KiB"),
        "dispatch_fp8_off": format_bytes(fp8_off, "KiB"),
        "layer_ep_bytes": format_bytes(fp8_off + off, "KiB"),
        "layer_tp_bytes": format_bytes(tp_layer, "KiB"),
        "off_share": f"{EP - 1}/{EP}",
        "tp_one_ms": format_seconds(tp.one.total_s, "ms"),
        "ep_one_ms": format_seconds(ep.one.total_s, "ms"),
        "tp_one_weights_ms": format_seconds(tp.one.weights_s, "ms"),
        "ep_one_weights_ms": format_seconds(ep.one.weights_s, "ms"),
        "tp_latency_ms": format_seconds(tp.one.latency_s, "ms"),
        "ep_latency_ms": format_seconds(ep.one.latency_s, "ms"),
        "tp_token_mib": format_bytes(tp.one.wire_bytes_per_token, "MiB"),
        "ep_token_mib": format_bytes(ep.one.wire_bytes_per_token, "MiB"),
        "tp_weights_gpu": format_bytes(tp.one.weights_per_gpu_bytes, "GB", decimals=1),
        "ep_weights_gpu": format_bytes(ep.one.weights_per_gpu_bytes, "GB", decimals=1),
        "tp_sequences": format_count(tp.sequences),
        "ep_sequences": format_count(ep.sequences),
        "tp_full_tokens_per_s": format_count(tp.full.tokens_per_s),
        "ep_full_tokens_per_s": format_count(ep.full.tokens_per_s),
        "tp_full_ms": format_seconds(tp.full.total_s, "ms"),
        "ep_full_ms": format_seconds(ep.full.total_s, "ms"),
        "ep_vs_tp_throughput": format_ratio(ep.full.tokens_per_s / tp.full.tokens_per_s),
        **_cache_numbers(m, layouts),
        "crossover_bf16": format_count(alltoall_crossover_tokens(m, FAST, EP)),
        "crossover_fp8": format_count(alltoall_crossover_tokens(m, FAST, EP, dispatch_bytes=FP8)),
        "prefill_tokens": format_count(PROMPT_TOKENS),
        "prefill_per_rank": format_count(PROMPT_TOKENS // EP),
        "deepep_one_dispatch": format_seconds(deepep_one.dispatch_s, "us", decimals=1),
        "deepep_one_combine": format_seconds(deepep_one.combine_s, "us", decimals=1),
        "deepep_one_layer": format_seconds(deepep_one.layer_s, "us", decimals=1),
        "deepep_one_token_ms": format_seconds(m.num_moe_layers * deepep_one.layer_s, "ms"),
        "deepep_128_layer": format_seconds(deepep_128.layer_s, "us", decimals=1),
        "deepep_128_tokens": format_count(deepep_128.tokens),
        "nccl_alltoall_small": format_seconds(nccl_small["all_to_all"], "us", decimals=2),
        "nccl_allreduce_small": format_seconds(nccl_small["all_reduce"], "us", decimals=2),
        "fast_latency": format_seconds(FAST.latency, "us"),
        "inter_latency": format_seconds(INTER_NODE.latency, "us"),
        "across_latency_ms": format_seconds(across.latency_s, "ms"),
        "across_one_ms": format_seconds(across.total_s, "ms"),
        "gpu_memory_gb": format_bytes(GPU.memory_bytes, "GB", decimals=1),
        "card_memory_gb": format_bytes(CARD.memory_bytes, "GB", decimals=1),
        "fast_bandwidth": format_bytes(FAST.bandwidth, "GB") + "/s",
        "fast_alpha_b": format_bytes(FAST.latency * FAST.bandwidth, "MB"),
        "ds_latent": str(m.kv_lora_rank),
        "ds_rope": str(m.qk_rope_head_dim),
        "ex2_sequences": str(EXERCISE_SEQUENCES),
        **_exercise_one(m),
        **_exercise_three(m),
    }


def _cache_numbers(m: ModelSpec, layouts: dict[str, Layout]) -> dict[str, str]:
    """What each layout's full node reads of the cache, and what DCP adds and buys."""
    tp, ep, dcp = layouts["tp"], layouts["ep"], layouts["dcp"]
    return {
        "ds_weight_bytes": format_count(m.weight_dtype_bytes) + " B",
        "ds_weights_gb": format_bytes(m.weight_bytes, "GB"),
        "tp_full_kv_gb": format_bytes(tp.full.kv_read_bytes, "GB", decimals=1),
        "ep_full_kv_gb": format_bytes(ep.full.kv_read_bytes, "GB", decimals=1),
        "tp_full_kv_ms": format_seconds(tp.full.kv_read_s, "ms"),
        "tp_full_weights_ms": format_seconds(tp.full.weights_s, "ms"),
        "ep_full_kv_ms": format_seconds(ep.full.kv_read_s, "ms"),
        "ep_full_attention_ms": format_seconds(ep.full.attention_flops_s, "ms"),
        "ep_per_token_penalty": format_ratio(ep.full.total_s / tp.full.total_s),
        "ep_gpu_sequences": format_count(ep.full.batch // EP),
        "ds_query_heads": str(m.num_query_heads),
        "dcp_sequences": format_count(dcp.sequences),
        "dcp_one_ms": format_seconds(dcp.one.total_s, "ms"),
        "dcp_latency_ms": format_seconds(dcp.one.latency_s, "ms"),
        "dcp_collectives": format_count(dcp.one.collectives),
        "dcp_layer_collectives": str(len(DCP_KINDS)),
        "dcp_full_ms": format_seconds(dcp.full.total_s, "ms"),
        "dcp_full_bandwidth_ms": format_seconds(dcp.full.bandwidth_s, "ms"),
        "dcp_full_tokens_per_s": format_count(dcp.full.tokens_per_s),
        "dcp_vs_tp_throughput": format_ratio(dcp.full.tokens_per_s / tp.full.tokens_per_s),
    }


#: Sequences per rank of the second exercise's decode step.
EXERCISE_SEQUENCES: int = 16


def _b(nbytes: float) -> str:
    return format_count(nbytes) + " B"


def _exercise_one(m: ModelSpec) -> dict[str, str]:
    """One token's bytes per MoE layer under EP (FP8 dispatch) and per layer under TP."""
    dispatch = m.experts_per_token * m.hidden_size * FP8
    combine = m.experts_per_token * m.hidden_vector_bytes
    tp_one = allreduce_wire_bytes(m.hidden_vector_bytes, EP)
    return {
        "ex1_dispatch": _b(dispatch),
        "ex1_dispatch_off": _b(alltoall_wire_bytes(dispatch, EP)),
        "ex1_combine_off": _b(alltoall_wire_bytes(combine, EP)),
        "ex1_ep_total": _b(alltoall_wire_bytes(dispatch + combine, EP)),
        "ex1_vector": _b(m.hidden_vector_bytes),
        "ex1_tp_one": _b(tp_one),
        "ex1_tp_total": _b(2 * tp_one),
        "ex1_ratio": format_ratio(alltoall_wire_bytes(dispatch + combine, EP) / (2 * tp_one)),
        "ex2_per_token": _b(alltoall_wire_bytes(m.experts_per_token * m.hidden_vector_bytes, EP)),
    }


def _exercise_three(m: ModelSpec) -> dict[str, str]:
    """What one GPU has free for KV under TP and EP, and one sequence's latent cache."""
    per_sequence = m.kv_bytes(CONTEXT)
    tp_free = CARD.memory_bytes - weights_per_gpu(m, EP, "tp")
    ep_free = CARD.memory_bytes - weights_per_gpu(m, EP, "ep")
    return {
        "ex3_sequence_gb": format_bytes(per_sequence, "GB"),
        "ex3_tp_free": format_bytes(tp_free, "GB", decimals=1),
        "ex3_ep_free": format_bytes(ep_free, "GB", decimals=1),
        "ex3_ep_per_gpu": format_count(ep_free // per_sequence),
    }


#: What ``book/experts.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, experts_numbers)
