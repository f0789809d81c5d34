"""The latency chapter: one decoded token's timeline, and how decode speed scales with N.

:func:`~lesson_lib.model.step_time.decode_step` prices one configuration; this
module asks the latency chapter's questions of it: how the speed-up over one
GPU grows with ``n`` (:func:`speedup_curve`), where it stops growing
(:func:`speedup_limit`), and how slow a fabric may be before more GPUs stop
paying (:func:`break_even_latency`). Times are seconds.

Decode under tensor parallelism is a chain: a slice of compute, then an
all-reduce every rank waits for, twice per layer. :func:`token_timeline`
lays a token's :func:`~lesson_lib.model.step_time.decode_step` out as that chain,
and :func:`allreduce_anatomy` splits the fixed latency of one small
all-reduce into illustrative parts: an assumed launch overhead, the rest of
the fixed cost and the hops of a two-point fit. It is a picture of the
model, not a measured breakdown of how NCCL spends the time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from lesson_lib.chapters import batching, overview, payloads
from lesson_lib.chapters.glue import glue_numbers
from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.collectives import allreduce_latency, allreduce_steps, allreduce_wire_bytes
from lesson_lib.model.memory import max_sequences
from lesson_lib.model.published import published_numbers
from lesson_lib.model.specimen import CUDA_GRAPH_LAUNCH_SAVING, FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import (
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)


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
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire between the cards.
    ns : iterable of int
        Tensor-parallel degrees, each from 1 to 4096 (``MAX_RANKS``).
    include_bandwidth : bool, default False
        False is the lesson's arithmetic (compute + latency).
    algorithm : str, default "ring"
        The all-reduce algorithm (see :mod:`lesson_lib.model.collectives`).

    Returns
    -------
    numpy.ndarray
        ``decode_step(n=1).total_s / decode_step(n).total_s`` per ``n``; 1 at ``n = 1``.

    Examples
    --------
    >>> from lesson_lib.model.specimen import MODEL, GPU, FAST
    >>> speedup_curve(MODEL, GPU, FAST, [1, 2]).round(2).tolist()
    [1.0, 1.73]
    """
    ns = [require_int("n", n, maximum=MAX_RANKS) for n in ns]
    one = decode_step(model, accel, fabric, 1)  # one GPU sends no bytes, whatever the flag
    return np.array(
        [
            speedup(
                one,
                decode_step(
                    model,
                    accel,
                    fabric,
                    n,
                    include_bandwidth=include_bandwidth,
                    algorithm=algorithm,
                ),
            )
            for n in ns
        ]
    )


def speedup_limit(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, *, include_bandwidth: bool = False
) -> float:
    """The speed-up over one GPU that no number of GPUs can exceed.

    As ``n`` grows the compute term shrinks as ``1/n`` but the
    ``allreduces_per_token`` latencies do not, so the speed-up tends to
    ``compute_1 / (allreduces_per_token * latency)`` (plus, if included, the
    bandwidth term, whose wire bytes tend to twice the payload). If the
    fabric's latency grows per hop the step time grows without bound and the
    limit is 0: the curve rises, peaks and falls.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire.
    include_bandwidth : bool, default False
        Add the limit of the bandwidth term.

    Returns
    -------
    float
        The limit; ``math.inf`` for a fabric that costs nothing.
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    require_instance("fabric", fabric, Fabric)
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

    The lesson's model, compute + ``allreduces_per_token`` x latency with a
    fixed latency and no bandwidth term, solved for the latency.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    n : int
        Tensor-parallel degree, from 2 (one GPU has no all-reduce) to 4096
        (``MAX_RANKS``).
    target_s : float
        Time per token to match, seconds (> 0), e.g. another configuration's
        ``decode_step(...).total_s``.

    Returns
    -------
    float
        Seconds per all-reduce; any faster fabric beats ``target_s``.

    Raises
    ------
    ValueError
        If ``target_s`` does not exceed the compute time of ``n`` GPUs: no
        fabric, even one without latency, would leave time for the all-reduces.

    Examples
    --------
    >>> from lesson_lib.model.specimen import MODEL, GPU, FAST
    >>> two_fast = decode_step(MODEL, GPU, FAST, 2, include_bandwidth=False).total_s
    >>> round(break_even_latency(MODEL, GPU, 4, two_fast) * 1e6, 1)
    41.5
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
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire; with ``hop_latency > 0`` the answer is finite.
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


def scaling_numbers() -> dict[str, str]:
    """The latency chapter's numbers beyond :func:`~lesson_lib.chapters.overview.numbers`.

    Returns
    -------
    dict of str to str
        ``limit_fast`` / ``limit_slow`` (speed-up ceilings over one GPU),
        ``break_even_4_vs_2`` (latency at which 4 GPUs tie 2 on the fast
        fabric), ``break_even_2_vs_1`` (latency at which 2 GPUs tie 1),
        ``speedup_fast_16`` / ``speedup_slow_16`` (16 GPUs over 1),
        ``ring_hop`` and ``ring_base`` (the per-hop fit's two terms),
        ``ring_latency_8`` (its prediction at 8 GPUs), ``ring_peak_n`` and
        ``ring_peak_speedup`` (where a per-hop ring stops paying);
        ``hbm_bandwidth``, ``weights_share_2`` / ``weights_share_4`` (the
        heuristic's inputs); ``bandwidth_2_fast`` / ``bandwidth_4_slow`` (the
        left-out wire-bytes term); ``speedup_1_to_4_fast`` /
        ``speedup_1_to_4_slow`` (4 GPUs over 1) and ``slow_4_vs_fast_2``;
        ``ceiling_tokens_per_s_slow`` (the most tokens per second one sequence
        can reach on the slow fabric with any number of GPUs) and
        ``gpus_to_90_percent_slow`` (the fewest GPUs that reach 90 % of it).
    """
    from lesson_lib.chapters.overview import decode_lines

    # The lesson's three lines (compute + latency): 2 fast, 4 fast, 4 slow GPUs.
    fast_2, fast_4, slow_4 = (line.step for line in decode_lines())
    one = decode_step(MODEL, GPU, FAST, 1)  # one GPU: no all-reduce, no bandwidth term
    peak = peak_n(MODEL, GPU, FAST_RING)
    limit_slow = speedup_limit(MODEL, GPU, SLOW)
    # S(N) = c / (c/N + L) reaches a share f of its ceiling c/L once
    # N >= (c/L) / (1/f - 1): the fewest GPUs for 90 % of the slow ceiling.
    near_limit = math.ceil(limit_slow / (1 / 0.9 - 1))
    return {
        "hbm_bandwidth": format_rate(GPU.hbm_bandwidth, "TB"),
        "weights_share_2": format_bytes(MODEL.weight_bytes / 2, "GB"),
        "weights_share_4": format_bytes(MODEL.weight_bytes / 4, "GB"),
        "bandwidth_2_fast": format_seconds(
            decode_step(MODEL, GPU, FAST, 2).bandwidth_s, "ms", decimals=3
        ),
        "bandwidth_4_slow": format_seconds(
            decode_step(MODEL, GPU, SLOW, 4).bandwidth_s, "ms", decimals=3
        ),
        "speedup_1_to_4_fast": format_ratio(speedup(one, fast_4)),
        "speedup_1_to_4_slow": format_ratio(speedup(one, slow_4)),
        "slow_4_vs_fast_2": format_ratio(slow_4.total_s / fast_2.total_s),
        "limit_fast": format_ratio(speedup_limit(MODEL, GPU, FAST), decimals=1),
        "limit_slow": format_ratio(limit_slow, decimals=1),
        "ceiling_tokens_per_s_slow": format_count(limit_slow / one.total_s),
        "gpus_to_90_percent_slow": format_count(near_limit),
        "break_even_4_vs_2": format_seconds(
            break_even_latency(MODEL, GPU, 4, fast_2.total_s), "us", decimals=1
        ),
        "break_even_2_vs_1": format_seconds(
            break_even_latency(MODEL, GPU, 2, one.total_s), "us", decimals=1
        ),
        "speedup_fast_16": format_ratio(speedup_curve(MODEL, GPU, FAST, [16])[0], decimals=1),
        "speedup_slow_16": format_ratio(speedup_curve(MODEL, GPU, SLOW, [16])[0], decimals=1),
        "ring_hop": format_seconds(FAST_RING.hop_latency, "us", decimals=3),
        "ring_base": format_seconds(FAST_RING.latency, "us"),
        "ring_latency_8": format_seconds(allreduce_latency(8, FAST_RING), "us", decimals=1),
        "ring_peak_n": format_count(peak),
        "ring_peak_speedup": format_ratio(
            speedup_curve(MODEL, GPU, FAST_RING, [peak])[0], decimals=1
        ),
    }


def decode_lines_table(caption: str | None = None) -> str:
    """HTML table of the lesson's three decode lines, without and with the bandwidth term.

    Parameters
    ----------
    caption : str, optional
        Table caption.

    Returns
    -------
    str
        One row per line of :func:`lesson_lib.chapters.overview.decode_lines`:
        compute, latency, the lesson's total (compute + latency) and its
        tokens/s, then the bandwidth term and the total with it, all in ms.
    """
    from lesson_lib.chapters.overview import decode_lines
    from lesson_lib.chapters.tables import html_table

    def ms(seconds: float, decimals: int = 2) -> str:
        return format_seconds(seconds, "ms", decimals=decimals)

    rows = []
    for line in decode_lines():  # the lesson's arithmetic, compute + latency
        full = decode_step(MODEL, GPU, line.fabric, line.n)  # the same GPUs, with the bytes
        rows.append(
            (
                line.label,
                ms(line.step.compute_s),
                ms(line.step.latency_s),
                ms(line.step.total_s),
                format_count(line.step.tokens_per_s),
                ms(full.bandwidth_s, 3),
                ms(full.total_s),
            )
        )
    header = (
        "configuration",
        "compute (heuristic)",
        "latency (assumed)",
        "lesson's total",
        "tokens/s",
        "+ bandwidth term",
        "total with it",
    )
    return html_table(header, rows, caption)


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
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
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
    """Split one small ring all-reduce into launch, fixed cost, hops and bytes, as an illustration.

    The split is the model's, not a measurement: the hops and the fixed cost
    come from a per-hop line drawn through two published times (2 and 4
    GPUs, nccl-tests issue 123), and the launch share is an assumption. No
    source times these parts of one NCCL all-reduce separately.

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
        The kernel-launch and host overhead assumed inside the fixed cost (the
        lesson's assumption; it must not exceed the fixed cost).

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
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    launch_s = require_number("launch_s", launch_s, maximum=fabric.latency, unit="s")
    steps = allreduce_steps(n)
    hops = allreduce_latency(n, fabric) - fabric.latency
    return [
        LatencyPart(
            "kernel launch (assumed)",
            launch_s,
            "the lesson's assumption; not measured on its own",
        ),
        LatencyPart(
            "rest of the fixed cost (fit, less the assumed launch)",
            fabric.latency - launch_s,
            "the fixed term of a line through two times nccl-tests issue 123 reports, "
            "less the assumed launch",
        ),
        LatencyPart(
            f"{steps} hops around the ring (fit)",
            hops,
            "per-hop term of the same two-point line (2 and 4 GPUs)",
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


#: The buyer's three boxes of cards sold as 80 GB, each (what, fabric, GPUs).
BUYER_BOXES: tuple[tuple[str, Fabric, int], ...] = (
    ("one GPU", FAST, 1),
    ("two GPUs on the fast fabric", FAST, 2),
    ("four GPUs on the slow fabric", SLOW, 4),
)


@dataclass(frozen=True)
class BoxAnswer:
    """One box's answer to the buyer's two questions.

    Attributes
    ----------
    label : str
        The box, e.g. ``"four GPUs on the slow fabric"``.
    n : int
        Tensor-parallel degree (all its GPUs).
    fabric : Fabric
        The wire between them.
    stream_s : float
        One stream's time per token in the lesson's arithmetic (weights and
        all-reduce latency, no context): 16.12, 9.34 and 10.43 ms.
    stream_full_s : float
        One stream's time per token at full context, with its KV and state
        traffic and the all-reduces' bytes.
    sequences : int
        Full-length sequences that fit beside the weights (an upper bound:
        activations, CUDA graphs and the communication library's buffers
        also take memory).
    tokens_per_s : float
        The box's throughput decoding all of them together, tokens/second.
    """

    label: str
    n: int
    fabric: Fabric
    stream_s: float
    stream_full_s: float
    sequences: int
    tokens_per_s: float


def buyer_answers(model: ModelSpec = MODEL, accel: Accelerator = GPU) -> list[BoxAnswer]:
    """Per-stream latency and full-context throughput of each of the buyer's boxes.

    Parameters
    ----------
    model : ModelSpec, default MODEL
        The model.
    accel : Accelerator, default GPU
        One card; every box uses the same card.

    Returns
    -------
    list of BoxAnswer
        In the order of :data:`BUYER_BOXES`. The fixed latency decides the
        first question (one stream waits on every all-reduce); memory that
        grows with the GPU count decides the second (more cards hold more
        sequences' KV cache).
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    answers = []
    context = model.max_context
    for label, fabric, n in BUYER_BOXES:
        fit = max_sequences(model, accel, n, context)
        batched = decode_step(model, accel, fabric, n, batch=max(fit, 1), context=context)
        answers.append(
            BoxAnswer(
                label=label,
                n=n,
                fabric=fabric,
                stream_s=decode_step(model, accel, fabric, n, include_bandwidth=False).total_s,
                stream_full_s=decode_step(model, accel, fabric, n, context=context).total_s,
                sequences=fit,
                tokens_per_s=batched.tokens_per_s if fit else 0.0,
            )
        )
    return answers


#: Columns of :func:`buyer_table`.
BUYER_HEADER: tuple[str, ...] = (
    "box",
    "one stream, the lesson's arithmetic (ms per token)",
    "one stream at full context (ms per token)",
    "full-length sequences that fit",
    "all of them together (tokens/s)",
)


def buyer_table(caption: str | None = None) -> str:
    """HTML table of :func:`buyer_answers`: both questions for each box.

    Parameters
    ----------
    caption : str, optional
        Table caption.

    Returns
    -------
    str
        One row per box, columns :data:`BUYER_HEADER`.
    """
    from lesson_lib.chapters.tables import html_table

    rows = [
        (
            a.label,
            f"{a.stream_s * 1e3:.2f}",
            f"{a.stream_full_s * 1e3:.2f}",
            format_count(a.sequences),
            format_count(a.tokens_per_s),
        )
        for a in buyer_answers()
    ]
    return html_table(BUYER_HEADER, rows, caption=caption)


def buyer_numbers() -> dict[str, str]:
    """The two answers to the buyer, formatted for the landing page, this chapter and the summary.

    Returns
    -------
    dict of str to str
        ``box_1_*``, ``box_2_*`` and ``box_4_*`` (``_stream``, ``_stream_full``,
        ``_sequences``, ``_tokens_per_s``) for one GPU, two fast and four
        slow; ``stream_winner``, ``stream_full_winner`` and
        ``throughput_winner`` (the boxes);
        ``throughput_4_vs_1`` and ``throughput_4_vs_2`` (the four slow GPUs'
        throughput over the others').
    """
    one, two, four = buyer_answers()
    out: dict[str, str] = {}
    for key, a in (("box_1", one), ("box_2", two), ("box_4", four)):
        out[f"{key}_stream"] = format_seconds(a.stream_s, "ms")
        out[f"{key}_stream_full"] = format_seconds(a.stream_full_s, "ms")
        out[f"{key}_sequences"] = format_count(a.sequences)
        out[f"{key}_tokens_per_s"] = format_count(a.tokens_per_s)
    boxes = (one, two, four)
    out["stream_winner"] = min(boxes, key=lambda a: a.stream_s).label
    out["throughput_winner"] = max(boxes, key=lambda a: a.tokens_per_s).label
    out["stream_full_winner"] = min(boxes, key=lambda a: a.stream_full_s).label
    out["throughput_4_vs_1"] = format_ratio(four.tokens_per_s / one.tokens_per_s, decimals=1)
    out["throughput_4_vs_2"] = format_ratio(four.tokens_per_s / two.tokens_per_s, decimals=1)
    return out


def embedding_numbers() -> dict[str, str]:
    """The input embedding, which decoding does not read whole.

    Returns
    -------
    dict of str to str
        ``embedding_gb`` (vocabulary x hidden size x bytes per weight, the
        whole matrix) and ``embedding_row`` (the one row a token looks up).
    """
    rows = MODEL.vocab_size or 0
    return {
        "embedding_gb": format_bytes(rows * MODEL.hidden_vector_bytes, "GB"),
        "embedding_row": format_bytes(MODEL.hidden_vector_bytes, "KiB", decimals=0),
    }


def numbers() -> dict[str, str]:
    """Every value the latency page glues: the worked example's numbers, its own (speed-up, timeline, published latencies) and two quoted from the payloads and batching chapters.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {
        **overview.numbers(),
        "pcie_bandwidth": payloads.payload_numbers()["pcie_bandwidth"],
        **scaling_numbers(),
        **published_numbers(),
        **buyer_numbers(),
        "kv_read_full_4": batching.batching_numbers()["kv_read_full_4"],
        **timeline_numbers(),
        **embedding_numbers(),
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/latency.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
