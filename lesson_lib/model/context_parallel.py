"""Context parallelism: ring attention for a long prefill, and decode context parallelism (DCP).

Ring attention splits a prompt over ``cp`` positions that pass KV blocks around while computing; DCP
shards each KV head's tokens over the GPUs TP would fill with copies. SI units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec, _require_hardware
from lesson_lib.model.step_time import attention_pair_flops, prefill_step


def max_dcp(model: ModelSpec, tp: int) -> int:
    """Largest decode context parallelism a decode instance of ``tp`` GPUs allows.

    vLLM bounds the DCP size by the KV-head copies it removes: past one KV
    head per GPU, tensor parallelism holds ``tp / kv_heads`` copies of each.

    Parameters
    ----------
    model : ModelSpec
    tp : int
        Tensor-parallel degree of the decode instance, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    int
        ``max(1, tp // kv_heads)``.
    """
    require_instance("model", model, ModelSpec)
    return max(1, require_int("tp", tp, maximum=MAX_RANKS) // model.num_kv_heads)


def causal_attention_flops(model: ModelSpec, tokens: int) -> float:
    """FLOPs of causal attention over a prompt of ``tokens`` tokens, all attention layers.

    Query ``i`` attends to keys ``0..i``, so a prompt of ``L`` tokens has
    ``L (L + 1) / 2`` query-key pairs per layer; a sliding-window layer's queries attend to at most
    ``W = min(L, sliding_window)`` keys, ``W (W + 1) / 2 + (L - W) W`` pairs. Each pair costs
    :func:`~lesson_lib.model.step_time.attention_pair_flops`, as in
    :func:`~lesson_lib.model.step_time.decode_step`.

    Parameters
    ----------
    model : ModelSpec
    tokens : int
        Prompt length, from 1 to ``model.max_context``.

    Returns
    -------
    float
        FLOPs (0 for a model without attention layers).
    """
    require_instance("model", model, ModelSpec)
    length = require_int("tokens", tokens, maximum=model.max_context)
    pairs = length * (length + 1) / 2
    window = min(length, model.sliding_window)
    capped = window * (window + 1) / 2 + (length - window) * window
    full = model.num_attention_layers - model.num_sliding_layers
    return attention_pair_flops(model) * (full * pairs + model.num_sliding_layers * capped)


@dataclass(frozen=True)
class RingAttentionStep:
    """One step of ring attention in a context-parallel prefill, one attention layer.

    Each of ``cp`` GPUs passes its KV block on while its queries attend to the one received.
    """

    #: Tokens of each GPU's chunk, ``ceil(context / cp)``.
    chunk_tokens: int
    #: Bytes one GPU sends per step, its chunk's K and V in one attention layer (its KV heads).
    block_bytes: float
    #: Latency + block bytes / bandwidth, seconds.
    send_s: float
    #: Seconds of the attention of the chunk's queries against one received block, half of the chunk
    #: x chunk pairs, as a causal mask leaves them with the chunks balanced across the ring.
    compute_s: float

    @property
    def hidden(self) -> bool:
        """True when the block crosses before the attention against the last one is done."""
        return self.send_s <= self.compute_s

    @property
    def exposed_s(self) -> float:
        """Seconds per step the send outlasts the attention (0 when hidden)."""
        return max(0.0, self.send_s - self.compute_s)


def _ring_terms(model: ModelSpec, accel: Accelerator, tp: int) -> tuple[float, float]:
    """(bytes per token of a block, seconds per token^2 of attention) for one GPU."""
    per_token = 2 * model.num_kv_heads * model.head_dim * model.dtype_bytes * kv_share(model, tp)
    # Half the pairs (causal), 1/tp of the query heads.
    per_pair = attention_pair_flops(model) / 2 / (tp * accel.peak_flops)
    return per_token, per_pair


def ring_attention_step(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, context: int, cp: int, *, tp: int = 1
) -> RingAttentionStep:
    """One ring-attention step of a prefill of ``context`` tokens over ``cp`` GPUs.

    The model covers the attention layers; the linear-attention layers hand
    a fixed-size state from chunk to chunk instead, which it leaves out.

    Parameters
    ----------
    model, accel, fabric
        The model, one card and the wire between neighbours on the ring.
    context : int
        Prompt length, from 1 to ``model.max_context``.
    cp : int
        Context-parallel degree (GPUs on the ring), from 2 to 4096.
    tp : int, default 1
        Tensor-parallel degree inside each ring position, from 1 to 4096: each GPU holds and sends
        its share of the KV heads and computes its share of the query heads.

    Returns
    -------
    RingAttentionStep
    """
    _require_hardware(model, accel, fabric=fabric)
    tokens = require_int("context", context, maximum=model.max_context)
    ranks = require_int("cp", cp, minimum=2, maximum=MAX_RANKS)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    chunk = math.ceil(tokens / ranks)
    per_token, per_pair = _ring_terms(model, accel, tp)
    block = chunk * per_token
    return RingAttentionStep(
        chunk_tokens=chunk,
        block_bytes=block,
        send_s=fabric.latency + block / fabric.bandwidth,
        compute_s=per_pair * chunk**2,
    )


def ring_attention_min_chunk(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, *, tp: int = 1
) -> float:
    """Tokens per GPU at which a ring-attention step's send takes as long as its attention.

    The send grows with the chunk ``c`` (``alpha + c b / B``), the attention with its square
    (``k c^2``), so a chunk longer than the root of ``k c^2 = alpha + c b / B`` hides the ring:
    about ``b F / (B * 2 h d)`` tokens without latency (``b`` the block's bytes per token, ``F`` the
    peak, ``h`` the query heads and ``d`` the head dimension per GPU).

    Parameters
    ----------
    model, accel, fabric, tp
        As for :func:`ring_attention_step`.

    Returns
    -------
    float
        Tokens (not rounded).
    """
    _require_hardware(model, accel, fabric=fabric)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    per_token, per_pair = _ring_terms(model, accel, tp)
    linear = per_token / fabric.bandwidth
    return (linear + math.sqrt(linear**2 + 4 * per_pair * fabric.latency)) / (2 * per_pair)


def context_parallel_prefill(
    model: ModelSpec,
    accel: Accelerator,
    tp_fabric: Fabric,
    ring_fabric: Fabric,
    prompt_tokens: int,
    cp: int,
    *,
    tp: int = 1,
) -> float:
    """Seconds to prefill a prompt split over ``cp`` ring positions of ``tp`` GPUs each.

    Each position runs :func:`~lesson_lib.model.step_time.prefill_step` on its
    ``ceil(L / cp)`` tokens (on ``tp_fabric``) and a ``1 / (cp tp)`` share of
    the prompt's causal attention; each attention layer's ``cp - 1`` ring steps
    add what their sends do not hide (:func:`ring_attention_step`).

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator
    tp_fabric, ring_fabric : Fabric
        The wire of each position's all-reduces, and the one between ring neighbours.
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    cp, tp
        As for :func:`ring_attention_step`.

    Returns
    -------
    float
    """
    require_instance("model", model, ModelSpec)
    require_instance("tp_fabric", tp_fabric, Fabric)
    require_instance("ring_fabric", ring_fabric, Fabric)
    prompt_tokens = require_int("prompt_tokens", prompt_tokens, maximum=model.max_context)
    step = ring_attention_step(model, accel, ring_fabric, prompt_tokens, cp, tp=tp)
    chunk = prefill_step(model, accel, tp_fabric, tp, step.chunk_tokens)
    attention = causal_attention_flops(model, prompt_tokens) / (cp * tp * accel.peak_flops)
    ring = model.num_attention_layers * (cp - 1) * step.exposed_s
    return chunk.total_s + attention + ring


def context_parallel_sequence_bytes(model: ModelSpec, context: int, tp: int, dcp: int = 1) -> float:
    """Bytes one sequence takes on the busiest GPU of a decode instance with DCP.

    Tensor parallelism copies KV heads past one per GPU; DCP shards each head's
    tokens over ``dcp`` of the GPUs that would hold copies (not the state).

    Parameters
    ----------
    model : ModelSpec
    context : int
        Tokens of the sequence, from 1 to ``model.max_context``.
    tp : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).
    dcp : int, default 1
        Decode context parallelism, from 1 to :func:`max_dcp`.

    Returns
    -------
    float
        ``kv_bytes x kv_share(tp) / dcp + state_bytes x state_share(tp)``: at TP 8 on the specimen's
        full context 4 GiB of KV per GPU without DCP, 2 GiB with DCP 2.
    """
    require_instance("model", model, ModelSpec)
    tokens = require_int("context", context, maximum=model.max_context)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    dcp = require_int("dcp", dcp, maximum=max_dcp(model, tp))
    kv = model.kv_bytes(tokens) * kv_share(model, tp) / dcp
    return kv + model.state_bytes * state_share(model, tp)


def context_parallel_max_sequences(
    model: ModelSpec, accel: Accelerator, context: int, tp: int, dcp: int = 1
) -> int:
    """Sequences of ``context`` tokens that fit beside the weights at TP ``tp`` and DCP ``dcp``.

    Parameters
    ----------
    model, accel
        The model and one card (its whole visible memory is used, no runtime reserve).
    context, tp, dcp
        As for :func:`context_parallel_sequence_bytes`.

    Returns
    -------
    int
        Whole sequences (0 if the weights alone do not fit).
    """
    require_instance("accel", accel, Accelerator)
    per_sequence = context_parallel_sequence_bytes(model, context, tp, dcp)
    free = accel.memory_bytes - model.weight_bytes / tp
    return max(0, int(free // per_sequence))
