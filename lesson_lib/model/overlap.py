"""Overlap, fusion and low precision: what each changes in a step's time, and what it leaves.

Each technique changes the bytes, the launches or the overlap of a step; none removes the fixed
latency of the collectives a decoded token waits for. The model of a step of ``tokens`` tokens on
``n`` tensor-parallel GPUs (:func:`step_time`): the roofline compute of
:func:`~lesson_lib.model.step_time.prefill_step` (a decoded token is a step of one token), one
add + RMSNorm kernel launched after each of the ``allreduces_per_token`` all-reduces, each
all-reduce its fixed latency plus its ring bytes over the bandwidth, nothing overlapped unless the
technique says so. The chunked overlap (:func:`chunked_overlap`) is a stated two-stage pipeline;
each chunk pays the whole latency, an assumption. Seconds and bytes throughout.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.moe import moe_decode_step
from lesson_lib.model.specimen import FAST, GPU, KERNEL_LAUNCH_GRAPH, MODEL
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import MAX_BATCH, StepBreakdown, decode_step, prefill_step

#: The techniques :func:`step_time` prices, by key.
TECHNIQUES: tuple[str, ...] = ("none", "fused", "chunked", "fp8_allreduce", "fp8_weights")
#: Chunks the chunked overlap splits each collective and its GEMM into (a choice, not a source's).
OVERLAP_CHUNKS: int = 4
#: Bytes per weight or element of FP8.
FP8_BYTES: float = 1.0
#: Bytes per weight of NVFP4, 4-bit values and one FP8 (1-byte) scale per 16 values,
#: 0.5 + 1 / 16 (its per-tensor FP32 scale left out).
NVFP4_BYTES: float = 0.5 + 1 / 16


def fused_launch_saving_s(collectives: int, launch_s: float) -> float:
    """Launches fusion saves: one add + RMSNorm kernel after each all-reduce, ``collectives x launch_s``.

    Parameters
    ----------
    collectives : int
        All-reduces each followed by its own add + RMSNorm kernel, from 0 to 65536.
    launch_s : float
        One kernel's launch, seconds, >= 0.

    Returns
    -------
    float
        Seconds per step: 128 x 3.5 us = 0.448 ms eager for the specimen.
    """
    collectives = require_int("collectives", collectives, minimum=0, maximum=MAX_BATCH)
    return collectives * require_number("launch_s", launch_s, unit="s")


@dataclass(frozen=True)
class Overlap:
    """One collective and its dependent GEMM, split in chunks and pipelined, seconds."""

    #: From the first chunk's send to the last chunk's GEMM.
    total_s: float
    #: The GEMM alone, unsplit.
    compute_s: float
    #: All the communication, chunk latencies included.
    comm_s: float

    @property
    def exposed_s(self) -> float:
        """Communication not hidden under the GEMM, ``total_s - compute_s``."""
        return self.total_s - self.compute_s

    @property
    def hidden_s(self) -> float:
        """Communication that runs under the GEMM, ``comm_s - exposed_s``."""
        return self.comm_s - self.exposed_s


def chunked_overlap(latency_s: float, wire_s: float, compute_s: float, chunks: int) -> Overlap:
    """A collective and its GEMM in ``chunks`` chunks, the GEMM of one beside the next's transfer.

    Chunk c costs ``latency_s + wire_s / chunks`` on the wire and ``compute_s / chunks`` on the
    GPU; as a two-stage pipeline the whole takes ``c + (chunks - 1) max(c, g) + g``. One chunk is
    no overlap, ``c + compute_s``.

    Parameters
    ----------
    latency_s : float
        The collective's fixed latency, paid by every chunk, seconds, >= 0.
    wire_s : float
        Its bytes over the bandwidth, seconds, >= 0.
    compute_s : float
        The GEMM that needs it, seconds, >= 0.
    chunks : int
        From 1 to 1024.

    Returns
    -------
    Overlap
        Prefill of 4,096 tokens on four fast GPUs, four chunks: 481.8 us for 436.8 us of GEMM.
    """
    latency_s = require_number("latency_s", latency_s, unit="s")
    wire_s = require_number("wire_s", wire_s, unit="s")
    compute_s = require_number("compute_s", compute_s, unit="s")
    chunks = require_int("chunks", chunks, maximum=1024)
    c, g = latency_s + wire_s / chunks, compute_s / chunks
    total = c + (chunks - 1) * max(c, g) + g
    return Overlap(total_s=total, compute_s=compute_s, comm_s=chunks * c)


@dataclass(frozen=True)
class StepTime:
    """One step under a technique, seconds: what the GPU waits for and what it hides."""

    #: The roofline compute.
    compute_s: float
    #: The add + RMSNorm kernels' launches left on the critical path.
    launches_s: float
    #: Exposed collective latency.
    latency_s: float
    #: Exposed collective bytes over the bandwidth.
    bandwidth_s: float
    #: Communication that runs under the compute.
    hidden_s: float

    @property
    def total_s(self) -> float:
        """The step, its compute, launches and exposed communication added."""
        return self.compute_s + self.launches_s + self.latency_s + self.bandwidth_s


def _technique(technique: str) -> str:
    if technique not in TECHNIQUES:
        raise ValueError(f"technique must be one of {list(TECHNIQUES)}, got {technique!r}")
    return technique


def step_time(
    tokens: int,
    technique: str = "none",
    fabric: Fabric = FAST,
    n: int = 4,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    chunks: int = OVERLAP_CHUNKS,
    launch_s: float = KERNEL_LAUNCH_GRAPH,
) -> StepTime:
    """A step of ``tokens`` tokens (1: a decoded token; more: a prompt) under ``technique``.

    ``"none"``: compute, then after every all-reduce its add + RMSNorm launch; ``"fused"``: the
    launches gone; ``"chunked"``: every all-reduce overlapped with its share of the compute by
    :func:`chunked_overlap`; ``"fp8_allreduce"``: the bytes on the wire halved; ``"fp8_weights"``:
    the weights read at one byte each (the arithmetic stays at the card's ``peak_flops``).

    Parameters
    ----------
    tokens : int
        Tokens every all-reduce carries, from 1 to ``model.max_context``.
    technique : str, default "none"
        One of :data:`TECHNIQUES`.
    fabric : Fabric, default FAST
    n : int, default 4
        Tensor-parallel GPUs, from 2 to 4096.
    model, accel : ModelSpec, Accelerator, default the specimen on its card
    chunks : int, default :data:`OVERLAP_CHUNKS`
        Chunks of the chunked overlap, from 1 to 1024.
    launch_s : float, default :data:`~lesson_lib.model.specimen.KERNEL_LAUNCH_GRAPH`
        One add + RMSNorm kernel's launch, seconds (engines decode from CUDA graphs).

    Returns
    -------
    StepTime
        A decoded token on four fast GPUs: 4.03 ms of compute, 0.064 ms of launches, 1.28 ms of
        latency.
    """
    technique = _technique(technique)
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    launch_s = require_number("launch_s", launch_s, unit="s")
    step = prefill_step(model, accel, fabric, n, tokens)
    if technique == "fp8_weights":
        step = _reweighed(step, model, accel, n, FP8_BYTES)
    collectives = model.allreduces_per_token
    launches = 0.0 if technique == "fused" else fused_launch_saving_s(collectives, launch_s)
    per_bytes = step.bandwidth_s / collectives
    if technique == "fp8_allreduce":
        per_bytes *= FP8_BYTES / model.dtype_bytes
    if technique != "chunked":
        return StepTime(step.compute_s, launches, step.latency_s, collectives * per_bytes, 0.0)
    alpha = step.latency_s / collectives
    one = chunked_overlap(alpha, per_bytes, step.compute_s / collectives, chunks)
    latency_share = chunks * alpha / one.comm_s  # the exposed part split as the comm's own parts
    return StepTime(
        compute_s=step.compute_s,
        launches_s=launches,
        latency_s=collectives * one.exposed_s * latency_share,
        bandwidth_s=collectives * one.exposed_s * (1 - latency_share),
        hidden_s=collectives * one.hidden_s,
    )


def _reweighed(
    step: StepBreakdown, model: ModelSpec, accel: Accelerator, n: int, bytes_per_weight: float
) -> StepBreakdown:
    """``step`` with the weights read at ``bytes_per_weight`` bytes each."""
    weights_s = model.params * bytes_per_weight / (n * accel.hbm_bandwidth)
    gemm = max(weights_s, step.flops_s - step.attention_flops_s)
    attention = max(step.kv_read_s, step.attention_flops_s)
    return replace(step, weights_s=weights_s, compute_s=gemm + attention)


def low_precision_decode(
    bytes_per_weight: float,
    n: int,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    fabric: Fabric = FAST,
) -> StepBreakdown:
    """The lesson's decoded token (weights read + latency) with every weight at ``bytes_per_weight``.

    The checkpoint-size heuristic treats every weight alike; real low-precision checkpoints keep
    some tensors (embeddings, norms) at 16 bits.

    Parameters
    ----------
    bytes_per_weight : float
        From 0.125 to 8: 2 for bf16, :data:`FP8_BYTES`, :data:`NVFP4_BYTES`.
    n : int
        Tensor-parallel GPUs, from 1 to 4096.
    model, accel, fabric : default the specimen, its card and the fast fabric

    Returns
    -------
    StepBreakdown
        FP8 on four fast GPUs: 2.0149 ms of weights + 1.28 ms = 3.2949 ms.
    """
    bytes_per_weight = require_number(
        "bytes_per_weight", bytes_per_weight, minimum=0.125, maximum=8
    )
    step = decode_step(model, accel, fabric, n, include_bandwidth=False)
    return _reweighed(step, model, accel, require_int("n", n, maximum=MAX_RANKS), bytes_per_weight)


def kv_sequences(
    context_tokens: int,
    kv_bytes: float,
    n: int,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
) -> int:
    """Sequences of ``context_tokens`` that fit beside the weights with the KV cache at ``kv_bytes``.

    Only the attention layers' cache changes; the linear-attention state keeps its own dtype.

    Parameters
    ----------
    context_tokens : int
        Tokens per sequence, from 1 to ``model.max_context``.
    kv_bytes : float
        Bytes per cached element, from 0.5 to 8 (``model.dtype_bytes`` is the model's own).
    n : int
        Tensor-parallel GPUs, from 1 to 4096.
    model, accel : default the specimen on its card

    Returns
    -------
    int
        Whole sequences (0 when the weights alone do not fit).
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    context_tokens = require_int("context_tokens", context_tokens, maximum=model.max_context)
    kv_bytes = require_number("kv_bytes", kv_bytes, minimum=0.5, maximum=8)
    n = require_int("n", n, maximum=MAX_RANKS)
    free = accel.memory_bytes - model.weight_bytes / n
    kv = model.kv_bytes(context_tokens) * kv_share(model, n) * kv_bytes / model.dtype_bytes
    per_sequence = kv + model.state_bytes * state_share(model, n)
    return max(0, int(free // per_sequence))


@dataclass(frozen=True)
class DualBatch:
    """An MoE decode step of ``batch`` sequences, without and with two overlapped micro-batches."""

    batch: int
    #: Compute of one micro-batch of ``batch / 2``, seconds.
    compute_half_s: float
    #: Its all-to-alls, latency and bytes, seconds.
    alltoall_half_s: float
    #: The whole batch at once, compute then all-to-alls, seconds.
    without_s: float

    @property
    def with_s(self) -> float:
        """Two micro-batches in steady state, ``2 max(compute_half_s, alltoall_half_s)``."""
        return 2 * max(self.compute_half_s, self.alltoall_half_s)

    @property
    def hidden(self) -> bool:
        """Whether each micro-batch's all-to-alls fit under the other's compute."""
        return self.alltoall_half_s <= self.compute_half_s


def dual_batch_overlap(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    batch: int,
    *,
    dispatch_bytes: int | None = None,
    context: int = 0,
) -> DualBatch:
    """Two micro-batches of ``batch / 2``, one's all-to-alls under the other's compute (EP).

    Both priced by :func:`~lesson_lib.model.moe.moe_decode_step` under EP with DP attention; a
    micro-batch whose compute is reading weights reads them again, so overlap can lengthen a step.

    Parameters
    ----------
    model, accel, fabric
        An MoE model, its card and the wire.
    n : int
        EP degree, from 1 to ``model.num_experts``.
    batch : int
        Sequences over all GPUs, even, from 2 to 65536.
    dispatch_bytes : int, optional
        As for :func:`~lesson_lib.model.moe.moe_decode_step`.
    context : int, default 0
        Tokens cached in every sequence, as there.

    Returns
    -------
    DualBatch
    """
    batch = require_int("batch", batch, minimum=2, maximum=MAX_BATCH)
    if batch % 2:
        raise ValueError(f"batch must be even to split in two, got {batch}")
    options = {"parallelism": "ep", "dispatch_bytes": dispatch_bytes, "context": context}
    whole = moe_decode_step(model, accel, fabric, n, batch=batch, **options)
    half = moe_decode_step(model, accel, fabric, n, batch=batch // 2, **options)
    return DualBatch(
        batch=batch,
        compute_half_s=half.compute_s,
        alltoall_half_s=half.latency_s + half.bandwidth_s,
        without_s=whole.total_s,
    )
