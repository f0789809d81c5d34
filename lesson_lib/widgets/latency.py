"""The decode explorer: change the wire, the card, N, the batch and the all-reduce algorithm.

Its defaults are the lesson's: one sequence, weights only, a fixed latency
per all-reduce (no per-hop term), the ring. Every other setting is a step
beyond the lesson that the chapters on algorithms and batching explain.
"""

from __future__ import annotations

import dataclasses

import ipywidgets as widgets
from matplotlib.figure import Figure

from lesson_lib._validate import require_int, require_number
from lesson_lib.figures.latency import breakdown_figure
from lesson_lib.scaling import speedup_limit
from lesson_lib.specimen import FAST, GPU, MODEL
from lesson_lib.specs import Fabric
from lesson_lib.step_time import decode_step, speedup
from lesson_lib.units import GB, TB, US, format_count, format_ratio, format_seconds
from lesson_lib.widgets._base import LessonWidget

#: Largest tensor-parallel degree the slider offers.
MAX_N = 16
#: Batch sizes the batch slider offers.
BATCH_OPTIONS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: Context choices as (label, tokens), None being the lesson's weights-only heuristic.
CONTEXT_OPTIONS: tuple[tuple[str, int | None], ...] = (
    ("none (lesson: weights only)", None),
    ("4,096 tokens", 4096),
    ("32,768 tokens", 32768),
    ("262,144 tokens (full)", 262_144),
)
#: All-reduce algorithm choices as (label, key of lesson_lib.collectives.ALGORITHMS).
ALGORITHM_OPTIONS: tuple[tuple[str, str], ...] = (
    ("ring", "ring"),
    ("two-shot", "two_shot"),
    ("one-shot", "one_shot"),
)


def decode_breakdown(
    latency_us: float,
    hbm_tbs: float,
    n: int,
    bandwidth_gbs: float,
    batch: int = 1,
    context: int | None = None,
    algorithm: str = "ring",
    hop_us: float = 0.0,
) -> tuple[str, Figure]:
    """Message and figure of the explorer for one choice of inputs.

    Parameters
    ----------
    latency_us : float
        Fixed latency of one small all-reduce, microseconds (0 to 10,000).
    hbm_tbs : float
        HBM bandwidth of each card, TB/s (decimal; > 0 and <= 100).
    n : int
        Tensor-parallel degree, 1 to :data:`MAX_N`.
    bandwidth_gbs : float
        Fabric bandwidth per direction, GB/s (decimal; > 0 and <= 100,000).
    batch : int, default 1
        Sequences decoded together, 1 to 65,536.
    context : int or None, default None
        Tokens in each sequence's KV cache (None: the lesson's weights-only
        heuristic).
    algorithm : str, default "ring"
        All-reduce algorithm, a key of :data:`lesson_lib.collectives.ALGORITHMS`.
    hop_us : float, default 0.0
        Extra latency per step on the critical path, microseconds (0 to 1,000;
        0 is the lesson's fixed latency).

    Returns
    -------
    tuple of (str, matplotlib.figure.Figure)
        HTML message (the terms, the total, tokens/s, speed-up over one card
        of the same kind and the ceiling of that speed-up) and a stacked-bar
        figure comparing one card, the choice and the lesson's 2 fast GPUs.

    Raises
    ------
    ValueError, TypeError
        If an input is out of range or not a number; the message names it.
    """
    latency_us = require_number("latency (us)", latency_us, maximum=10_000, unit="us")
    hbm_tbs = require_number("HBM bandwidth (TB/s)", hbm_tbs, strict=True, maximum=100)
    n = require_int("N (GPUs)", n, minimum=1, maximum=MAX_N)
    bandwidth_gbs = require_number(
        "fabric bandwidth (GB/s)", bandwidth_gbs, strict=True, maximum=100_000
    )
    hop_us = require_number("per-hop latency (us)", hop_us, maximum=1000, unit="us")
    card = dataclasses.replace(GPU, name="your card", hbm_bandwidth=hbm_tbs * TB)
    fabric = Fabric("your fabric", latency_us * US, bandwidth_gbs * GB, hop_us * US)
    setting = {"batch": batch, "context": context, "algorithm": algorithm}
    step = decode_step(MODEL, card, fabric, n, **setting)
    one = decode_step(MODEL, card, fabric, 1, **setting)
    reference = decode_step(MODEL, GPU, FAST, 2)

    def ms(seconds: float) -> str:
        return format_seconds(seconds, "ms", decimals=3)

    if batch == 1 and context is None:
        limit = speedup_limit(MODEL, card, fabric, include_bandwidth=True)
        if hop_us > 0 and algorithm == "ring":
            ceiling = "none: with per-hop latency a ring's speed-up peaks and then falls"
        elif limit == float("inf"):
            ceiling = "none (a fabric with no cost)"
        else:
            ceiling = f"no number of GPUs on this fabric can beat {format_ratio(limit)}"
    else:
        ceiling = "the ceiling is given for one sequence without context only"
    sequences = "one sequence" if batch == 1 else f"{format_count(batch)} sequences"
    reads = "" if context is None else f" (weights + KV reads {ms(step.memory_s)})"
    message = (
        f"<p><b>{n} GPU{'s' if n > 1 else ''}, {sequences}</b>: "
        f"compute {ms(step.compute_s)}{reads} + "
        f"latency {ms(step.latency_s)} + bandwidth {ms(step.bandwidth_s)} = "
        f"<b>{ms(step.total_s)}</b> per token for each sequence, "
        f"<b>{format_count(step.tokens_per_s)} tokens/s</b> in all "
        f"(largest term: {step.bound}; the all-reduces are "
        f"{step.communication_bound}-bound).<br>"
        f"Speed-up over one such card: {format_ratio(speedup(one, step))}; {ceiling}. "
        "(Both count the bandwidth term, so they sit a hair below the lesson's "
        "compute + latency figures.)</p>"
    )
    fig = breakdown_figure(
        [
            ("1 GPU (your card)", one),
            (f"{n} GPU{'s' if n > 1 else ''}, your fabric", step),
            ("lesson: 2 GPUs, fast fabric", reference),
        ],
        width=7.0,
        height=3.3,
        title=None,
    )
    # Fixed margins instead of the constrained layout: half the render time.
    fig.set_layout_engine(None)
    fig.subplots_adjust(left=0.29, right=0.98, top=0.97, bottom=0.3)
    return message, fig


def decode_explorer(
    latency_us: float = FAST.latency / US,
    hbm_tbs: float = GPU.hbm_bandwidth / TB,
    n: int = 4,
    bandwidth_gbs: float = FAST.bandwidth / GB,
    batch: int = 1,
    context: int | None = None,
    algorithm: str = "ring",
    hop_us: float = 0.0,
) -> LessonWidget:
    """A widget: the wire, the card, N, the batch and the algorithm -> time per token.

    Parameters
    ----------
    latency_us : float, default the fast fabric's 10 us
        Initial latency of one small all-reduce, microseconds.
    hbm_tbs : float, default the specimen's 3.35 TB/s
        Initial HBM bandwidth, TB/s (decimal).
    n : int, default 4
        Initial number of GPUs, 1 to :data:`MAX_N`.
    bandwidth_gbs : float, default NVLink's 450 GB/s
        Initial fabric bandwidth, GB/s (decimal).
    batch : int, default 1
        Initial batch, one of :data:`BATCH_OPTIONS`.
    context : int or None, default None
        Initial context, one of the values of :data:`CONTEXT_OPTIONS`.
    algorithm : str, default "ring"
        Initial all-reduce algorithm, one of :data:`ALGORITHM_OPTIONS`.
    hop_us : float, default 0.0
        Initial per-hop latency, microseconds.

    Returns
    -------
    LessonWidget
        Controls ``latency_us``, ``hbm_tbs``, ``n``, ``bandwidth_gbs``,
        ``batch``, ``context``, ``algorithm`` and ``hop_us``; out-of-range
        values show a message instead of a traceback.

    Raises
    ------
    ValueError
        If ``batch``, ``context`` or ``algorithm`` is not one of the offered choices.
    """
    for name, value, options in (
        ("batch", batch, BATCH_OPTIONS),
        ("context", context, [v for _, v in CONTEXT_OPTIONS]),
        ("algorithm", algorithm, [v for _, v in ALGORITHM_OPTIONS]),
    ):
        if value not in options:
            raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
    style = {"description_width": "initial"}
    controls = [
        widgets.FloatText(value=latency_us, step=1, description="latency (us)", style=style),
        widgets.FloatText(value=hbm_tbs, step=0.25, description="HBM (TB/s)", style=style),
        widgets.IntSlider(value=n, min=1, max=MAX_N, description="GPUs (N)", style=style),
        widgets.FloatText(value=bandwidth_gbs, step=10, description="fabric (GB/s)", style=style),
        widgets.SelectionSlider(
            options=list(BATCH_OPTIONS),
            value=batch,
            description="batch (sequences)",
            style=style,
            continuous_update=False,
        ),
        widgets.Dropdown(
            options=list(CONTEXT_OPTIONS), value=context, description="context", style=style
        ),
        widgets.Dropdown(
            options=list(ALGORITHM_OPTIONS),
            value=algorithm,
            description="all-reduce",
            style=style,
        ),
        widgets.FloatText(value=hop_us, step=0.5, description="per-hop (us)", style=style),
    ]
    return LessonWidget(
        controls,
        decode_breakdown,
        [
            "latency_us",
            "hbm_tbs",
            "n",
            "bandwidth_gbs",
            "batch",
            "context",
            "algorithm",
            "hop_us",
        ],
        alt=(
            "Stacked bars of compute, all-reduce latency and all-reduce bandwidth time per "
            "decoded token for one GPU, the chosen configuration and the lesson's 2 GPUs on "
            "the fast fabric."
        ),
    )
