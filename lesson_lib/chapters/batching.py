"""The batching page: batched decode, chunked prefill and speculative verification, in numbers.

The step times per batch are :mod:`lesson_lib.model.batching`'s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from lesson_lib.chapters import overview, prefill
from lesson_lib.chapters.glue import GlueTable, Quote
from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.batching import (
    BATCHES,
    CONTEXT,
    batch_curve,
)
from lesson_lib.model.collectives import crossover_tokens
from lesson_lib.model.latency import buyer_answers
from lesson_lib.model.memory import max_sequences
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW, TOKENS_PER_S
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import (
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)

#: Sequences decoding beside each prompt chunk in the chunked-prefill exercise.
CHUNK_BATCH: int = 32
#: Prompt tokens per chunk in the chunked-prefill exercise, a small and a large chunk.
CHUNK_SIZES: tuple[int, int] = (128, 512)


def batch_rows(
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    fabric: Fabric = FAST,
    n: int = 4,
    batches: Iterable[int] | None = None,
    *,
    context: int = CONTEXT,
) -> list[tuple[str, str, str, str, str, str]]:
    """Table rows: per batch, the step's terms, each sequence's wait and the throughput.

    Parameters
    ----------
    model, accel, fabric, n
        As for :func:`~lesson_lib.model.batching.batch_curve`.
    batches : iterable of int, optional
        Sequences per step; default 1, 16, 64, 256 and the most that fit in memory at ``context``.
    context : int, default CONTEXT
        Tokens cached per sequence, from 1 to ``model.max_context`` (0 too if ``batches`` is given).

    Returns
    -------
    list of tuple of str
        ``(batch, memory reads ms, all-reduce latency ms, all-reduce bytes ms, ms per token per
        sequence, tokens/s in all)``; times in ms without the unit (the header names it).
    """
    if batches is None:
        require_instance("model", model, ModelSpec)
        context = require_int("context", context, maximum=model.max_context)
        fit = max_sequences(model, accel, n, context)
        batches = [b for b in (1, 16, 64, 256) if b < fit] + [fit]
    return [
        (
            format_count(step.sequences),
            f"{step.compute_s * 1e3:.2f}",
            f"{step.latency_s * 1e3:.2f}",
            f"{step.bandwidth_s * 1e3:.2f}",
            f"{step.total_s * 1e3:.2f}",
            format_count(step.tokens_per_s),
        )
        for step in batch_curve(model, accel, fabric, n, batches, context=context)
    ]


#: Columns of :func:`batch_rows`.
BATCH_HEADER: tuple[str, ...] = (
    "sequences in the batch",
    "compute (ms)",
    "all-reduce latency (ms)",
    "all-reduce bytes (ms)",
    "each sequence waits (ms per token)",
    "tokens/s in all",
)


def batching_numbers() -> dict[str, str]:
    """Numbers the batching chapter glues.

    Returns
    -------
    dict of str to str
    """
    m = MODEL
    out: dict[str, str] = {}
    for n in (2, 4):
        out[f"batch_crossover_{n}"] = format_count(crossover_tokens(m, FAST, n))
    out["batch_crossover_4_slow"] = format_count(crossover_tokens(m, SLOW, 4))
    full = m.max_context
    one_full = decode_step(m, GPU, FAST, 4, context=full)
    out["kv_read_full_4"] = format_seconds(one_full.kv_read_s, "ms")
    out["latency_term_fast_4"] = format_seconds(one_full.latency_s, "ms")
    out["fit_full_4"] = format_count(max_sequences(m, GPU, 4, full))
    out["fit_prompt_4"] = format_count(max_sequences(m, GPU, 4, CONTEXT))
    out["batch_context"] = format_count(CONTEXT)
    steps = dict(zip(BATCHES, batch_curve(m, GPU, FAST, 4), strict=True))
    for b in (1, 64):
        out[f"batch_{b}_ms"] = format_seconds(steps[b].total_s, "ms")
        out[f"batch_{b}_tokens_per_s"] = format_count(steps[b].tokens_per_s)
    out["batch_64_gain"] = format_ratio(steps[64].tokens_per_s / steps[1].tokens_per_s, decimals=0)
    out["batch_64_slowdown"] = format_ratio(steps[64].total_s / steps[1].total_s)
    fit = max_sequences(m, GPU, 4, CONTEXT)
    most = decode_step(m, GPU, FAST, 4, batch=fit, context=CONTEXT)
    out["batch_fit_ms"] = format_seconds(most.total_s, "ms")
    out["batch_fit_tokens_per_s"] = format_count(most.tokens_per_s)
    out["batch_fit_bound"] = most.communication_bound
    full_batch = decode_step(m, GPU, FAST, 4, batch=max_sequences(m, GPU, 4, full), context=full)
    out["full_batch_ms"] = format_seconds(full_batch.total_s, "ms")
    out["full_batch_kv_share"] = (
        format_count(100 * full_batch.kv_read_s / full_batch.total_s, decimals=0) + " %"
    )
    return out | _chunk_numbers() | _promise_numbers()


def _chunk_numbers() -> dict[str, str]:
    """The chunked-prefill exercise: a prompt chunk and a decode batch in one step."""
    small, large = CHUNK_SIZES
    out = {"chunk_batch": format_count(CHUNK_BATCH)}
    crossover = crossover_tokens(MODEL, FAST, 4)
    for name, chunk in (("small", small), ("large", large)):
        tokens = chunk + CHUNK_BATCH
        out[f"chunk_{name}"] = format_count(chunk)
        out[f"chunk_{name}_tokens"] = format_count(tokens)
        out[f"chunk_{name}_bound"] = "latency" if tokens <= crossover else "bandwidth"
    steps = math.ceil(PROMPT_TOKENS / large)
    out["chunk_steps"] = format_count(steps)
    one = decode_step(MODEL, GPU, FAST, 4)
    out["chunked_latency"] = format_seconds(steps * one.latency_s, "ms")
    return out


def _promise_numbers() -> dict[str, str]:
    """The promise exercise: the largest batch whose sequences each get TOKENS_PER_S."""
    m = MODEL
    budget = 1 / TOKENS_PER_S
    one = decode_step(m, GPU, FAST, 4, context=CONTEXT)
    room = budget - one.weights_s - one.latency_s
    fit = max_sequences(m, GPU, 4, CONTEXT)
    within = [
        b
        for b in range(1, fit + 1)
        if decode_step(m, GPU, FAST, 4, batch=b, context=CONTEXT).total_s <= budget
    ]
    # the batch at which the GEMMs' arithmetic outlasts streaming the weights
    gemm_per_sequence = one.gemm_flops_s
    return {
        "gemm_bound_batch": format_count(one.weights_s / gemm_per_sequence),
        # the card's, as the latency chapter prints it: the batch above is peak FLOP/s over it
        "hbm_bandwidth": format_rate(GPU.hbm_bandwidth, "TB"),
        "promise_gemm": format_seconds(gemm_per_sequence, "us", decimals=1),
        "promise_ms": format_seconds(budget, "ms", decimals=0),
        "promise_kv_read": format_seconds(one.kv_read_s, "us", decimals=0),
        "promise_bytes": format_seconds(one.bandwidth_s, "us", decimals=1),
        "promise_room": format_seconds(room, "ms", decimals=1),
        "promise_estimate": format_count(round(room / (one.kv_read_s + one.bandwidth_s), -1)),
        "promise_batch": format_count(max(within)),
    }


#: Columns of :func:`buyer_table`.
BUYER_HEADER: tuple[str, ...] = (
    "box",
    "tokens a sequence",
    "sequences that fit",
    "tokens/s, all together",
    "tokens/s per GPU",
)


def buyer_table(contexts: Iterable[int] | None = None, caption: str | None = None) -> str:
    """HTML table of :func:`~lesson_lib.model.latency.buyer_answers`: what each box serves at once.

    Parameters
    ----------
    contexts : iterable of int, optional
        Tokens per sequence, each 1 to the specimen's full context; default
        :data:`SHORTER_CONTEXTS`, then the full context.
    caption : str, optional

    Returns
    -------
    str
        A row per box and context, columns :data:`BUYER_HEADER`.
    """
    if contexts is None:
        contexts = (*SHORTER_CONTEXTS.values(), MODEL.max_context)
    rows = [
        (
            a.label,
            format_count(a.context),
            format_count(a.sequences),
            format_count(a.tokens_per_s),
            format_count(a.tokens_per_s_per_gpu),
        )
        for context in contexts
        for a in buyer_answers(context=context)
    ]
    return html_table(BUYER_HEADER, rows, caption=caption)


#: Shorter sequences at which the page compares the boxes' throughput per GPU, tokens.
SHORTER_CONTEXTS: dict[str, int] = {"short": 4_096}


def buyer_numbers() -> dict[str, str]:
    """The two answers to the buyer, formatted for the landing page, this chapter and the summary.

    Returns
    -------
    dict of str to str
    """
    boxes = buyer_answers()
    out: dict[str, str] = {}
    for key, a in zip(("box_1", "box_2", "box_4"), boxes, strict=True):
        out[f"{key}_sequences"] = format_count(a.sequences)
        out[f"{key}_tokens_per_s"] = format_count(a.tokens_per_s)
        out[f"{key}_tokens_per_gpu"] = format_count(a.tokens_per_s_per_gpu)
    _, two, four = boxes
    # the first answer, one stream's time per token, bytes left out as on the landing page
    out["stream_4_vs_2"] = format_ratio(four.stream_s / two.stream_s)
    out["throughput_4_vs_2"] = format_ratio(four.tokens_per_s / two.tokens_per_s, decimals=1)
    out["per_gpu_4_vs_2"] = format_ratio(four.tokens_per_s_per_gpu / two.tokens_per_s_per_gpu)
    for name, context in SHORTER_CONTEXTS.items():
        _, two, four = buyer_answers(context=context)
        out[f"context_{name}"] = format_count(context)
        out[f"per_gpu_4_vs_2_{name}"] = format_ratio(
            four.tokens_per_s_per_gpu / two.tokens_per_s_per_gpu
        )
        out[f"box_4_step_{name}"] = format_seconds(four.step_s, "ms")
        out[f"box_4_wire_{name}"] = format_seconds(four.wire_bytes_s, "ms")
        out[f"box_4_reads_{name}"] = format_seconds(four.step.compute_s, "ms")
        out[f"box_4_latency_{name}"] = format_seconds(four.step.latency_s, "ms")
        out[f"box_2_sequences_{name}"] = format_count(two.sequences)
        out[f"box_4_sequences_{name}"] = format_count(four.sequences)
        out[f"box_2_tokens_per_gpu_{name}"] = format_count(two.tokens_per_s_per_gpu)
        out[f"box_4_tokens_per_gpu_{name}"] = format_count(four.tokens_per_s_per_gpu)
    return out


#: What ``book/batching.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.WORKED,
    batching_numbers,
    buyer_numbers,
    Quote(prefill.prefill_numbers, ("gpu_peak_flops",)),
)
