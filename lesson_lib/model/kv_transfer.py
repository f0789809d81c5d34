"""The KV cache on the wire: disaggregated prefill and decode, and context parallelism.

A serving system that runs prefill and decode on different GPUs must move each
request's cache from the first to the second: the KV cache of its attention
layers at the prompt's length, and the fixed recurrent state of its
linear-attention layers. Everything here prices that move in the lesson's
alpha-beta terms (a fixed ``latency`` plus bytes over ``bandwidth``):

- one sequence over one port (:func:`kv_transfer_bytes`,
  :func:`kv_transfer_time`, :func:`requests_per_second`);
- a prefill instance of ``P`` tensor-parallel GPUs handing its shards to a
  decode instance of ``D`` (:func:`sharded_transfer`): with one NIC per GPU
  the shards cross in parallel, through one shared port they queue;
- the prefill it follows (:func:`prefill_time`, the lesson's
  :func:`~lesson_lib.model.step_time.prefill_step` plus the causal attention
  over the prompt, which the lesson's prefill leaves out), and the transfer
  streamed layer by layer behind it (:func:`overlap_stream`,
  :func:`handoff`);
- context parallelism: one step of ring attention for a long prefill
  (:func:`ring_attention_step`, :func:`ring_attention_min_chunk`,
  :func:`context_parallel_prefill`) and decode
  context parallelism's memory per GPU against KV-head replication
  (:func:`context_parallel_sequence_bytes`,
  :func:`context_parallel_max_sequences`).

A GPU's shard follows :mod:`lesson_lib.model.memory`: KV heads split while
there are enough of them and are copied past that; the recurrent state splits
by value heads. Every quantity is SI: bytes, seconds, bytes/second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.layout import layer_kinds
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepBreakdown, attention_pair_flops, prefill_step

#: Most layers :func:`overlap_stream` accepts (a bound on input, not on models).
MAX_LAYERS: int = 4096


def _context(model: ModelSpec, context: int, name: str = "context") -> int:
    return require_int(name, context, minimum=1, maximum=model.max_context)


def kv_transfer_bytes(model: ModelSpec, context: int) -> float:
    """Bytes of one sequence's cache: KV of the attention layers at ``context`` plus the state.

    Parameters
    ----------
    model : ModelSpec
        The model.
    context : int
        Tokens in the sequence, from 1 to ``model.max_context``.

    Returns
    -------
    float
        ``model.kv_bytes(context) + model.state_bytes``: for the specimen
        16 GiB + 146.8 MiB at full context, 4,096 x 64 KiB + 146.8 MiB at the
        lesson's prompt.

    Raises
    ------
    TypeError
        If ``model`` is not a ModelSpec or ``context`` not an integer.
    ValueError
        If ``context`` is outside 1 to ``model.max_context``.

    Examples
    --------
    >>> from lesson_lib.model.specimen import MODEL
    >>> kv_transfer_bytes(MODEL, 4096)
    422379520.0
    """
    require_instance("model", model, ModelSpec)
    tokens = _context(model, context)
    return model.kv_bytes(tokens) + model.state_bytes


def kv_transfer_time(model: ModelSpec, context: int, fabric: Fabric) -> float:
    """Seconds to send one sequence's cache over one port: latency + bytes / bandwidth.

    Parameters
    ----------
    model : ModelSpec
        The model.
    context : int
        Tokens in the sequence, from 1 to ``model.max_context``.
    fabric : Fabric
        The port: its ``latency`` is paid once, its ``bandwidth`` (bytes/s
        in one direction) carries :func:`kv_transfer_bytes`.

    Returns
    -------
    float
        Seconds; about 0.347 s for the specimen's full-length sequence over one
        400 Gb/s NIC.
    """
    require_instance("fabric", fabric, Fabric)
    return fabric.latency + kv_transfer_bytes(model, context) / fabric.bandwidth


def requests_per_second(model: ModelSpec, context: int, fabric: Fabric) -> float:
    """Requests of ``context`` tokens one port can hand over per second, back to back.

    Parameters
    ----------
    model : ModelSpec
        The model.
    context : int
        Tokens of each request's cache, from 1 to ``model.max_context``.
    fabric : Fabric
        The port.

    Returns
    -------
    float
        ``1 / kv_transfer_time(model, context, fabric)``.
    """
    return 1.0 / kv_transfer_time(model, context, fabric)


def causal_attention_flops(model: ModelSpec, tokens: int) -> float:
    """FLOPs of causal attention over a prompt of ``tokens`` tokens, all attention layers.

    Query ``i`` attends to keys ``0..i``, so a prompt of ``L`` tokens has
    ``L (L + 1) / 2`` query-key pairs per layer; each pair costs
    :func:`~lesson_lib.model.step_time.attention_pair_flops`, as in
    :func:`~lesson_lib.model.step_time.decode_step`.

    Parameters
    ----------
    model : ModelSpec
        The model.
    tokens : int
        Prompt length, from 1 to ``model.max_context``.

    Returns
    -------
    float
        FLOPs (0 for a model without attention layers).
    """
    require_instance("model", model, ModelSpec)
    length = _context(model, tokens, "tokens")
    pairs = length * (length + 1) / 2
    return model.num_attention_layers * attention_pair_flops(model) * pairs


@dataclass(frozen=True)
class PrefillTime:
    """A prefill on ``n`` tensor-parallel GPUs, with its attention.

    Attributes
    ----------
    step : StepBreakdown
        The lesson's prefill (:func:`~lesson_lib.model.step_time.prefill_step`):
        the weight GEMMs' roofline and the all-reduces.
    attention_s : float
        The causal attention over the prompt at the card's peak, split over
        the ``n`` GPUs (:func:`causal_attention_flops`), seconds.
    """

    step: StepBreakdown
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
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire of the prefill's tensor-parallel all-reduces.
    n : int
        Tensor-parallel degree of the prefill instance, from 1 to 4096
        (``MAX_RANKS``).
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.

    Returns
    -------
    PrefillTime
        The lesson's step and the attention phase, seconds.
    """
    step = prefill_step(model, accel, fabric, n, prompt_tokens)
    attention = causal_attention_flops(model, prompt_tokens) / (n * accel.peak_flops)
    return PrefillTime(step=step, attention_s=attention)


@dataclass(frozen=True)
class ShardedTransfer:
    """One sequence's cache handed from ``P`` prefill GPUs to ``D`` decode GPUs.

    Attributes
    ----------
    total_bytes : float
        Bytes the decode GPUs receive in all, KV heads copied to several of
        them counted each time.
    sender_bytes : float
        Bytes each prefill GPU sends, ``total_bytes / P``.
    receiver_bytes : float
        Bytes the busiest decode GPU receives: its share of the KV cache and
        of the state.
    port_bytes : float
        Bytes through the busiest port: the larger of the two above with a
        port per GPU, ``total_bytes`` through one shared port.
    fabric : Fabric
        The port's latency and bandwidth.
    """

    total_bytes: float
    sender_bytes: float
    receiver_bytes: float
    port_bytes: float
    fabric: Fabric

    @property
    def time_s(self) -> float:
        """Seconds to hand the cache over, latency + port bytes / bandwidth."""
        return self.fabric.latency + self.port_bytes / self.fabric.bandwidth


def _dcp(model: ModelSpec, tp: int, dcp: int) -> int:
    # vLLM bounds the DCP size by the KV-head copies it removes: 1 to tp / kv_heads.
    return require_int("dcp", dcp, maximum=max(1, tp // model.num_kv_heads))


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

    Each side holds the cache sharded as tensor parallelism leaves it. The
    decode GPUs each receive their share; the prefill GPUs split the sending
    evenly (a KV head held by several of them is sent in parts). With a port
    per GPU (one NIC each, or each GPU's NVLink) every shard crosses at
    once and the busiest port sets the time; through one port shared by each
    side's node (``shared_port``) everything queues on it.

    Parameters
    ----------
    model : ModelSpec
        The model.
    context : int
        Tokens of the sequence, from 1 to ``model.max_context``.
    fabric : Fabric
        One port: latency and bandwidth per direction.
    prefill_gpus : int
        Tensor-parallel degree ``P`` of the prefill instance, from 1 to 4096
        (``MAX_RANKS``).
    decode_gpus : int
        Tensor-parallel degree ``D`` of the decode instance, from 1 to 4096.
    shared_port : bool, default False
        True when each side's GPUs share one port (``True`` or ``False``).
    dcp : int, default 1
        Decode context parallelism of the decode instance, from 1 to
        ``max(1, D // kv_heads)``: it shards the KV heads' copies along the
        tokens instead of storing them ``D / kv_heads`` times.

    Returns
    -------
    ShardedTransfer
        Bytes per GPU and port, and the time.

    Examples
    --------
    >>> from lesson_lib.model.specimen import INTER_NODE, MODEL
    >>> round(sharded_transfer(MODEL, MODEL.max_context, INTER_NODE, 4, 4).time_s * 1e3, 1)
    86.7
    """
    require_instance("model", model, ModelSpec)
    require_instance("fabric", fabric, Fabric)
    require_instance("shared_port", shared_port, bool)
    tokens = _context(model, context)
    senders = require_int("prefill_gpus", prefill_gpus, maximum=MAX_RANKS)
    receivers = require_int("decode_gpus", decode_gpus, maximum=MAX_RANKS)
    dcp = _dcp(model, receivers, dcp)
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
    """A transfer streamed behind a computation, one piece per layer.

    Attributes
    ----------
    compute_s : float
        The computation, all layers, seconds.
    transfer_s : float
        The pieces' bytes over the bandwidth, all layers, seconds (latency
        excluded).
    latency_s : float
        The port's latency, paid once: the pieces are posted back to back.
    finish_s : float
        When the last byte has arrived, counted from the start of the
        computation, seconds.
    keeps_up : bool
        True when the port is idle each time a layer finishes: each piece
        has crossed before the next one is ready, so only the last piece
        remains when the computation ends.
    last_piece_s : float
        The last layer's piece, seconds.
    """

    compute_s: float
    transfer_s: float
    latency_s: float
    finish_s: float
    keeps_up: bool
    last_piece_s: float

    @property
    def exposed_s(self) -> float:
        """Seconds the transfer adds after the computation, ``finish_s - compute_s``."""
        return self.finish_s - self.compute_s


def overlap_stream(
    compute_s: Sequence[float], transfer_s: Sequence[float], latency_s: float = 0.0
) -> StreamedTransfer:
    """Send each layer's piece as soon as the layer is done, in order, on one port.

    Layer ``i`` finishes at ``C_i``, the sum of the first ``i`` computations;
    its piece starts when both it and the port are ready and holds the port
    for ``transfer_s[i]`` (first in, first out). The port keeps up when
    ``transfer_s[i] <= compute_s[i + 1]`` for every layer but the last; the
    transfer can hide only if ``sum(transfer_s) <= sum(compute_s)`` as a
    whole, and is otherwise exposed by at least the difference.

    Parameters
    ----------
    compute_s : sequence of float
        Seconds of each layer's computation, in order (each >= 0; 1 to
        :data:`MAX_LAYERS` of them).
    transfer_s : sequence of float
        Seconds each layer's piece holds the port (each >= 0), as many.
    latency_s : float, default 0.0
        The port's fixed cost, seconds (>= 0), paid once at the end.

    Returns
    -------
    StreamedTransfer
        When the last byte arrives, and whether the port kept up.

    Examples
    --------
    >>> overlap_stream([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]).exposed_s
    4.0
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
    """A request's prefill and its cache's hand-off, shipped after or streamed by layer.

    Attributes
    ----------
    prefill : PrefillTime
        The prefill on the prefill instance.
    bulk : ShardedTransfer
        The whole cache sent once the prefill is done.
    streamed : StreamedTransfer
        The same bytes sent layer by layer behind the prefill.
    """

    prefill: PrefillTime
    bulk: ShardedTransfer
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
        """Port bandwidth at which the whole transfer takes as long as the prefill, bytes/s.

        Below it the transfer cannot hide, however it is streamed.
        """
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

    For streaming the prefill is cut into its layers: the GEMMs and
    all-reduces evenly (each layer has its mixer and FFN), the causal
    attention over the attention layers only. An attention layer's piece is
    its KV cache, a linear-attention layer's its state, each sized as in
    :func:`sharded_transfer`.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card (both instances alike).
    tp_fabric : Fabric
        The wire of the prefill instance's all-reduces.
    link : Fabric
        One port between the instances.
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    prefill_gpus : int
        Tensor-parallel degree of the prefill instance, from 1 to 4096.
    decode_gpus : int
        Tensor-parallel degree of the decode instance, from 1 to 4096.
    shared_port : bool, default False
        True when each side's GPUs share one port.
    dcp : int, default 1
        Decode context parallelism of the decode instance (see
        :func:`sharded_transfer`).

    Returns
    -------
    Handoff
        The prefill, the bulk transfer and the streamed one.
    """
    # Checked here first, so a bad argument is named as the caller wrote it.
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    require_instance("tp_fabric", tp_fabric, Fabric)
    require_instance("link", link, Fabric)
    prompt_tokens = _context(model, prompt_tokens, "prompt_tokens")
    bulk = sharded_transfer(
        model,
        prompt_tokens,
        link,
        prefill_gpus,
        decode_gpus,
        shared_port=shared_port,
        dcp=dcp,
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


@dataclass(frozen=True)
class RingAttentionStep:
    """One step of ring attention in a context-parallel prefill, one attention layer.

    Each of ``cp`` GPUs holds a chunk of the prompt; at every step it sends
    the KV block it holds to the next GPU while computing its queries'
    attention against the block it received.

    Attributes
    ----------
    chunk_tokens : int
        Tokens of each GPU's chunk, ``ceil(context / cp)``.
    block_bytes : float
        The KV block one GPU sends per step: its chunk's keys and values for
        one attention layer and its share of the KV heads, bytes.
    send_s : float
        Latency + block bytes / bandwidth, seconds.
    compute_s : float
        The attention of the chunk's queries against one received block,
        seconds: half of the chunk x chunk pairs, as a causal mask leaves
        them with the chunks balanced across the ring.
    """

    chunk_tokens: int
    block_bytes: float
    send_s: float
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
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    context: int,
    cp: int,
    *,
    tp: int = 1,
) -> RingAttentionStep:
    """One ring-attention step of a prefill of ``context`` tokens over ``cp`` GPUs.

    The model covers the attention layers; the linear-attention layers hand
    a fixed-size state from chunk to chunk instead, which it leaves out.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire between neighbours on the ring.
    context : int
        Prompt length, from 1 to ``model.max_context``.
    cp : int
        Context-parallel degree (GPUs on the ring), from 2 to 4096.
    tp : int, default 1
        Tensor-parallel degree inside each ring position, from 1 to 4096:
        each GPU holds and sends its share of the KV heads and computes its
        share of the query heads.

    Returns
    -------
    RingAttentionStep
        The block, its send and the attention it hides behind.
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    require_instance("fabric", fabric, Fabric)
    tokens = _context(model, context)
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

    The send grows with the chunk ``c`` (``alpha + c b / B``), the attention
    with its square (``k c^2``), so a chunk longer than the root of
    ``k c^2 = alpha + c b / B`` hides the ring: about ``b F / (B * 2 h d)``
    tokens without latency (``b`` the block's bytes per token, ``F`` the
    peak, ``h`` the query heads and ``d`` the head dimension per GPU).

    Parameters
    ----------
    model : ModelSpec
        The model (with attention layers).
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire between neighbours.
    tp : int, default 1
        Tensor-parallel degree inside each ring position, from 1 to 4096.

    Returns
    -------
    float
        Tokens (not rounded).
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    require_instance("fabric", fabric, Fabric)
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

    Each position runs the GEMMs and all-reduces of its chunk
    (:func:`~lesson_lib.model.step_time.prefill_step` on ``ceil(L / cp)``
    tokens, its ``tp`` GPUs on ``tp_fabric``) and a ``1 / (cp tp)`` share
    of the whole prompt's causal attention; every attention layer's ring of
    ``cp - 1`` steps adds whatever of its sends the attention does not hide
    (:func:`ring_attention_step`).

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    tp_fabric : Fabric
        The wire of each position's all-reduces.
    ring_fabric : Fabric
        The wire between ring neighbours.
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    cp : int
        Context-parallel degree, from 2 to 4096.
    tp : int, default 1
        Tensor-parallel degree of each position, from 1 to 4096.

    Returns
    -------
    float
        Seconds.
    """
    require_instance("model", model, ModelSpec)
    require_instance("tp_fabric", tp_fabric, Fabric)
    require_instance("ring_fabric", ring_fabric, Fabric)
    prompt_tokens = _context(model, prompt_tokens, "prompt_tokens")
    step = ring_attention_step(model, accel, ring_fabric, prompt_tokens, cp, tp=tp)
    chunk = prefill_step(model, accel, tp_fabric, tp, step.chunk_tokens)
    attention = causal_attention_flops(model, prompt_tokens) / (cp * tp * accel.peak_flops)
    ring = model.num_attention_layers * (cp - 1) * step.exposed_s
    return chunk.total_s + attention + ring


def context_parallel_sequence_bytes(model: ModelSpec, context: int, tp: int, dcp: int = 1) -> float:
    """Bytes one sequence takes on the busiest GPU of a decode instance with DCP.

    Tensor parallelism splits the KV heads until there is one per GPU and
    copies them past that; decode context parallelism shards each head's
    tokens over ``dcp`` of the GPUs that would hold copies. It does not touch
    the linear-attention state, which splits by value heads as before.

    Parameters
    ----------
    model : ModelSpec
        The model.
    context : int
        Tokens of the sequence, from 1 to ``model.max_context``.
    tp : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).
    dcp : int, default 1
        Decode context parallelism, from 1 to ``max(1, tp // kv_heads)`` (vLLM's
        bound: the KV-head copies it can remove).

    Returns
    -------
    float
        ``kv_bytes x kv_share(tp) / dcp + state_bytes x state_share(tp)``:
        at TP 8 on the specimen's full context 4 GiB of KV per GPU without
        DCP, 2 GiB with DCP 2.
    """
    require_instance("model", model, ModelSpec)
    tokens = _context(model, context)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    dcp = _dcp(model, tp, dcp)
    kv = model.kv_bytes(tokens) * kv_share(model, tp) / dcp
    return kv + model.state_bytes * state_share(model, tp)


def context_parallel_max_sequences(
    model: ModelSpec, accel: Accelerator, context: int, tp: int, dcp: int = 1
) -> int:
    """Sequences of ``context`` tokens that fit beside the weights at TP ``tp`` and DCP ``dcp``.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card (its whole visible memory is used, no runtime reserve).
    context : int
        Tokens per sequence, from 1 to ``model.max_context``.
    tp : int
        Tensor-parallel degree, from 1 to 4096.
    dcp : int, default 1
        Decode context parallelism, from 1 to ``max(1, tp // kv_heads)``.

    Returns
    -------
    int
        Whole sequences (0 if the weights alone do not fit).
    """
    require_instance("accel", accel, Accelerator)
    per_sequence = context_parallel_sequence_bytes(model, context, tp, dcp)
    free = accel.memory_bytes - model.weight_bytes / tp
    return max(0, int(free // per_sequence))
