"""Time of one decode step or one prefill, seconds: compute plus communication.

Compute is a roofline per phase: weight GEMMs take the larger of streaming this rank's weights and
their FLOPs; attention (given a context) the larger of KV and state traffic (:data:`STATE_PASSES`)
and FLOPs. Communication: ``model.allreduces_per_token`` serial all-reduces, a hidden vector per
token in flight. ``include_bandwidth=False`` is the lesson's arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.collectives import MAX_RANKS, allreduce_latency, allreduce_wire_bytes
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec, _require_hardware

#: Largest decode batch the functions accept (a bound on input, not a claim about hardware).
MAX_BATCH: int = 65_536

#: Times a decode step moves each sequence's recurrent state through HBM, twice because
#: a recurrence reads the state it starts from and writes the one it ends with. vLLM's Gated DeltaNet
#: layers do it in place, ``fused_recurrent_gated_delta_rule(..., inplace_final_state=True)``
#: (https://github.com/vllm-project/vllm, ``vllm/model_executor/layers/fla/ops``).
STATE_PASSES: int = 2


class StepTerms:
    """What a priced step derives from its three terms: the sum, and the largest term.

    Compute, then communication, no overlap; :class:`StepBreakdown` and
    :class:`~lesson_lib.model.moe.MoEStep` provide the attributes.
    """

    #: Compute time of the busiest rank, seconds.
    compute_s: float
    #: Sum of the collectives' fixed latencies, seconds.
    latency_s: float
    #: Sum of the collectives' bytes over the fabric's bandwidth, seconds.
    bandwidth_s: float
    #: Tokens the step processes over all ranks.
    tokens: int

    @property
    def communication_s(self) -> float:
        """Latency + bandwidth terms, seconds."""
        return self.latency_s + self.bandwidth_s

    @property
    def total_s(self) -> float:
        """Compute + communication, seconds (no overlap assumed)."""
        return self.compute_s + self.communication_s

    @property
    def tokens_per_s(self) -> float:
        """Tokens processed per second of this step, over the whole batch."""
        return self.tokens / self.total_s

    @property
    def bound(self) -> str:
        """The largest term, ``"compute"``, ``"latency"`` or ``"bandwidth"`` (first on a tie)."""
        terms = {kind: getattr(self, f"{kind}_s") for kind in ("compute", "latency", "bandwidth")}
        return max(terms, key=terms.__getitem__)


@dataclass(frozen=True)
class StepBreakdown(StepTerms):
    """Where the time of one step goes, in seconds; its sums come from :class:`StepTerms`."""

    #: :attr:`gemm_s` + :attr:`attention_s`, seconds.
    compute_s: float
    latency_s: float
    #: The all-reduces' bytes over the bandwidth (0 when excluded), seconds.
    bandwidth_s: float
    #: The batch for decode, the prompt for prefill.
    tokens: int
    #: Streaming this rank's weights from HBM.
    weights_s: float
    #: All the step's arithmetic, GEMMs and attention, at the card's peak.
    flops_s: float
    #: Reading this rank's share of every sequence's KV cache, and reading and writing its recurrent
    #: state (0 when no context length was given).
    kv_read_s: float = 0.0
    #: Sequences in the step (the decode batch; 1 for a prefill).
    sequences: int = 1
    #: The part of ``flops_s`` spent attending to the cached context (0 with no context length).
    attention_flops_s: float = 0.0

    @property
    def gemm_flops_s(self) -> float:
        """Seconds of the weight GEMMs' arithmetic, ``flops_s - attention_flops_s``."""
        return self.flops_s - self.attention_flops_s

    @property
    def gemm_s(self) -> float:
        """The GEMM phase, the larger of streaming the weights and their arithmetic."""
        return max(self.weights_s, self.gemm_flops_s)

    @property
    def attention_s(self) -> float:
        """The attention phase, the larger of its KV and state traffic and its arithmetic."""
        return max(self.kv_read_s, self.attention_flops_s)

    @property
    def tokens_per_s_per_sequence(self) -> float:
        """Tokens per second one sequence of the step sees."""
        return self.tokens_per_s / self.sequences

    @property
    def communication_bound(self) -> str:
        """Name of the larger communication term (``"latency"`` or ``"bandwidth"``)."""
        return "latency" if self.latency_s >= self.bandwidth_s else "bandwidth"


def attention_pair_flops(model: ModelSpec) -> float:
    """FLOPs of one query-key pair in one attention layer, all query heads.

    The score (query dot key) and the weighted value (the key's value scaled and added) each take a
    multiply and an add per head dimension, for every query head:
    ``2 x 2 x query heads x head_dim``. A model naming no query heads has as many as KV heads.

    Parameters
    ----------
    model : ModelSpec

    Returns
    -------
    float
        FLOPs per pair and attention layer: 4 x 24 query heads x 256 = 24,576 for the specimen.
    """
    require_instance("model", model, ModelSpec)
    heads = model.num_query_heads or model.num_kv_heads
    return 4.0 * heads * model.head_dim


def _step(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    tokens: int,
    sequences: int,
    context: int | None,
    algorithm: str,
    include_bandwidth: bool,
) -> StepBreakdown:
    """One step of ``tokens`` tokens over ``sequences`` sequences, each with ``context`` cached."""
    _require_hardware(model, accel, fabric=fabric)
    require_instance("include_bandwidth", include_bandwidth, bool)
    n = require_int("n", n, maximum=MAX_RANKS)
    weights_s = model.weight_bytes / (n * accel.hbm_bandwidth)
    gemm_flops = 2.0 * model.params * tokens
    attention_flops = 0.0
    kv_read_s = 0.0
    if context is not None:
        context = require_int("context", context, minimum=0, maximum=model.max_context)
        per_sequence = model.kv_bytes(context) * kv_share(model, n) + (
            STATE_PASSES * model.state_bytes * state_share(model, n)
        )
        kv_read_s = sequences * per_sequence / accel.hbm_bandwidth
        # Every sequence's query meets each cached token once, in every attention layer.
        attention_flops = attention_pair_flops(model) * model._cached_tokens(context) * sequences
    flops_s = (gemm_flops + attention_flops) / (n * accel.peak_flops)
    attention_flops_s = attention_flops / (n * accel.peak_flops)
    collectives = model.allreduces_per_token
    latency_s = collectives * allreduce_latency(n, fabric, algorithm)
    payload = tokens * model.hidden_vector_bytes
    bandwidth_s = collectives * allreduce_wire_bytes(payload, n, algorithm) / fabric.bandwidth
    return StepBreakdown(
        compute_s=max(weights_s, flops_s - attention_flops_s) + max(kv_read_s, attention_flops_s),
        latency_s=latency_s,
        bandwidth_s=bandwidth_s if include_bandwidth else 0.0,
        tokens=tokens,
        weights_s=weights_s,
        flops_s=flops_s,
        kv_read_s=kv_read_s,
        sequences=sequences,
        attention_flops_s=attention_flops_s,
    )


def decode_step(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    *,
    batch: int = 1,
    context: int | None = None,
    algorithm: str = "ring",
    include_bandwidth: bool = True,
) -> StepBreakdown:
    """Time to decode one token for each of ``batch`` sequences on ``n`` tensor-parallel GPUs.

    The weights stream once per step; each all-reduce carries a hidden vector per sequence.

    Parameters
    ----------
    model, accel, fabric
        The model, one card (all ``n`` are alike) and the wire between them.
    n : int
        Tensor-parallel degree, from 1 (no communication) to 4096 (``MAX_RANKS``).
    batch : int, default 1
        Sequences decoded together, from 1 to :data:`MAX_BATCH`.
    context : int, optional
        Tokens already in each sequence, from 0 to ``model.max_context``, whose KV and state reads
        and attention FLOPs are added; ``None`` (default): the lesson's heuristic, weights only.
    algorithm : str, default "ring"
        A key of :data:`~lesson_lib.model.collectives.ALGORITHMS`.
    include_bandwidth : bool, default True
        False reproduces the lesson's arithmetic, compute + latency only.

    Returns
    -------
    StepBreakdown
        ``total_s`` is each sequence's time per token (9.34 ms for the specimen on two fast GPUs,
        lesson's arithmetic), ``tokens_per_s`` the batch's (6,718 at batch 64, bandwidth included).
    """
    batch = require_int("batch", batch, maximum=MAX_BATCH)
    return _step(model, accel, fabric, n, batch, batch, context, algorithm, include_bandwidth)


def prefill_step(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    prompt_tokens: int,
    *,
    algorithm: str = "ring",
    include_bandwidth: bool = True,
) -> StepBreakdown:
    """Time to prefill ``prompt_tokens`` tokens on ``n`` GPUs, each all-reduce carrying them all.

    Parameters
    ----------
    model, accel, fabric, n, algorithm
        As for :func:`decode_step`.
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    include_bandwidth : bool, default True
        False leaves the bandwidth term out.

    Returns
    -------
    StepBreakdown
        Seconds per term; ``tokens_per_s`` is prompt tokens per second.
    """
    require_instance("model", model, ModelSpec)
    tokens = require_int("prompt_tokens", prompt_tokens, maximum=model.max_context)
    return _step(model, accel, fabric, n, tokens, 1, None, algorithm, include_bandwidth)


def speedup(before: StepBreakdown, after: StepBreakdown) -> float:
    """How many times faster ``after`` is than ``before``: ``before.total_s / after.total_s``.

    Parameters
    ----------
    before, after : StepBreakdown

    Returns
    -------
    float
        1.76 for the lesson's 2 -> 4 GPUs on the fast fabric.
    """
    return before.total_s / after.total_s
