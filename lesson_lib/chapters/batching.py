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

The chapter ends with speculative decoding with the specimen's own one-layer
multi-token-prediction head: a step then verifies several tokens per
sequence, and each collective carries that many hidden vectors per sequence,
so a batch reaches the crossover sooner. The module sizes the head from the
model's shapes and counts the tokens per collective.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import glue_numbers
from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.collectives import crossover_tokens
from lesson_lib.model.memory import max_sequences
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, TOKENS_PER_S
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepBreakdown, decode_step
from lesson_lib.model.units import KiB, format_bytes, format_count, format_ratio, format_seconds

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


#: Draft tokens per step in the speculative-decoding section, an illustrative
#: depth and not a recommendation (vLLM's MTP guide suggests starting at 1, and
#: engines let the operator choose).
SPEC_DRAFT_TOKENS: int = 3
#: The specimen's multi-token-prediction head has one layer (the 15 ``mtp.*``
#: tensors of Qwen/Qwen3.8-27B: a fusion projection, one transformer layer, norms).
MTP_LAYERS: int = 1
#: vLLM's one-stage limit on up to four fully connected GPUs (``custom_all_reduce.cuh``).
_VLLM_ONE_STAGE_4 = 512 * KiB


def mtp_head_params(model: ModelSpec = MODEL, layers: int = MTP_LAYERS) -> float:
    """Parameters of a multi-token-prediction head of ``layers`` gated-attention layers.

    The head concatenates a token's embedding with the main model's hidden state
    and projects ``2h -> h`` (the fusion projection), then runs ``layers``
    full-attention layers of the main model's shapes, each followed by its FFN.
    The attention is gated: the query projection also yields an output gate, so
    it has twice the query width. Embedding and LM head are shared with the
    main model and not counted.

    Parameters
    ----------
    model : ModelSpec, default the specimen
        Needs ``num_query_heads`` and ``ffn_size``.
    layers : int, default MTP_LAYERS
        Transformer layers in the head, from 1 to 64.

    Returns
    -------
    float
        Parameters: projection, attention (query and gate, key, value,
        output), FFN (gate, up, down) and norms (five of width ``h``, the
        query and key norms of width ``head_dim``).

    Raises
    ------
    ValueError
        If the model does not give its query heads or FFN size.

    Examples
    --------
    >>> round(mtp_head_params() / 1e6)
    425
    """
    require_instance("model", model, ModelSpec)
    layers = require_int("layers", layers, maximum=64)
    if model.num_query_heads is None or model.ffn_size is None:
        raise ValueError(
            f"model must give num_query_heads and ffn_size to size an MTP head, "
            f"got {model.num_query_heads!r} and {model.ffn_size!r}"
        )
    h, d = model.hidden_size, model.head_dim
    q, kv = model.num_query_heads * d, model.num_kv_heads * d
    attention = h * 2 * q + 2 * h * kv + q * h
    ffn = 3 * h * model.ffn_size
    norms = 2 * h + 2 * d  # the layer's two norms, and its query and key norms
    fusion = 2 * h * h + 2 * h  # the projection and its two input norms
    return float(fusion + h + layers * (attention + ffn + norms))  # + the head's final norm


def speculative_tokens_per_collective(sequences: int, draft_tokens: int = SPEC_DRAFT_TOKENS) -> int:
    """Tokens each tensor-parallel collective of a verification step carries.

    A step verifies the ``draft_tokens`` drafted tokens of every sequence and
    the token after them in one pass, so each all-reduce carries ``draft_tokens
    + 1`` hidden vectors per sequence, however many drafts are then accepted.

    Parameters
    ----------
    sequences : int
        Sequences in the step, from 1 to 1,000,000.
    draft_tokens : int, default SPEC_DRAFT_TOKENS
        Drafted tokens per sequence and step, from 0 (plain decode) to 64.

    Returns
    -------
    int
        ``sequences * (draft_tokens + 1)``.
    """
    sequences = require_int("sequences", sequences, maximum=1_000_000)
    draft_tokens = require_int("draft_tokens", draft_tokens, minimum=0, maximum=64)
    return sequences * (draft_tokens + 1)


def speculative_crossover_sequences(
    model: ModelSpec,
    fabric: Fabric,
    n: int,
    draft_tokens: int = SPEC_DRAFT_TOKENS,
) -> float:
    """Sequences per step at which a verification step's all-reduces turn bandwidth-bound.

    The crossover is a number of tokens per collective
    (:func:`~lesson_lib.model.collectives.crossover_tokens`); with ``draft_tokens
    + 1`` tokens per sequence it is reached by that many times fewer sequences.

    Parameters
    ----------
    model : ModelSpec
        The model (its hidden vector sets the bytes per token).
    fabric : Fabric
        The wire.
    n : int
        Tensor-parallel degree, from 2 to 4096.
    draft_tokens : int, default SPEC_DRAFT_TOKENS
        Drafted tokens per sequence and step, from 0 to 64.

    Returns
    -------
    float
        Sequences (not rounded).
    """
    draft_tokens = require_int("draft_tokens", draft_tokens, minimum=0, maximum=64)
    return crossover_tokens(model, fabric, n) / (draft_tokens + 1)


def speculative_numbers() -> dict[str, str]:
    """Numbers the speculative-decoding section glues.

    Returns
    -------
    dict of str to str
        ``spec_draft_tokens`` and ``spec_tokens_per_sequence`` (k and k + 1),
        ``spec_bytes_per_sequence`` (one sequence's share of each all-reduce),
        ``spec_crossover_4`` (sequences at which four fast GPUs turn
        bandwidth-bound, against ``batch_crossover_4`` without drafts),
        ``spec_one_stage_sequences`` (the smallest batch whose all-reduces
        pass vLLM's one-stage limit on four GPUs) and ``spec_one_stage_limit``;
        ``mtp_params`` / ``mtp_bytes`` / ``mtp_share`` (the one-layer head's
        size, in bf16 and as a share of the lesson's 27 billion).
    """
    m, k = MODEL, SPEC_DRAFT_TOKENS
    per_sequence = speculative_tokens_per_collective(1, k) * m.hidden_vector_bytes
    head = mtp_head_params(m)
    return {
        "spec_draft_tokens": format_count(k),
        "spec_tokens_per_sequence": format_count(k + 1),
        "spec_bytes_per_sequence": format_bytes(per_sequence, "KiB", decimals=0),
        "spec_crossover_4": format_count(speculative_crossover_sequences(m, FAST, 4, k)),
        "spec_one_stage_sequences": format_count(math.floor(_VLLM_ONE_STAGE_4 / per_sequence) + 1),
        "spec_one_stage_limit": format_bytes(_VLLM_ONE_STAGE_4, "KiB", decimals=0),
        "mtp_params": format_count(head / 1e9, decimals=2) + " billion",
        "mtp_bytes": format_bytes(head * m.dtype_bytes, "GB"),
        "mtp_share": format_count(100 * head / m.params, decimals=1) + " %",
    }


def numbers() -> dict[str, str]:
    """Every value the batching page glues: the worked example's numbers, the chapter's own and its speculative-decoding section's.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {**overview.numbers(), **batching_numbers(), **speculative_numbers()}


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/batching.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
