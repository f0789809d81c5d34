"""One decoded token as a timeline, and what one small all-reduce's latency is made of.

Decode under tensor parallelism is a chain: a slice of compute, then an
all-reduce every rank waits for, twice per layer. :func:`token_timeline`
lays a token's :func:`~lesson_lib.step_time.decode_step` out as that chain,
and :func:`allreduce_anatomy` splits the fixed latency of one small
all-reduce into the parts the lesson's sourced assumptions name.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib._validate import require_instance, require_int, require_number
from lesson_lib.collectives import allreduce_latency, allreduce_steps, allreduce_wire_bytes
from lesson_lib.specimen import CUDA_GRAPH_LAUNCH_SAVING, FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.step_time import decode_step
from lesson_lib.units import format_seconds

#: The kinds of segment of a token's timeline, in the order they repeat.
SEGMENT_KINDS: tuple[str, ...] = ("compute", "latency", "bandwidth")


@dataclass(frozen=True)
class Segment:
    """One stretch of a decoded token on every rank.

    Attributes
    ----------
    kind : str
        ``"compute"``, ``"latency"`` (waiting on the all-reduce's fixed cost)
        or ``"bandwidth"`` (its bytes on the wire).
    start_s : float
        Seconds from the token's start.
    duration_s : float
        Seconds.
    allreduce : int
        Which all-reduce of the token the segment precedes or belongs to (0-based).
    """

    kind: str
    start_s: float
    duration_s: float
    allreduce: int


def token_timeline(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    *,
    allreduces: int | None = None,
) -> list[Segment]:
    """The chain of one decoded token: compute slice, all-reduce, repeated.

    The token's compute is spread evenly over the slices between its
    all-reduces (the lesson's heuristic has no per-layer detail), and nothing
    overlaps: each all-reduce blocks the compute after it.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire.
    n : int
        Tensor-parallel degree, at least 2 (one GPU has no all-reduce).
    allreduces : int, optional
        Lay out only the first this many all-reduces (default: all of the
        token's ``model.allreduces_per_token``).

    Returns
    -------
    list of Segment
        In time order; the durations over the whole token add up to
        ``decode_step(model, accel, fabric, n).total_s``.

    Raises
    ------
    ValueError
        If ``n`` is below 2 or ``allreduces`` is out of range.
    """
    require_instance("model", model, ModelSpec)
    n = require_int("n", n, minimum=2)
    total = model.allreduces_per_token
    count = total if allreduces is None else require_int("allreduces", allreduces, maximum=total)
    step = decode_step(model, accel, fabric, n)
    durations = {
        "compute": step.compute_s / total,
        "latency": step.latency_s / total,
        "bandwidth": step.bandwidth_s / total,
    }
    segments = []
    clock = 0.0
    for index in range(count):
        for kind in SEGMENT_KINDS:
            segments.append(Segment(kind, clock, durations[kind], index))
            clock += durations[kind]
    return segments


@dataclass(frozen=True)
class LatencyPart:
    """One part of a small all-reduce's time.

    Attributes
    ----------
    label : str
        What the part is.
    seconds : float
        How long it takes.
    source : str
        Where the number comes from (an assumption says so).
    """

    label: str
    seconds: float
    source: str


def allreduce_anatomy(
    payload_bytes: float,
    n: int = 2,
    fabric: Fabric = FAST_RING,
    launch_s: float = CUDA_GRAPH_LAUNCH_SAVING,
) -> list[LatencyPart]:
    """Split one small ring all-reduce into launch, fixed cost, hops and bytes.

    Parameters
    ----------
    payload_bytes : float
        The message, bytes (one token's hidden vector in decode).
    n : int, default 2
        Ranks.
    fabric : Fabric, default FAST_RING
        A fabric whose latency grows per hop; the default is fitted so that a
        2-GPU all-reduce costs the lesson's fast 10 us.
    launch_s : float, default CUDA_GRAPH_LAUNCH_SAVING
        The kernel-launch overhead inside the fixed cost (an assumption of the
        order NCCL issue 1984 reports; it must not exceed the fixed cost).

    Returns
    -------
    list of LatencyPart
        Launch, the rest of the fixed cost (synchronisation and protocol),
        the ring's hops and the bytes; their seconds add up to
        ``allreduce_time(payload_bytes, n, fabric)``.

    Raises
    ------
    ValueError
        If ``launch_s`` exceeds the fabric's fixed latency or an input is out of range.
    """
    require_instance("fabric", fabric, Fabric)
    n = require_int("n", n, minimum=2)
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    launch_s = require_number("launch_s", launch_s, maximum=fabric.latency, unit="s")
    steps = allreduce_steps(n)
    hops = allreduce_latency(n, fabric) - fabric.latency
    return [
        LatencyPart(
            "kernel launch (what CUDA graphs remove)",
            launch_s,
            "assumption, of the order NCCL issue 1984 reports",
        ),
        LatencyPart(
            "synchronisation and protocol (the rest of the fixed cost)",
            fabric.latency - launch_s,
            "the fixed cost fitted to nccl-tests issue 123, less the launch",
        ),
        LatencyPart(
            f"{steps} hops around the ring",
            hops,
            "per-hop cost fitted to nccl-tests issue 123 (2 and 4 GPUs)",
        ),
        LatencyPart(
            "the bytes on the wire",
            allreduce_wire_bytes(payload_bytes, n) / fabric.bandwidth,
            "wire bytes / the fabric's bandwidth",
        ),
    ]


def timeline_numbers() -> dict[str, str]:
    """The timeline figure's numbers, formatted, keyed by the name the latency chapter glues.

    Returns
    -------
    dict of str to str
        Compute slice and wait per all-reduce on 2 fast and 4 slow GPUs, and
        the four parts of one 2-GPU all-reduce on the fast fabric.
    """

    def us(seconds: float, decimals: int = 1) -> str:
        return format_seconds(seconds, "us", decimals=decimals)

    two = token_timeline(MODEL, GPU, FAST, 2, allreduces=1)
    four = token_timeline(MODEL, GPU, SLOW, 4, allreduces=1)
    parts = allreduce_anatomy(MODEL.hidden_vector_bytes)
    return {
        "slice_2_fast": us(two[0].duration_s),
        "wait_2_fast": us(two[1].duration_s + two[2].duration_s),
        "slice_4_slow": us(four[0].duration_s),
        "wait_4_slow": us(four[1].duration_s + four[2].duration_s),
        "anatomy_launch": us(parts[0].seconds, 2),
        "anatomy_fixed": us(parts[1].seconds, 2),
        "anatomy_hops": us(parts[2].seconds, 2),
        "anatomy_bytes": us(parts[3].seconds, 2),
        "anatomy_total": us(sum(p.seconds for p in parts), 2),
    }
