"""The overlap page: fusion, sequence parallelism and chunked overlap, dual batches, low precision."""

from __future__ import annotations

import math

from lesson_lib.chapters import batching, overview
from lesson_lib.chapters.glue import GlueTable, Quote
from lesson_lib.model.algorithms import VLLM_ONE_STAGE_LIMITS
from lesson_lib.model.batching import (
    SPEC_DRAFT_TOKENS,
    mtp_head_params,
    speculative_crossover_sequences,
    speculative_tokens_per_collective,
)
from lesson_lib.model.collectives import allreduce_wire_bytes
from lesson_lib.model.experts import CARD, CONTEXT, EP, EXAMPLE, FP8, comparison
from lesson_lib.model.overlap import (
    FP8_BYTES,
    NVFP4_BYTES,
    OVERLAP_CHUNKS,
    TECHNIQUES,
    chunked_overlap,
    dual_batch_overlap,
    fused_launch_saving_s,
    kv_sequences,
    low_precision_decode,
    step_time,
)
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import (
    FAST,
    GPU,
    KERNEL_LAUNCH_EAGER,
    KERNEL_LAUNCH_GRAPH,
    MODEL,
    PROMPT_TOKENS,
    SLOW,
)
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import MiB, format_bytes, format_count, format_ratio, format_seconds

#: vLLM's largest all-reduce input for its FlashInfer fused all-reduce + RMSNorm on four Hopper
#: GPUs, ``FI_ALLREDUCE_FUSION_MAX_SIZE_MB`` in ``vllm/compilation/passes/fusion/
#: allreduce_rms_fusion.py`` at 889b02f (2 MB there; 64 on two GPUs, 0.5 on eight).
VLLM_FUSION_MAX_MB_TP4_HOPPER: float = 2.0
#: vLLM applies sequence parallelism on Hopper only for hidden sizes of at least 8,192, and only from
#: 8 MiB per GPU of tokens on (``SP_MIN_HIDDEN_SIZE`` and ``SP_MIN_PER_GPU_SIZE_MB`` in
#: ``vllm/compilation/passes/fusion/sequence_parallelism.py`` at 007b5e0).
VLLM_SP_MIN_HIDDEN_HOPPER: int = 8192
VLLM_SP_MIN_MIB_PER_GPU_HOPPER: float = 8.0
#: vLLM's dual-batch-overlap thresholds, tokens in a step above which it splits a decode-only
#: batch or one with prefills (``dbo_decode_token_threshold`` and ``dbo_prefill_token_threshold``
#: in ``vllm/config/parallel.py``).
VLLM_DBO_DECODE_TOKENS: int = 32
VLLM_DBO_PREFILL_TOKENS: int = 512
#: A small MoE batch of the experts chapter's example, and Mixtral's large weights-only batch.
DBO_SMALL_BATCH: int = 16
DBO_LARGE_BATCH: int = 4096

#: Each technique's row label in :func:`technique_table`.
LABELS: dict[str, str] = {
    "none": "none (an add + RMSNorm kernel after each all-reduce)",
    "fused": "all-reduce fused with add + RMSNorm",
    "chunked": f"chunked overlap, {OVERLAP_CHUNKS} chunks (async TP)",
    "fp8_allreduce": "FP8 all-reduce payload",
    "fp8_weights": "FP8 weights",
}
#: Columns of :func:`technique_table`.
HEADER: tuple[str, ...] = (
    "technique",
    "decoded token, 4 fast GPUs",
    "of it, exposed all-reduces",
    f"prompt of {format_count(PROMPT_TOKENS)} tokens",
    "of it, exposed all-reduces",
)


def _ms(seconds: float, decimals: int = 2) -> str:
    return format_seconds(seconds, "ms", decimals=decimals)


def _us(seconds: float, decimals: int = 2) -> str:
    return format_seconds(seconds, "us", decimals=decimals)


def _pct(share: float) -> str:
    return f"{100 * share:.1f} %"


def technique_table() -> str:
    """HTML table: each technique's decoded token and prompt on four fast GPUs.

    Returns
    -------
    str
        A row per technique of :data:`~lesson_lib.model.overlap.TECHNIQUES`, columns :data:`HEADER`.
    """
    rows = []
    for technique in TECHNIQUES:
        one, prompt = step_time(1, technique), step_time(PROMPT_TOKENS, technique)
        rows.append(
            (
                LABELS[technique],
                _ms(one.total_s),
                _ms(one.latency_s + one.bandwidth_s),
                _ms(prompt.total_s),
                _ms(prompt.latency_s + prompt.bandwidth_s),
            )
        )
    caption = "What each technique leaves of a decoded token and of a prompt, four fast GPUs"
    return html_table(HEADER, rows, caption=caption)


def _fusion_numbers() -> dict[str, str]:
    token = low_precision_decode(MODEL.dtype_bytes, 4).total_s
    n = MODEL.allreduces_per_token
    eager, graph = (fused_launch_saving_s(n, s) for s in (KERNEL_LAUNCH_EAGER, KERNEL_LAUNCH_GRAPH))
    return {
        "ov_launch_eager": _us(KERNEL_LAUNCH_EAGER, 1),
        "ov_launch_graph": _us(KERNEL_LAUNCH_GRAPH, 1),
        "ov_fused_eager": _ms(eager, 3),
        "ov_fused_graph": _ms(graph, 3),
        "ov_fused_eager_share": _pct(eager / token),
        "ov_fused_graph_share": _pct(graph / token),
        "ov_fusion_cap": f"{VLLM_FUSION_MAX_MB_TP4_HOPPER:g} MB",
        "ov_token_launches": _ms(step_time(1).total_s),
    }


def _overlap_numbers() -> dict[str, str]:
    n, alpha = MODEL.allreduces_per_token, FAST.latency
    out: dict[str, str] = {
        "ov_chunks": format_count(OVERLAP_CHUNKS),
        "ov_sp_collectives": format_count(2 * n),
        "ov_sp_latency": _ms(2 * n * alpha),
        "ov_sp_min_hidden": format_count(VLLM_SP_MIN_HIDDEN_HOPPER),
        "ov_sp_min_mib": f"{VLLM_SP_MIN_MIB_PER_GPU_HOPPER:g} MiB",
        "ov_sp_min_tokens_8192": format_count(
            VLLM_SP_MIN_MIB_PER_GPU_HOPPER * MiB * 4 // (VLLM_SP_MIN_HIDDEN_HOPPER * 2)
        ),
        "ov_hidden": format_count(MODEL.hidden_size),
    }
    for key, tokens in (("pre", PROMPT_TOKENS), ("dec", 1)):
        plain = step_time(tokens)
        wire = allreduce_wire_bytes(tokens * MODEL.hidden_vector_bytes, 4) / FAST.bandwidth
        compute = plain.compute_s / n
        one = chunked_overlap(alpha, wire, compute, OVERLAP_CHUNKS)
        chunked = step_time(tokens, "chunked")
        digits = 4 if key == "dec" else 2
        out |= {
            f"ov_{key}_wire": _us(wire, digits),
            f"ov_{key}_compute": _us(compute, 1 if key == "pre" else 2),
            f"ov_{key}_c": _us(alpha + wire / OVERLAP_CHUNKS, digits),
            f"ov_{key}_g": _us(compute / OVERLAP_CHUNKS, 2 if key == "dec" else 1),
            f"ov_{key}_total": _us(one.total_s, 1),
            f"ov_{key}_plain": _us(alpha + wire + compute, 1 if key == "pre" else 2),
            f"ov_{key}_exposed": _us(one.exposed_s, 2),
            f"ov_{key}_unhidden": _us(alpha + wire, 2),
            f"ov_{key}_step_exposed": _ms(chunked.latency_s + chunked.bandwidth_s),
            f"ov_{key}_step_unhidden": _ms(plain.latency_s + plain.bandwidth_s),
            f"ov_{key}_step": _ms(plain.total_s),
            f"ov_{key}_step_chunked": _ms(chunked.total_s),
        }
        if key == "pre":
            # the most chunks that still keep each transfer under its product: alpha + w/k <= C/k
            out["ov_best_chunks"] = format_count(int((compute - wire) // alpha))
            out["ov_pre_compute_ms"] = _ms(plain.compute_s)
    return out


def _dual_batch_numbers() -> dict[str, str]:
    fit = comparison()["ep"].sequences
    full = fit - fit % 2
    ds = {
        b: dual_batch_overlap(EXAMPLE, CARD, FAST, EP, b, dispatch_bytes=FP8, context=CONTEXT)
        for b in (DBO_SMALL_BATCH, full)
    }
    mixtral = PRESETS["Mixtral-8x7B"]
    big = dual_batch_overlap(mixtral, GPU, FAST, EP, DBO_LARGE_BATCH)
    out = {
        "ov_context": format_count(CONTEXT),
        "ov_dbo_decode": format_count(VLLM_DBO_DECODE_TOKENS),
        "ov_dbo_prefill": format_count(VLLM_DBO_PREFILL_TOKENS),
        "ov_dbo_full": format_count(full),
        "ov_dbo_big_batch": format_count(DBO_LARGE_BATCH),
        "ov_dbo_big_g": _ms(big.compute_half_s),
        "ov_dbo_big_a": _ms(big.alltoall_half_s),
        "ov_dbo_big_without": _ms(big.without_s),
        "ov_dbo_big_with": _ms(big.with_s),
    }
    for key, b in (("small", DBO_SMALL_BATCH), ("fullnode", full)):
        d = ds[b]
        out |= {
            f"ov_dbo_{key}": format_count(b),
            f"ov_dbo_{key}_g": _ms(d.compute_half_s),
            f"ov_dbo_{key}_a": _ms(d.alltoall_half_s),
            f"ov_dbo_{key}_without": _ms(d.without_s),
            f"ov_dbo_{key}_with": _ms(d.with_s),
        }
    return out


def _precision_numbers() -> dict[str, str]:
    latency = MODEL.allreduces_per_token * FAST.latency
    t = {
        (b, n): low_precision_decode(b, n).total_s
        for b in (MODEL.dtype_bytes, FP8_BYTES, NVFP4_BYTES)
        for n in (2, 4)
    }
    plain, fp8 = step_time(PROMPT_TOKENS), step_time(PROMPT_TOKENS, "fp8_allreduce")
    context = MODEL.max_context
    return {
        "ov_fp8_gb": format_bytes(MODEL.params * FP8_BYTES / 4, "GB"),
        "ov_fp8_weights_4": _ms(t[FP8_BYTES, 4] - latency),
        "ov_fp8_4": _ms(t[FP8_BYTES, 4]),
        "ov_fp8_2": _ms(t[FP8_BYTES, 2]),
        "ov_fp8_speedup": format_ratio(t[FP8_BYTES, 2] / t[FP8_BYTES, 4]),
        "ov_share_bf16": _pct(latency / t[MODEL.dtype_bytes, 4]),
        "ov_share_fp8": _pct(latency / t[FP8_BYTES, 4]),
        "ov_share_fp8_slow": _pct(
            MODEL.allreduces_per_token
            * SLOW.latency
            / low_precision_decode(FP8_BYTES, 4, fabric=SLOW).total_s
        ),
        "ov_nvfp4_bytes": f"{NVFP4_BYTES:g} B",
        "ov_nvfp4_bits": f"{8 * NVFP4_BYTES:g}",
        "ov_nvfp4_gb": format_bytes(MODEL.params * NVFP4_BYTES / 4, "GB", decimals=3),
        "ov_nvfp4_4": _ms(t[NVFP4_BYTES, 4]),
        "ov_nvfp4_2": _ms(t[NVFP4_BYTES, 2]),
        "ov_nvfp4_speedup": format_ratio(t[NVFP4_BYTES, 2] / t[NVFP4_BYTES, 4]),
        "ov_share_nvfp4": _pct(latency / t[NVFP4_BYTES, 4]),
        "ov_kv_token_fp8": format_bytes(MODEL.kv_bytes_per_token / MODEL.dtype_bytes, "KiB"),
        "ov_kv_full_fp8": format_bytes(MODEL.kv_bytes(context) / MODEL.dtype_bytes, "GiB"),
        "ov_kv_seq_bf16": format_count(kv_sequences(context, MODEL.dtype_bytes, 4)),
        "ov_kv_seq_fp8": format_count(kv_sequences(context, FP8_BYTES, 4)),
        "ov_pre_wire_bf16": _ms(plain.bandwidth_s),
        "ov_pre_wire_fp8": _ms(fp8.bandwidth_s),
    }


def overlap_numbers() -> dict[str, str]:
    """Every number the page glues, formatted.

    Returns
    -------
    dict of str to str
    """
    return {
        **_fusion_numbers(),
        **_overlap_numbers(),
        **_dual_batch_numbers(),
        **_precision_numbers(),
    }


def speculative_numbers() -> dict[str, str]:
    """Numbers the speculative-decoding section glues: the MTP head and its drafts on the wire.

    Returns
    -------
    dict of str to str
        The MTP head's size and the drafts' bytes and crossover, formatted.
    """
    m, k = MODEL, SPEC_DRAFT_TOKENS
    one_stage = dict(VLLM_ONE_STAGE_LIMITS)[4]  # bytes, up to four fully connected GPUs
    per_sequence = speculative_tokens_per_collective(1, k) * m.hidden_vector_bytes
    head = mtp_head_params(m)
    return {
        "spec_draft_tokens": format_count(k),
        "spec_bytes_per_sequence": format_bytes(per_sequence, "KiB", decimals=0),
        "spec_crossover_4": format_count(speculative_crossover_sequences(m, FAST, 4, k)),
        "spec_one_stage_sequences": format_count(math.floor(one_stage / per_sequence) + 1),
        "spec_one_stage_limit": format_bytes(one_stage, "KiB", decimals=0),
        "mtp_params": format_count(head / 1e9, decimals=2) + " billion",
        "mtp_bytes": format_bytes(head * m.dtype_bytes, "GB"),
        "mtp_share": format_count(100 * head / m.params, decimals=1) + " %",
    }


#: What ``book/overlap.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.WORKED,
    overlap_numbers,
    speculative_numbers,
    Quote(batching.batching_numbers, ("batch_crossover_4", "latency_term_fast_4")),
)
