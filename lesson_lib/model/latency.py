"""Decode latency: the lesson's decode lines, the speed-up with N and one token's timeline.

The latency questions asked of :func:`~lesson_lib.model.step_time.decode_step`: the speed-up with
``n``, the slowest fabric worth more GPUs, the buyer's boxes, a token's timeline. Seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.collectives import allreduce_latency, allreduce_steps, allreduce_wire_bytes
from lesson_lib.model.memory import max_sequences
from lesson_lib.model.specimen import CUDA_GRAPH_LAUNCH_SAVING, FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec, _require_hardware
from lesson_lib.model.step_time import StepBreakdown, decode_step, speedup
from lesson_lib.model.units import format_seconds


@dataclass(frozen=True)
class DecodeLine:
    """One configuration of the lesson's decode comparison."""

    #: For example ``"4 GPUs, fast fabric"``.
    label: str
    n: int
    fabric: Fabric
    #: Time of one decoded token.
    step: StepBreakdown


def decode_lines(*, include_bandwidth: bool = False) -> list[DecodeLine]:
    """The lesson's three decode configurations: 2 fast, 4 fast, 4 slow.

    Parameters
    ----------
    include_bandwidth : bool, default False
        False: the lesson's arithmetic (compute + latency); True adds the small wire-bytes term.

    Returns
    -------
    list of DecodeLine
    """
    configs = [("2 GPUs, fast fabric", 2, FAST), ("4 GPUs, fast fabric", 4, FAST)]
    configs.append(("4 GPUs, slow fabric", 4, SLOW))
    options = {"include_bandwidth": include_bandwidth}
    return [
        DecodeLine(label, n, fabric, decode_step(MODEL, GPU, fabric, n, **options))
        for label, n, fabric in configs
    ]


def speedup_curve(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    ns: Iterable[int],
    *,
    include_bandwidth: bool = False,
    algorithm: str = "ring",
) -> np.ndarray:
    """Decode speed-up of ``n`` GPUs over one GPU, for each ``n`` in ``ns``.

    Parameters
    ----------
    model, accel, fabric : ModelSpec, Accelerator, Fabric
    ns : iterable of int
        Tensor-parallel degrees, each from 1 to 4096 (``MAX_RANKS``).
    include_bandwidth, algorithm : bool, str, default False, "ring"
        As for :func:`~lesson_lib.model.step_time.decode_step`; False is the lesson's arithmetic.

    Returns
    -------
    numpy.ndarray
        ``decode_step(n=1).total_s / decode_step(n).total_s`` per ``n``: 1 at
        ``n = 1``, 1.73 at 2 for the specimen on the fast fabric.
    """
    ns = [require_int("n", n, maximum=MAX_RANKS) for n in ns]
    one = decode_step(model, accel, fabric, 1)  # one GPU sends no bytes, whatever the flag
    options = {"include_bandwidth": include_bandwidth, "algorithm": algorithm}
    return np.array([speedup(one, decode_step(model, accel, fabric, n, **options)) for n in ns])


def speedup_limit(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, *, include_bandwidth: bool = False
) -> float:
    """The speed-up over one GPU that no number of GPUs can exceed.

    As ``n`` grows the compute shrinks as ``1/n`` but the latencies do not, so the speed-up tends to
    ``compute_1 / (allreduces_per_token * latency)`` (its bandwidth term's wire bytes tending to
    twice the payload). A per-hop latency makes the limit 0: the curve rises, peaks and falls.

    Parameters
    ----------
    model, accel, fabric : ModelSpec, Accelerator, Fabric
    include_bandwidth : bool, default False
        Add the limit of the bandwidth term.

    Returns
    -------
    float
        The limit; ``math.inf`` for a fabric that costs nothing.
    """
    _require_hardware(model, accel, fabric=fabric)
    if fabric.hop_latency > 0:
        return 0.0
    compute_1 = decode_step(model, accel, fabric, 1).compute_s
    per_collective = fabric.latency
    if include_bandwidth:
        per_collective += 2 * model.hidden_vector_bytes / fabric.bandwidth
    if per_collective == 0:
        return math.inf
    return compute_1 / (model.allreduces_per_token * per_collective)


def break_even_latency(model: ModelSpec, accel: Accelerator, n: int, target_s: float) -> float:
    """Largest per-all-reduce latency at which ``n`` GPUs still decode a token in ``target_s``.

    The lesson's compute + ``allreduces_per_token`` x latency (no bandwidth term), solved for it.

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator
    n : int
        Tensor-parallel degree, from 2 (one GPU has no all-reduce) to 4096 (``MAX_RANKS``).
    target_s : float
        Time per token to match, seconds (> 0), e.g. another configuration's
        ``decode_step(...).total_s``. It must exceed the compute time of ``n``
        GPUs, or no fabric, even one without latency, leaves time for the all-reduces.

    Returns
    -------
    float
        Seconds per all-reduce; any faster fabric beats ``target_s`` (41.5 us
        for the specimen's 4 GPUs to match its 2 on the fast fabric).
    """
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    target_s = require_number("target_s", target_s, strict=True, unit="s")
    compute = decode_step(model, accel, FAST, n).compute_s  # the same on any fabric
    if compute >= target_s:
        raise ValueError(
            f"target_s must exceed the compute time of {n} GPUs "
            f"({format_seconds(compute, 'ms')}), got {format_seconds(target_s, 'ms')}"
        )
    return (target_s - compute) / model.allreduces_per_token


def peak_n(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    max_n: int = 64,
    *,
    algorithm: str = "ring",
) -> int:
    """The tensor-parallel degree from 1 to ``max_n`` that decodes fastest.

    Parameters
    ----------
    model, accel, fabric : ModelSpec, Accelerator, Fabric
        With ``hop_latency > 0`` the answer is finite.
    max_n : int, default 64
        Largest degree tried, from 1 to 4096.
    algorithm : str, default "ring"
        The all-reduce algorithm; only the ring's latency grows with ``n``.

    Returns
    -------
    int
        The fastest degree (the smallest one, on a tie).
    """
    max_n = require_int("max_n", max_n, maximum=MAX_RANKS)
    curve = speedup_curve(model, accel, fabric, range(1, max_n + 1), algorithm=algorithm)
    return int(np.argmax(curve)) + 1


#: The kinds of segment of a token's timeline, in the order they repeat.
SEGMENT_KINDS: tuple[str, ...] = ("compute", "latency", "bandwidth")


@dataclass(frozen=True)
class Segment:
    """One stretch of a decoded token on every rank."""

    #: ``"compute"``, ``"latency"`` (all-reduce fixed cost) or ``"bandwidth"`` (its wire bytes).
    kind: str
    #: Seconds from the token's start.
    start_s: float
    #: Seconds.
    duration_s: float
    #: Which all-reduce of the token the segment precedes or belongs to (0-based).
    allreduce: int


def token_timeline(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    *,
    allreduces: int | None = None,
    include_bandwidth: bool = True,
) -> list[Segment]:
    """The chain of one decoded token: compute slice, all-reduce, repeated.

    The compute is spread evenly between the all-reduces (the lesson's heuristic
    has no per-layer detail); each all-reduce blocks the compute after it.

    Parameters
    ----------
    model, accel, fabric : ModelSpec, Accelerator, Fabric
    n : int
        Tensor-parallel degree, at least 2 (one GPU has no all-reduce).
    allreduces : int, optional
        Lay out only the first this many all-reduces (default all ``model.allreduces_per_token``).
    include_bandwidth : bool, default True
        Whether each all-reduce's bytes take time (a zero-length segment if not).

    Returns
    -------
    list of Segment
        In time order; a whole token's add up to the ``total_s`` of
        ``decode_step(model, accel, fabric, n, include_bandwidth=include_bandwidth)``.
    """
    require_instance("model", model, ModelSpec)
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    total = model.allreduces_per_token
    count = total if allreduces is None else require_int("allreduces", allreduces, maximum=total)
    step = decode_step(model, accel, fabric, n, include_bandwidth=include_bandwidth)
    durations = {kind: getattr(step, f"{kind}_s") / total for kind in SEGMENT_KINDS}
    segments = []
    clock = 0.0
    for index in range(count):
        for kind in SEGMENT_KINDS:
            segments.append(Segment(kind, clock, durations[kind], index))
            clock += durations[kind]
    return segments


@dataclass(frozen=True)
class LatencyPart:
    """One part of a small all-reduce's time."""

    label: str
    seconds: float
    #: Where the number comes from (an assumption says so).
    source: str


def allreduce_anatomy(
    payload_bytes: float,
    n: int = 2,
    fabric: Fabric = FAST_RING,
    launch_s: float = CUDA_GRAPH_LAUNCH_SAVING,
) -> list[LatencyPart]:
    """Split one small ring all-reduce into launch, fixed cost, hops and bytes, as an illustration.

    The model's split, not a measurement (no source times the parts): hops and fixed cost from a
    line through two published times (2 and 4 GPUs, nccl-tests issue 123), the launch share assumed.

    Parameters
    ----------
    payload_bytes : float
        The message, bytes (one token's hidden vector in decode).
    n : int, default 2
        Ranks, from 2 to 4096.
    fabric : Fabric, default FAST_RING
        A fabric with per-hop latency; by default a 2-GPU all-reduce costs the lesson's fast 10 us.
    launch_s : float, default CUDA_GRAPH_LAUNCH_SAVING
        Launch and host overhead inside the fixed cost (assumed), at most ``fabric.latency``.

    Returns
    -------
    list of LatencyPart
        Launch, the rest of the fixed cost (synchronisation and protocol), the ring's hops and the
        bytes; their seconds add up to ``allreduce_time(payload_bytes, n, fabric)``.
    """
    require_instance("fabric", fabric, Fabric)
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    launch_s = require_number("launch_s", launch_s, maximum=fabric.latency, unit="s")
    steps = allreduce_steps(n)
    hops = allreduce_latency(n, fabric) - fabric.latency
    return [
        LatencyPart(
            "kernel launch (assumed)", launch_s, "the lesson's assumption; not measured on its own"
        ),
        LatencyPart(
            "rest of the fixed cost (a line fitted through published 2- and 4-GPU times, "
            "less the assumed launch)",
            fabric.latency - launch_s,
            "the fixed term of a line through two times nccl-tests issue 123 reports, "
            "less the assumed launch",
        ),
        LatencyPart(
            f"{steps} hops around the ring (the same fitted line)",
            hops,
            "per-hop term of the same two-point line (2 and 4 GPUs)",
        ),
        LatencyPart(
            "bytes on the wire",
            allreduce_wire_bytes(payload_bytes, n) / fabric.bandwidth,
            "wire bytes / the fabric's bandwidth",
        ),
    ]


#: The buyer's three boxes of cards sold as 80 GB, each (what, fabric, GPUs).
BUYER_BOXES: tuple[tuple[str, Fabric, int], ...] = (
    ("1 GPU", FAST, 1),
    ("2 GPUs, fast fabric", FAST, 2),
    ("4 GPUs, slow fabric", SLOW, 4),
)


@dataclass(frozen=True)
class BoxAnswer:
    """One box's answer to the buyer's two questions."""

    #: The box, e.g. ``"4 GPUs, slow fabric"``.
    label: str
    #: Tensor-parallel degree (all its GPUs).
    n: int
    fabric: Fabric
    #: Tokens each sequence of the full box holds.
    context: int
    #: One stream's time per token in the lesson's arithmetic (weights and all-reduce latency, no
    #: context): 16.12, 9.34 and 10.43 ms.
    stream_s: float
    #: Sequences of ``context`` tokens that fit beside the weights, an upper bound (activations,
    #: CUDA graphs and communication buffers also take memory).
    sequences: int
    #: The box's throughput decoding all of them together, tokens/second.
    tokens_per_s: float
    #: That full batch's step (one sequence's if none fits).
    step: StepBreakdown

    @property
    def step_s(self) -> float:
        """Seconds of the full batch's step."""
        return self.step.total_s

    @property
    def wire_bytes_s(self) -> float:
        """Seconds of the step the all-reduces' bytes take on the fabric."""
        return self.step.bandwidth_s

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """The box's throughput shared over its GPUs, tokens/second per GPU."""
        return self.tokens_per_s / self.n


def buyer_answers(
    model: ModelSpec = MODEL, accel: Accelerator = GPU, context: int | None = None
) -> list[BoxAnswer]:
    """Per-stream latency and full-box throughput of each of the buyer's boxes.

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator, default MODEL, GPU
        The model and one card, the same in every box.
    context : int, optional
        Tokens per sequence, 1 to ``model.max_context`` (default: the full context).

    Returns
    -------
    list of BoxAnswer
        In the order of :data:`BUYER_BOXES`: the fixed latency decides the first question; the
        second depends on the memory more cards add (more sequences' KV) and, as shorter sequences
        let the batch grow, on the bytes every all-reduce then carries.
    """
    _require_hardware(model, accel)
    context = model.max_context if context is None else context
    context = require_int("context", context, 1, model.max_context)
    answers = []
    for label, fabric, n in BUYER_BOXES:
        fit = max_sequences(model, accel, n, context)
        batched = decode_step(model, accel, fabric, n, batch=max(fit, 1), context=context)
        answers.append(
            BoxAnswer(
                label=label,
                n=n,
                fabric=fabric,
                context=context,
                stream_s=decode_step(model, accel, fabric, n, include_bandwidth=False).total_s,
                sequences=fit,
                tokens_per_s=batched.tokens_per_s if fit else 0.0,
                step=batched,
            )
        )
    return answers
