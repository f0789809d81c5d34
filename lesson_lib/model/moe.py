"""Decode of a mixture-of-experts (MoE) model: tensor parallelism or expert parallelism.

TP splits every matrix, expert or not, over ``n`` ranks and ends each layer in two all-reduces; EP
with data-parallel attention (DeepSeek-V3, SGLang's ``--enable-dp-attention``) gives each rank
``num_experts / n`` routed experts and ``batch / n`` sequences, and pays a dispatch and a combine
all-to-all per MoE layer. Assumptions: uniform, independent routing; load imbalance as one factor
``imbalance`` >= 1 on the busiest rank; compute as a per-rank roofline in two phases, the weights'
GEMMs and, given a context, attention over each sequence's cache (the larger of its bytes and its
arithmetic); no overlap. SI units.

Where each layout keeps the cache: TP copies a KV head past one per rank, so MLA's single latent is
whole on every rank, which reads every sequence's whole latent; EP with DP attention keeps each
sequence on one rank; decode context parallelism (DCP, TP only) splits each sequence's tokens over
``dcp`` ranks of the TP group, each reading ``1/dcp``, plus three collectives per attention layer
over the DCP group in vLLM's MLA decode (:func:`dcp_collectives`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.collectives import (
    allreduce_latency,
    allreduce_wire_bytes,
    alltoall_wire_bytes,
    collective_time,
    collective_wire_bytes,
)
from lesson_lib.model.context_parallel import context_parallel_max_sequences, max_dcp
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.specimen import DCP_KINDS
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import MAX_BATCH, STATE_PASSES, StepTerms, attention_pair_flops

#: The two layouts :func:`moe_decode_step` prices (DCP is a degree inside TP).
PARALLELISMS: tuple[str, ...] = ("tp", "ep")

#: vLLM's commit whose MLA decode the DCP collectives follow. Its ``forward`` in
#: ``vllm/model_executor/layers/attention/mla_attention.py`` all-gathers the queries ("decode_q do
#: allgather in head dim") and calls ``cp_lse_ag_out_rs`` (in ``vllm/v1/attention/ops/common.py``),
#: which all-gathers the log-sum-exps and reduce-scatters the outputs
#: (https://github.com/vllm-project/vllm/blob/90b0a26e0e1a8ae3ba34e9e0ea514411f1a6a182/vllm/model_executor/layers/attention/mla_attention.py).
#: The same ``forward`` refuses an FP8 cache with DCP ("DCP not support fp8 kvcache now"), so the
#: cache here is at the model's ``dtype_bytes`` (bf16 for DeepSeek-V3).
VLLM_DCP_COMMIT: str = "90b0a26e0e1a8ae3ba34e9e0ea514411f1a6a182"

#: Bytes of the log-sum-exp DCP exchanges per query head, in fp32 as the kernels return it (an
#: assumption). At 4 B against the query's 1,152 B for DeepSeek-V3 its bytes hardly matter.
LSE_BYTES: int = 4


@dataclass(frozen=True)
class MoEStep(StepTerms):
    """One decode step of an MoE model on ``n`` GPUs, seconds and bytes per rank.

    Sums and largest term as in :class:`~lesson_lib.model.step_time.StepTerms`.
    """

    #: ``"tp"`` or ``"ep"``.
    parallelism: str
    n: int
    #: The sequences over all ``n`` GPUs.
    batch: int
    #: The GEMMs' memory side (the weights the step touches) on the busiest rank, seconds.
    weights_s: float
    #: The GEMMs' arithmetic side on the busiest rank, seconds.
    flops_s: float
    latency_s: float
    bandwidth_s: float
    #: Blocking collectives per step, all-reduces (TP, and DCP's three per attention layer) or
    #: all-to-alls (EP).
    collectives: int
    #: Bytes the busiest rank sends per step, over all its collectives.
    wire_bytes: float
    #: Bytes all ranks together send per step.
    total_wire_bytes: float
    weights_per_gpu_bytes: float
    #: Tokens already cached in every sequence (0 for no cache read).
    context: int = 0
    #: Decode context parallelism inside TP (1 without).
    dcp: int = 1
    #: The busiest rank's cache of the batch (and its recurrent state, read and written), bytes it
    #: moves through HBM per step.
    kv_read_bytes: float = 0.0
    #: ``kv_read_bytes`` over the card's HBM bandwidth, seconds.
    kv_read_s: float = 0.0
    #: Attention's arithmetic over the cached context on the busiest rank, seconds.
    attention_flops_s: float = 0.0

    @property
    def gemm_s(self) -> float:
        """The GEMM phase, the larger of the weights' bytes and their arithmetic."""
        return max(self.weights_s, self.flops_s)

    @property
    def attention_s(self) -> float:
        """The attention phase, the larger of the cache's bytes and attention's arithmetic."""
        return max(self.kv_read_s, self.attention_flops_s)

    @property
    def compute_s(self) -> float:
        """Roofline compute, the GEMM phase then the attention phase."""
        return self.gemm_s + self.attention_s

    @property
    def tokens(self) -> int:
        """Tokens the step decodes over all GPUs, ``batch`` (one per sequence)."""
        return self.batch

    @property
    def wire_bytes_per_token(self) -> float:
        """Bytes all ranks together send per decoded token."""
        return self.total_wire_bytes / self.batch


def _moe_model(model: ModelSpec) -> ModelSpec:
    require_instance("model", model, ModelSpec)
    if not model.is_moe:
        raise ValueError(f"model must be a mixture-of-experts model, got {model.name} (dense)")
    return model


def _parallelism(parallelism: str) -> str:
    if parallelism not in PARALLELISMS:
        raise ValueError(f"parallelism must be one of {list(PARALLELISMS)}, got {parallelism!r}")
    return parallelism


def _experts_touched(num_experts: int, experts_per_token: int, tokens: int) -> float:
    """Distinct experts of one layer that ``tokens`` tokens visit, on average, under uniform
    routing: ``E (1 - (1 - k/E)^tokens)``.
    """
    experts = require_int("num_experts", num_experts, maximum=MAX_RANKS)
    k = require_int("experts_per_token", experts_per_token, maximum=experts)
    tokens = require_int("tokens", tokens, minimum=0, maximum=MAX_BATCH)
    return experts * (1.0 - (1.0 - k / experts) ** tokens)


def _local_batch(batch: int, n: int, parallelism: str) -> int:
    """Sequences the busiest rank decodes: all of them under TP, ``ceil(batch / n)`` under EP."""
    batch = require_int("batch", batch, maximum=MAX_BATCH)
    n = require_int("n", n, maximum=MAX_RANKS)
    return batch if _parallelism(parallelism) == "tp" else math.ceil(batch / n)


def expert_weight_bytes(model: ModelSpec) -> float:
    """Bytes of every routed expert of ``model`` (its experts' share of the weights).

    Parameters
    ----------
    model : ModelSpec

    Returns
    -------
    float
        ``routed_expert_params`` at the weights' bytes per parameter; a dense
        model is a ValueError, as in every function here.
    """
    model = _moe_model(model)
    return model.weight_bytes * model.routed_expert_params / model.params


def weights_per_gpu(model: ModelSpec, n: int, parallelism: str) -> float:
    """Weights each of ``n`` GPUs holds, bytes.

    Parameters
    ----------
    model : ModelSpec
    n : int
        GPUs, from 1 to 4096 (``MAX_RANKS``); under EP at most ``num_experts``.
    parallelism : str
        ``"tp"``: ``1/n`` of everything; ``"ep"``: every non-expert weight and
        ``1/n`` of the routed experts.

    Returns
    -------
    float
        Bytes.
    """
    model = _moe_model(model)
    n = _degree(model, n, parallelism)
    experts = expert_weight_bytes(model)
    if parallelism == "tp":
        return model.weight_bytes / n
    return model.weight_bytes - experts + experts / n


def _degree(model: ModelSpec, n: int, parallelism: str) -> int:
    if _parallelism(parallelism) == "ep":
        return require_int("n", n, maximum=min(model.num_experts, MAX_RANKS))
    return require_int("n", n, maximum=MAX_RANKS)


def attention_pair_flops_decode(model: ModelSpec) -> float:
    """FLOPs of one query-key pair in one attention layer at decode, all query heads.

    MLA decodes with the up-projections absorbed, as multi-query attention over the latent (vLLM's
    ``mla_attention.py`` at :data:`VLLM_DCP_COMMIT`: "MQA with QK headdim = Lkv + R, V headdim =
    Lkv"): per head a score over ``kv_lora_rank + qk_rope_head_dim`` elements and a weighted sum
    over ``kv_lora_rank``, a multiply and an add each. Other attention is
    :func:`~lesson_lib.model.step_time.attention_pair_flops`.

    Parameters
    ----------
    model : ModelSpec

    Returns
    -------
    float
        ``2 x heads x (2 kv_lora_rank + qk_rope_head_dim)`` under MLA: 278,528 for DeepSeek-V3.
    """
    require_instance("model", model, ModelSpec)
    if not model.kv_lora_rank:
        return attention_pair_flops(model)
    heads = model.num_query_heads or model.num_kv_heads
    return 2.0 * heads * (2 * model.kv_lora_rank + model.qk_rope_head_dim)


def dcp_collectives(
    model: ModelSpec, n: int, dcp: int, batch: int
) -> tuple[tuple[str, float], ...]:
    """The collectives DCP adds to one attention layer of a decode step, with their payloads.

    Each of the ``dcp`` ranks of a DCP group holds ``heads / n`` query heads and ``1/dcp`` of every
    sequence's tokens; it gathers the group's ``heads x dcp / n`` heads' queries, attends to its
    tokens, gathers the partial log-sum-exps to correct its partial outputs, and reduce-scatters
    them back to each rank's heads (vLLM at :data:`VLLM_DCP_COMMIT`). Under MLA a query is
    ``kv_lora_rank + qk_rope_head_dim`` elements and an output ``kv_lora_rank`` (before the value
    up-projection); otherwise ``head_dim`` both.

    Parameters
    ----------
    model : ModelSpec
    n : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).
    dcp : int
        Decode context parallelism, from 1 to ``max_dcp(model, n)``, dividing ``n``.
    batch : int
        Sequences, from 1 to 65536 (``MAX_BATCH``).

    Returns
    -------
    tuple of (str, float)
        ``(kind, payload bytes)`` for :func:`~lesson_lib.model.collectives.collective_time`
        over ``dcp`` ranks, in :data:`~lesson_lib.model.specimen.DCP_KINDS` order; empty for ``dcp = 1``.
    """
    require_instance("model", model, ModelSpec)
    n = require_int("n", n, maximum=MAX_RANKS)
    batch = require_int("batch", batch, maximum=MAX_BATCH)
    dcp = _dcp_degree(model, n, dcp, "tp")
    if dcp == 1:
        return ()
    heads = (model.num_query_heads or model.num_kv_heads) * dcp / n
    query = model.kv_lora_rank + model.qk_rope_head_dim if model.kv_lora_rank else model.head_dim
    out = model.kv_lora_rank or model.head_dim
    per_head = (query * model.dtype_bytes, LSE_BYTES, out * model.dtype_bytes)
    return tuple(
        (kind, batch * heads * nbytes) for kind, nbytes in zip(DCP_KINDS, per_head, strict=True)
    )


def _dcp_degree(model: ModelSpec, n: int, dcp: int, parallelism: str) -> int:
    if parallelism == "ep":
        if dcp != 1:
            raise ValueError(
                f"dcp must be 1 under EP (each rank keeps whole sequences), got {dcp!r}"
            )
        return 1
    dcp = require_int("dcp", dcp, maximum=max_dcp(model, n))
    if n % dcp:
        raise ValueError(f"dcp must divide the TP degree n = {n}, got {dcp}")
    return dcp


def _cache_terms(
    model: ModelSpec,
    accel: Accelerator,
    n: int,
    dcp: int,
    batch: int,
    local: int,
    context: int,
    parallelism: str,
) -> tuple[float, float]:
    """(bytes of the busiest rank's cache read per step, seconds of its attention arithmetic)."""
    if context == 0:
        return 0.0, 0.0
    pairs = model._cached_tokens(context) * attention_pair_flops_decode(model)
    if parallelism == "tp":
        # Every rank holds every sequence: its KV heads' share, 1/dcp of the tokens.
        per_sequence = model.kv_bytes(context) * kv_share(model, n) / dcp + (
            STATE_PASSES * model.state_bytes * state_share(model, n)
        )
        return batch * per_sequence, batch * pairs / n / accel.peak_flops
    per_sequence = model.kv_bytes(context) + STATE_PASSES * model.state_bytes
    return local * per_sequence, local * pairs / accel.peak_flops


def moe_decode_step(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    *,
    parallelism: str = "ep",
    batch: int = 1,
    dispatch_bytes: int | None = None,
    imbalance: float = 1.0,
    context: int = 0,
    dcp: int = 1,
) -> MoEStep:
    """One decode step of an MoE model on ``n`` GPUs under TP or EP (see the module's docstring).

    Parameters
    ----------
    model, accel, fabric
        An MoE model, one card (all ``n`` alike) and the wire between them.
    n : int
        GPUs, from 1 to 4096 (``MAX_RANKS``); under EP at most
        ``model.num_experts`` (each rank holds at least one expert).
    parallelism : str, default "ep"
        ``"tp"`` (two all-reduces per layer) or ``"ep"`` (a dispatch and a
        combine all-to-all per MoE layer, data-parallel attention).
    batch : int, default 1
        Sequences over all GPUs, from 1 to 65536 (``MAX_BATCH``).
    dispatch_bytes : int, optional
        Bytes per element of the dispatched vectors, from 1 to 8 (1 for the
        FP8 dispatch of DeepEP's low-latency kernels); default the model's
        ``dtype_bytes``. The combine is always at ``dtype_bytes``.
    imbalance : float, default 1.0
        The busiest rank's expert load over the mean, from 1 to ``n``.
    context : int, default 0
        Tokens already cached in every sequence, from 0 to ``model.max_context``.
        0 prices the weights alone, the lesson's heuristic: a step whose
        sequences hold a cache must say how long it is.
    dcp : int, default 1
        Decode context parallelism, TP only: from 1 to ``max_dcp(model, n)``
        (``n`` for MLA's one latent), dividing ``n``; must be 1 under EP.

    Returns
    -------
    MoEStep
        Seconds per term and bytes per rank: Mixtral-8x7B on 8 GPUs of the
        fast fabric makes 64 all-to-alls per token, 0.64 ms of latency.
    """
    model = _moe_model(model)
    require_instance("accel", accel, Accelerator)
    require_instance("fabric", fabric, Fabric)
    n = _degree(model, n, parallelism)
    batch = require_int("batch", batch, maximum=MAX_BATCH)
    if dispatch_bytes is None:
        dispatch_bytes = model.dtype_bytes
    dispatch_bytes = require_int("dispatch_bytes", dispatch_bytes, maximum=8)
    imbalance = require_number("imbalance", imbalance, minimum=1.0, maximum=float(n))
    context = require_int("context", context, minimum=0, maximum=model.max_context)
    dcp = _dcp_degree(model, n, dcp, parallelism)

    per_param = model.weight_bytes / model.params
    expert_bytes = model.expert_params * per_param  # one expert of one layer
    dense_bytes = model.weight_bytes - expert_weight_bytes(model)
    k = model.experts_per_token
    routed_active = k * model.expert_params * model.num_moe_layers  # per token
    other_active = model.active_params - routed_active
    touched = _experts_touched(model.num_experts, k, batch)
    local = _local_batch(batch, n, parallelism)
    vector = model.hidden_size
    if parallelism == "tp":
        read = (dense_bytes + touched * expert_bytes * model.num_moe_layers) / n
        flops = 2.0 * model.active_params * batch / n
        collectives = model.allreduces_per_token
        latency = collectives * allreduce_latency(n, fabric)
        wire = collectives * allreduce_wire_bytes(batch * vector * model.dtype_bytes, n)
        layers = model.num_attention_layers
        for kind, payload in dcp_collectives(model, n, dcp, batch):
            collectives += layers
            latency += layers * collective_time(kind, 0.0, dcp, fabric)
            wire += layers * collective_wire_bytes(kind, payload, dcp)
        total = n * wire
    else:
        on_rank = touched / n  # uniform routing: each rank's share of the touched experts
        read = dense_bytes + on_rank * expert_bytes * model.num_moe_layers
        flops = 2.0 * (other_active * local + imbalance * routed_active * batch / n)
        collectives = model.alltoalls_per_token
        # an empty all-to-all costs its fixed latency alone
        latency = collectives * collective_time("all_to_all", 0.0, n, fabric)
        # Dispatch and combine: k hidden vectors per token, (n-1)/n of them off the rank.
        per_token = sum(
            alltoall_wire_bytes(k * vector * element, n)
            for element in (dispatch_bytes, model.dtype_bytes)
        )
        wire = imbalance * model.num_moe_layers * local * per_token
        total = model.num_moe_layers * batch * per_token
    kv_read_bytes, attention_flops_s = _cache_terms(
        model, accel, n, dcp, batch, local, context, parallelism
    )
    return MoEStep(
        parallelism=parallelism,
        n=n,
        batch=batch,
        weights_s=read / accel.hbm_bandwidth,
        flops_s=flops / accel.peak_flops,
        latency_s=latency,
        bandwidth_s=wire / fabric.bandwidth,
        collectives=collectives,
        wire_bytes=wire,
        total_wire_bytes=total,
        weights_per_gpu_bytes=weights_per_gpu(model, n, parallelism),
        context=context,
        dcp=dcp,
        kv_read_bytes=kv_read_bytes,
        kv_read_s=kv_read_bytes / accel.hbm_bandwidth,
        attention_flops_s=attention_flops_s,
    )


def alltoall_crossover_tokens(
    model: ModelSpec, fabric: Fabric, n: int, *, dispatch_bytes: int | None = None
) -> float:
    """Tokens per rank at which an EP dispatch's latency and bandwidth terms are equal.

    Each token a rank holds adds k hidden vectors to its dispatch, ``(n - 1) /
    n`` of them leaving it; below this many tokens the all-to-alls are
    latency-bound (decode), above it bandwidth-bound (prefill).

    Parameters
    ----------
    model, fabric
        An MoE model and the wire.
    n : int
        EP degree, from 2 to ``model.num_experts``.
    dispatch_bytes : int, optional
        Bytes per dispatched element, from 1 to 8 (default ``dtype_bytes``).

    Returns
    -------
    float
        Tokens per rank (not rounded).
    """
    model = _moe_model(model)
    require_instance("fabric", fabric, Fabric)
    n = require_int("n", n, minimum=2, maximum=min(model.num_experts, MAX_RANKS))
    element = model.dtype_bytes if dispatch_bytes is None else dispatch_bytes
    element = require_int("dispatch_bytes", element, maximum=8)
    latency = collective_time("all_to_all", 0.0, n, fabric)  # the fixed part alone
    per_token = alltoall_wire_bytes(model.experts_per_token * model.hidden_size * element, n)
    return latency * fabric.bandwidth / per_token


def sequences_that_fit(
    model: ModelSpec,
    accel: Accelerator,
    n: int,
    parallelism: str,
    context_tokens: int,
    *,
    dcp: int = 1,
) -> int:
    """Sequences of ``context_tokens`` tokens the ``n`` GPUs hold beside the weights.

    Under TP the cache splits as in any tensor-parallel decode instance
    (:func:`~lesson_lib.model.context_parallel.context_parallel_max_sequences`: MLA's one latent is
    copied to every rank, each holding ``1/dcp`` of its tokens with DCP); under EP with
    data-parallel attention each rank keeps its own sequences' whole cache.

    Parameters
    ----------
    model, accel, n, parallelism
        As for :func:`weights_per_gpu`; all of the card's ``memory_bytes`` is available.
    context_tokens : int
        Tokens per sequence, from 1 to ``model.max_context``.
    dcp : int, default 1
        As for :func:`moe_decode_step`.

    Returns
    -------
    int
        Whole sequences over all ``n`` GPUs (0 when the weights do not fit).
    """
    model = _moe_model(model)
    require_instance("accel", accel, Accelerator)
    n = _degree(model, n, parallelism)
    context_tokens = require_int("context_tokens", context_tokens, maximum=model.max_context)
    dcp = _dcp_degree(model, n, dcp, parallelism)
    if parallelism == "tp":
        return context_parallel_max_sequences(model, accel, context_tokens, n, dcp)
    free = accel.memory_bytes - weights_per_gpu(model, n, parallelism)
    return 0 if free <= 0 else n * int(free // (model.kv_bytes(context_tokens) + model.state_bytes))
