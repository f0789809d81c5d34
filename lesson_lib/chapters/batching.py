"""Batched decode: the tokens in flight per collective set the regime, not the phase.

A serving engine decodes many sequences in one step. The weights are read
once per step however many sequences share it, so the step's time grows
slowly with the batch while its tokens grow in proportion: throughput rises.
Each all-reduce of the step carries one hidden vector per sequence, so a
large enough batch moves decode's all-reduces from latency-bound to
bandwidth-bound, exactly as a long prompt does for prefill
(:func:`~lesson_lib.model.collectives.crossover_tokens` gives the point). At long
contexts memory usually stops the batch first: every sequence's KV cache
must fit beside the weights, and every step reads all of it.

The chapter ends with a reality check: published tensor-parallel decode
measurements against the model. The lesson predicts 1.76x from two to four GPUs on a fast fabric. Few public
sources publish clean TP 2 -> TP 4 decode times; the table NVIDIA's NeMo
documentation prints for TensorRT-LLM on Llama 2 is one, and it measures a
whole short request (a 128-token prompt, then 20 generated tokens, batch 1),
not one decode step. Each record below is read from that page; the model's
prediction for the same request uses the same public model shapes, the card's
vendor bandwidth and the lesson's 10 us fabric.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import glue_numbers
from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.collectives import crossover_tokens
from lesson_lib.model.memory import max_sequences
from lesson_lib.model.specimen import A100, FAST, GPU, MODEL, PROMPT_TOKENS, TOKENS_PER_S
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepBreakdown, decode_step, prefill_step
from lesson_lib.model.units import format_count, format_ratio, format_seconds

#: Batches the chapter's figure and table walk through.
BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: The context length of the batching examples, the lesson's prompt.
CONTEXT: int = PROMPT_TOKENS
#: Sequences decoding beside each prompt chunk in the chunked-prefill exercise.
CHUNK_BATCH: int = 32
#: Prompt tokens per chunk in the chunked-prefill exercise, a small and a large chunk.
CHUNK_SIZES: tuple[int, int] = (128, 512)


def batch_curve(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    batches: Iterable[int] = BATCHES,
    *,
    context: int | None = CONTEXT,
    algorithm: str = "ring",
) -> list[StepBreakdown]:
    """One decode step per batch size, on ``n`` GPUs.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire.
    n : int
        Tensor-parallel degree.
    batches : iterable of int, default BATCHES
        Sequences per step, each from 1 to
        :data:`~lesson_lib.model.step_time.MAX_BATCH`.
    context : int or None, default CONTEXT
        Tokens in each sequence's cache (None: weights only, the lesson's
        heuristic).
    algorithm : str, default "ring"
        The all-reduce algorithm.

    Returns
    -------
    list of StepBreakdown
        In the order of ``batches``; ``total_s`` is what each sequence waits
        per token, ``tokens_per_s`` the step's throughput.
    """
    return [
        decode_step(
            model,
            accel,
            fabric,
            n,
            batch=b,  # decode_step checks it against MAX_BATCH
            context=context,
            algorithm=algorithm,
        )
        for b in batches
    ]


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
        As for :func:`batch_curve`.
    batches : iterable of int, optional
        Sequences per step; default 1, 16, 64, 256 and the most that fit in
        memory at ``context``.
    context : int, default CONTEXT
        Tokens in each sequence's cache, from 1 to ``model.max_context`` (0 is
        allowed too when ``batches`` is given).

    Returns
    -------
    list of tuple of str
        ``(batch, memory reads ms, all-reduce latency ms, all-reduce bytes ms,
        ms per token per sequence, tokens/s in all)``; times in ms without
        the unit (the header names it).
    """
    if batches is None:
        require_instance("model", model, ModelSpec)
        context = require_int("context", context, maximum=model.max_context)
        fit = max_sequences(model, accel, n, context)
        batches = [b for b in (1, 16, 64, 256) if b < fit] + [fit]
    rows = []
    for step in batch_curve(model, accel, fabric, n, batches, context=context):
        rows.append(
            (
                format_count(step.sequences),
                f"{step.compute_s * 1e3:.2f}",
                f"{step.latency_s * 1e3:.2f}",
                f"{step.bandwidth_s * 1e3:.2f}",
                f"{step.total_s * 1e3:.2f}",
                format_count(step.tokens_per_s),
            )
        )
    return rows


#: Columns of :func:`batch_rows`.
BATCH_HEADER: tuple[str, ...] = (
    "sequences in the batch",
    "compute: weights or GEMMs, then KV and state traffic (ms)",
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
        For example ``"batch_crossover_2": "439"`` (sequences per step at
        which two GPUs' decode all-reduces turn bandwidth-bound on the fast
        fabric) and ``"kv_read_full_4": "1.29 ms"``.
    """
    m = MODEL
    out: dict[str, str] = {}
    for n in (2, 4):
        out[f"batch_crossover_{n}"] = format_count(crossover_tokens(m, FAST, n))
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
    out.update(_chunk_numbers())
    out.update(_promise_numbers())
    return out


def _chunk_numbers() -> dict[str, str]:
    """The chunked-prefill exercise: a prompt chunk and a decode batch in one step."""
    m = MODEL
    small, large = CHUNK_SIZES
    out = {
        "chunk_batch": format_count(CHUNK_BATCH),
        "chunk_small": format_count(small),
        "chunk_large": format_count(large),
    }
    crossover = crossover_tokens(m, FAST, 4)
    for name, chunk in (("small", small), ("large", large)):
        tokens = chunk + CHUNK_BATCH
        out[f"chunk_{name}_tokens"] = format_count(tokens)
        out[f"chunk_{name}_bound"] = "latency" if tokens <= crossover else "bandwidth"
    steps = math.ceil(PROMPT_TOKENS / large)
    out["chunk_steps"] = format_count(steps)
    one = decode_step(m, GPU, FAST, 4)
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
        "promise_gemm": format_seconds(gemm_per_sequence, "us", decimals=1),
        "promise_ms": format_seconds(budget, "ms", decimals=0),
        "promise_kv_read": format_seconds(one.kv_read_s, "us", decimals=0),
        "promise_bytes": format_seconds(one.bandwidth_s, "us", decimals=1),
        "promise_room": format_seconds(room, "ms", decimals=1),
        "promise_estimate": format_count(round(room / (one.kv_read_s + one.bandwidth_s), -1)),
        "promise_batch": format_count(max(within)),
    }


_NEMO = "https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/llama.html"

#: Llama 2 7B, public Hugging Face config (32 layers, hidden 4096, 32 heads, no GQA).
LLAMA2_7B = ModelSpec(
    name="Llama-2-7B",
    params=6.74e9,
    hidden_size=4096,
    num_layers=32,
    num_attention_layers=32,
    num_kv_heads=32,
    head_dim=128,
    max_context=4096,
    num_query_heads=32,
    ffn_size=11008,
)
#: Llama 2 13B, public Hugging Face config (40 layers, hidden 5120, 40 heads, no GQA).
LLAMA2_13B = ModelSpec(
    name="Llama-2-13B",
    params=13.0e9,
    hidden_size=5120,
    num_layers=40,
    num_attention_layers=40,
    num_kv_heads=40,
    head_dim=128,
    max_context=4096,
    num_query_heads=40,
    ffn_size=13824,
)
#: NVLink 3 on A100 with 300 GB/s per direction (600 GB/s both ways) and the lesson's 10 us.
A100_NVLINK = Fabric("NVLink 3-class, 10 us", latency=FAST.latency, bandwidth=300e9)


@dataclass(frozen=True)
class PublishedScaling:
    """One published pair of TP 2 and TP 4 latencies for the same request.

    Attributes
    ----------
    model : ModelSpec
        The model measured.
    accel : Accelerator
        The card.
    fabric : Fabric
        The model's stand-in for the card's NVLink (the lesson's 10 us).
    engine : str
        The serving software.
    prompt_tokens : int
        Prompt length of the request, tokens.
    output_tokens : int
        Tokens generated.
    batch : int
        Requests decoded together.
    tp2_s : float
        Reported end-to-end latency on 2 GPUs, seconds.
    tp4_s : float
        Reported end-to-end latency on 4 GPUs, seconds.
    source : str
        URL.
    note : str
        How the row was read.
    """

    model: ModelSpec
    accel: Accelerator
    fabric: Fabric
    engine: str
    prompt_tokens: int
    output_tokens: int
    batch: int
    tp2_s: float
    tp4_s: float
    source: str
    note: str

    @property
    def measured_speedup(self) -> float:
        """Reported TP 2 latency over TP 4 latency."""
        return self.tp2_s / self.tp4_s

    def predicted_s(self, n: int) -> float:
        """The model's latency for the same request on ``n`` GPUs, seconds.

        One prefill of the prompt plus one decode step per output token at
        the growing context, all on the record's fabric (ring, bandwidth term in).
        """
        total = prefill_step(self.model, self.accel, self.fabric, n, self.prompt_tokens).total_s
        for i in range(self.output_tokens):
            total += decode_step(
                self.model,
                self.accel,
                self.fabric,
                n,
                batch=self.batch,
                context=self.prompt_tokens + i,
            ).total_s
        return total

    @property
    def predicted_speedup(self) -> float:
        """The model's TP 2 latency over its TP 4 latency."""
        return self.predicted_s(2) / self.predicted_s(4)


_H100 = GPU
_NOTE = "batch 1, 128 input + 20 output tokens; end-to-end latency, TensorRT-LLM"

#: The published rows (batch 1; the A100 13B row at TP 4 is an outlier on the page and is left out).
PUBLISHED_SCALING: tuple[PublishedScaling, ...] = (
    PublishedScaling(
        LLAMA2_13B, _H100, FAST, "TensorRT-LLM", 128, 20, 1, 69.7e-3, 61.4e-3, _NEMO, _NOTE
    ),
    PublishedScaling(
        LLAMA2_7B, _H100, FAST, "TensorRT-LLM", 128, 20, 1, 128.6e-3, 107.4e-3, _NEMO, _NOTE
    ),
    PublishedScaling(
        LLAMA2_7B, A100, A100_NVLINK, "TensorRT-LLM", 128, 20, 1, 171.7e-3, 143.7e-3, _NEMO, _NOTE
    ),
)

#: Columns of :func:`reality_rows`.
REALITY_HEADER: tuple[str, ...] = (
    "model on GPU",
    "measured TP 2 / TP 4 (ms)",
    "measured speed-up",
    "model's TP 2 / TP 4 (ms)",
    "model's speed-up",
)


def reality_rows(
    records: tuple[PublishedScaling, ...] = PUBLISHED_SCALING,
) -> list[tuple[str, str, str, str, str]]:
    """One row per record: what was measured and what the model predicts.

    Parameters
    ----------
    records : tuple of PublishedScaling, default PUBLISHED_SCALING
        The measurements.

    Returns
    -------
    list of tuple of str
        Formatted cells in :data:`REALITY_HEADER` order.
    """
    rows = []
    for r in records:
        card = r.accel.name.split(" ")[0]
        rows.append(
            (
                f"{r.model.name} on {card}",
                f"{r.tp2_s * 1e3:.1f} / {r.tp4_s * 1e3:.1f}",
                format_ratio(r.measured_speedup),
                f"{r.predicted_s(2) * 1e3:.1f} / {r.predicted_s(4) * 1e3:.1f}",
                format_ratio(r.predicted_speedup),
            )
        )
    return rows


def reality_numbers() -> dict[str, str]:
    """Numbers the reality check glues.

    Returns
    -------
    dict of str to str
        ``reality_13b_measured`` / ``reality_13b_predicted`` (speed-ups of the
        H100 13B row), the same measured times, and the smallest and largest
        measured speed-up; ``reality_13b_stream_tp2``, the time two GPUs take
        just to stream the 13B row's bf16 weights once per generated token.
    """
    first = PUBLISHED_SCALING[0]
    measured = [r.measured_speedup for r in PUBLISHED_SCALING]
    return {
        "reality_13b_measured": format_ratio(first.measured_speedup),
        "reality_13b_predicted": format_ratio(first.predicted_speedup),
        "reality_13b_tp2": format_seconds(first.tp2_s, "ms", decimals=1),
        "reality_13b_tp4": format_seconds(first.tp4_s, "ms", decimals=1),
        "reality_13b_model_tp4": format_seconds(first.predicted_s(4), "ms", decimals=1),
        "reality_13b_stream_tp2": format_seconds(
            first.output_tokens * first.model.weight_bytes / (2 * first.accel.hbm_bandwidth),
            "ms",
            decimals=1,
        ),
        "reality_min_measured": format_ratio(min(measured)),
        "reality_max_measured": format_ratio(max(measured)),
    }


def numbers() -> dict[str, str]:
    """Every value the batching page glues: the worked example's numbers, the chapter's own and its reality check's.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {**overview.numbers(), **batching_numbers(), **reality_numbers()}


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/batching.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
