"""The KV cache on the wire: disaggregated prefill and decode, in alpha-beta terms.

A request's cache (the prompt's attention KV and the linear-attention state) goes from ``P`` prefill
GPUs to ``D`` decode GPUs, each GPU's shard as in :mod:`lesson_lib.model.memory`. SI units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.context_parallel import RingAttentionStep as RingAttentionStep
from lesson_lib.model.context_parallel import causal_attention_flops, max_dcp

# Context parallelism is priced in its own module; the chapters, the coursework and
# the book also import it from here, beside the hand-off it is an alternative to.
from lesson_lib.model.context_parallel import (
    context_parallel_max_sequences as context_parallel_max_sequences,
)
from lesson_lib.model.context_parallel import context_parallel_prefill as context_parallel_prefill
from lesson_lib.model.context_parallel import (
    context_parallel_sequence_bytes as context_parallel_sequence_bytes,
)
from lesson_lib.model.context_parallel import ring_attention_min_chunk as ring_attention_min_chunk
from lesson_lib.model.context_parallel import ring_attention_step as ring_attention_step
from lesson_lib.model.layout import layer_kinds
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec, _require_hardware
from lesson_lib.model.step_time import StepBreakdown, prefill_step

#: Most layers :func:`overlap_stream` accepts (a bound on input, not on models).
MAX_LAYERS: int = 4096


def kv_transfer_bytes(model: ModelSpec, context: int) -> float:
    """Bytes of one sequence's cache: KV of the attention layers at ``context`` plus the state.

    Parameters
    ----------
    model : ModelSpec
    context : int
        Tokens in the sequence, from 1 to ``model.max_context``.

    Returns
    -------
    float
        ``model.kv_bytes(context) + model.state_bytes``: for the specimen 16 GiB + 146.8 MiB at full
        context, 4,096 x 64 KiB + 146.8 MiB at the lesson's prompt.
    """
    require_instance("model", model, ModelSpec)
    tokens = require_int("context", context, maximum=model.max_context)
    return model.kv_bytes(tokens) + model.state_bytes


def kv_transfer_time(model: ModelSpec, context: int, fabric: Fabric) -> float:
    """Seconds to send one sequence's cache over one port: latency + bytes / bandwidth.

    Parameters
    ----------
    model, context
        As for :func:`kv_transfer_bytes`.
    fabric : Fabric
        The port: ``latency`` once, ``bandwidth`` (bytes/s one way) for :func:`kv_transfer_bytes`.

    Returns
    -------
    float
        Seconds; about 0.347 s for the specimen's full-length sequence over one 400 Gb/s NIC.
    """
    require_instance("fabric", fabric, Fabric)
    return fabric.latency + kv_transfer_bytes(model, context) / fabric.bandwidth


def requests_per_second(model: ModelSpec, context: int, fabric: Fabric) -> float:
    """Requests of ``context`` tokens one port can hand over per second, back to back.

    Parameters
    ----------
    model, context, fabric
        As for :func:`kv_transfer_time`.

    Returns
    -------
    float
        ``1 / kv_transfer_time(...)``, requests/second.
    """
    return 1.0 / kv_transfer_time(model, context, fabric)


@dataclass(frozen=True)
class PrefillTime:
    """A prefill on ``n`` tensor-parallel GPUs, with its attention."""

    #: The lesson's prefill (:func:`~lesson_lib.model.step_time.prefill_step`).
    step: StepBreakdown
    #: The causal attention over the prompt at the card's peak over ``n`` GPUs
    #: (:func:`~lesson_lib.model.context_parallel.causal_attention_flops`), seconds.
    attention_s: float

    @property
    def total_s(self) -> float:
        """Seconds from the prompt's arrival to its last layer, step + attention."""
        return self.step.total_s + self.attention_s


def prefill_time(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, n: int, prompt_tokens: int
) -> PrefillTime:
    """Time to prefill a prompt on ``n`` GPUs, its causal attention included.

    Parameters
    ----------
    model, accel, fabric, n, prompt_tokens
        As for :func:`~lesson_lib.model.step_time.prefill_step`.

    Returns
    -------
    PrefillTime
    """
    step = prefill_step(model, accel, fabric, n, prompt_tokens)
    attention = causal_attention_flops(model, prompt_tokens) / (n * accel.peak_flops)
    return PrefillTime(step=step, attention_s=attention)


@dataclass(frozen=True)
class ShardedTransfer:
    """One sequence's cache handed from ``P`` prefill GPUs to ``D`` decode GPUs."""

    #: Bytes the decode GPUs receive in all, copied KV heads counted each time.
    total_bytes: float
    #: Bytes each prefill GPU sends, ``total_bytes / P``.
    sender_bytes: float
    #: Bytes the busiest decode GPU receives, its share of the KV cache and of the state.
    receiver_bytes: float
    #: The busiest port's bytes, the larger of the two above, or ``total_bytes`` on a shared port.
    port_bytes: float
    fabric: Fabric

    @property
    def time_s(self) -> float:
        """Seconds to hand the cache over, latency + port bytes / bandwidth."""
        return self.fabric.latency + self.port_bytes / self.fabric.bandwidth


def _split(
    model: ModelSpec, context: int, decode_gpus: int, dcp: int
) -> tuple[float, float, float, float]:
    """(KV in all, state in all, KV per decode GPU, state per decode GPU), bytes."""
    kv, state = model.kv_bytes(context), model.state_bytes
    # Past the head count every decode GPU holds a whole head: max(D, H) / H copies in all.
    kv_copies = max(decode_gpus, model.num_kv_heads) / model.num_kv_heads
    value_heads = model.linear_num_value_heads
    state_copies = max(decode_gpus, value_heads) / value_heads if value_heads else 0.0
    return (
        kv * kv_copies / dcp,
        state * state_copies,
        kv * kv_share(model, decode_gpus) / dcp,
        state * state_share(model, decode_gpus),
    )


def sharded_transfer(
    model: ModelSpec,
    context: int,
    fabric: Fabric,
    prefill_gpus: int,
    decode_gpus: int,
    *,
    shared_port: bool = False,
    dcp: int = 1,
) -> ShardedTransfer:
    """Hand one sequence's cache from a prefill instance to a decode instance.

    Each side holds the cache sharded as tensor parallelism leaves it: each decode GPU receives its
    share, the prefill GPUs split the sending evenly. With a port per GPU (a NIC, or NVLink) the
    busiest port sets the time; through one port per node (``shared_port``) everything queues on it.

    Parameters
    ----------
    model, context, fabric
        As for :func:`kv_transfer_time`.
    prefill_gpus, decode_gpus : int
        Tensor-parallel degrees ``P`` and ``D`` of the instances, from 1 to 4096.
    shared_port : bool, default False
        True when each side's GPUs share one port.
    dcp : int, default 1
        Decode context parallelism of the decode instance, from 1 to ``max(1, D // kv_heads)``: it
        shards the KV heads' copies along the tokens instead of storing them ``D / kv_heads`` times.

    Returns
    -------
    ShardedTransfer
        Its bytes and time: 86.7 ms for the specimen's full context 4 GPUs to 4 over ``INTER_NODE``.
    """
    require_instance("model", model, ModelSpec)
    require_instance("fabric", fabric, Fabric)
    require_instance("shared_port", shared_port, bool)
    tokens = require_int("context", context, maximum=model.max_context)
    senders = require_int("prefill_gpus", prefill_gpus, maximum=MAX_RANKS)
    receivers = require_int("decode_gpus", decode_gpus, maximum=MAX_RANKS)
    dcp = require_int("dcp", dcp, maximum=max_dcp(model, receivers))
    kv_all, state_all, kv_each, state_each = _split(model, tokens, receivers, dcp)
    total = kv_all + state_all
    sender, receiver = total / senders, kv_each + state_each
    return ShardedTransfer(
        total_bytes=total,
        sender_bytes=sender,
        receiver_bytes=receiver,
        port_bytes=total if shared_port else max(sender, receiver),
        fabric=fabric,
    )


@dataclass(frozen=True)
class StreamedTransfer:
    """A transfer streamed behind a computation, one piece per layer."""

    #: The computation, all layers, seconds.
    compute_s: float
    #: The pieces' bytes over the bandwidth, all layers, seconds (no latency).
    transfer_s: float
    #: The port's latency, paid once (the pieces are posted back to back).
    latency_s: float
    #: Seconds from the start of the computation to the last byte's arrival.
    finish_s: float
    #: True when the port is idle each time a layer finishes.
    keeps_up: bool
    #: The last layer's piece, seconds.
    last_piece_s: float

    @property
    def exposed_s(self) -> float:
        """Seconds the transfer adds after the computation, ``finish_s - compute_s``."""
        return self.finish_s - self.compute_s


def overlap_stream(
    compute_s: Sequence[float], transfer_s: Sequence[float], latency_s: float = 0.0
) -> StreamedTransfer:
    """Send each layer's piece as soon as the layer is done, in order, on one port.

    Layer ``i`` finishes at ``C_i``, the sum of the first ``i`` computations; its piece starts when
    both it and the port are ready and holds the port for ``transfer_s[i]`` (first in, first out).
    The port keeps up when ``transfer_s[i] <= compute_s[i + 1]`` for every layer but the last; the
    transfer can hide only if ``sum(transfer_s) <= sum(compute_s)`` as a whole, and is otherwise
    exposed by at least the difference.

    Parameters
    ----------
    compute_s : sequence of float
        Seconds of each layer's computation, in order (each >= 0; 1 to :data:`MAX_LAYERS` of them).
    transfer_s : sequence of float
        Seconds each layer's piece holds the port (each >= 0), as many.
    latency_s : float, default 0.0
        The port's fixed cost, seconds (>= 0), paid once at the end.

    Returns
    -------
    StreamedTransfer
        When the last byte arrives, and whether the port kept up: three layers
        of 1 s of compute and 2 s of transfer leave 4.0 s exposed.
    """
    computes = [require_number("compute_s", c, unit="s") for c in compute_s]
    transfers = [require_number("transfer_s", x, unit="s") for x in transfer_s]
    latency = require_number("latency_s", latency_s, unit="s")
    layers = require_int("layers", len(computes), maximum=MAX_LAYERS)
    if len(transfers) != layers:
        raise ValueError(
            f"transfer_s must have one entry per layer ({layers}), got {len(transfers)}"
        )
    done = port_free = 0.0
    keeps_up = True
    for compute, transfer in zip(computes, transfers, strict=True):
        done += compute
        keeps_up = keeps_up and port_free <= done
        port_free = max(port_free, done) + transfer
    return StreamedTransfer(
        compute_s=done,
        transfer_s=sum(transfers),
        latency_s=latency,
        finish_s=port_free + latency,
        keeps_up=keeps_up,
        last_piece_s=transfers[-1],
    )


@dataclass(frozen=True)
class Handoff:
    """A request's prefill and its cache's hand-off, shipped after or streamed by layer."""

    prefill: PrefillTime
    #: The whole cache sent once the prefill is done.
    bulk: ShardedTransfer
    #: The same bytes sent layer by layer behind the prefill.
    streamed: StreamedTransfer

    @property
    def ratio(self) -> float:
        """The bulk transfer over the prefill; below 1 it can hide behind it."""
        return self.bulk.time_s / self.prefill.total_s

    @property
    def ttft_bulk_s(self) -> float:
        """Seconds to the first token on the decode side, shipping after prefill."""
        return self.prefill.total_s + self.bulk.time_s

    @property
    def ttft_streamed_s(self) -> float:
        """Seconds to the first token on the decode side, streaming by layer."""
        return self.prefill.total_s + self.streamed.exposed_s

    @property
    def required_bandwidth(self) -> float:
        """Port bandwidth, bytes/s, below which the transfer cannot hide behind the prefill."""
        return self.bulk.port_bytes / self.prefill.total_s


def handoff(
    model: ModelSpec,
    accel: Accelerator,
    tp_fabric: Fabric,
    link: Fabric,
    prompt_tokens: int,
    prefill_gpus: int,
    decode_gpus: int,
    *,
    shared_port: bool = False,
    dcp: int = 1,
) -> Handoff:
    """Prefill a prompt on ``P`` GPUs and hand its cache to ``D``, in bulk and streamed.

    Streaming cuts the prefill into its layers (GEMMs and all-reduces evenly,
    the causal attention over the attention layers only); a layer's piece is
    its KV cache or its state, sized as in :func:`sharded_transfer`.

    Parameters
    ----------
    model, accel
        The model and one card, both instances alike.
    tp_fabric, link : Fabric
        The wire of the prefill instance's all-reduces; one port between the instances.
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    prefill_gpus, decode_gpus, shared_port, dcp
        As for :func:`sharded_transfer` (degrees from 1 to 4096).

    Returns
    -------
    Handoff
    """
    # Checked here first, so a bad argument is named as the caller wrote it.
    _require_hardware(model, accel, tp_fabric=tp_fabric, link=link)
    prompt_tokens = require_int("prompt_tokens", prompt_tokens, maximum=model.max_context)
    bulk = sharded_transfer(
        model, prompt_tokens, link, prefill_gpus, decode_gpus, shared_port=shared_port, dcp=dcp
    )
    prefill = prefill_time(model, accel, tp_fabric, prefill_gpus, prompt_tokens)
    kv_all, state_all, kv_each, state_each = _split(model, prompt_tokens, decode_gpus, dcp)
    kinds = layer_kinds(model)
    per_layer = prefill.step.total_s / model.num_layers
    computes, pieces = [], []
    for kind in kinds:
        if kind == "attention":
            computes.append(per_layer + prefill.attention_s / model.num_attention_layers)
            everything, each = kv_all, kv_each
            layers = model.num_attention_layers
        else:
            computes.append(per_layer)
            everything, each = state_all, state_each
            layers = model.num_linear_layers
        port = everything if shared_port else max(everything / prefill_gpus, each)
        pieces.append(port / layers / link.bandwidth)
    return Handoff(
        prefill=prefill, bulk=bulk, streamed=overlap_stream(computes, pieces, link.latency)
    )
