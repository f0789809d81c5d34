"""The latency chapter's decode explorer: change the wire, the card and N; see the token time."""

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


def decode_breakdown(
    latency_us: float, hbm_tbs: float, n: int, bandwidth_gbs: float
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
    card = dataclasses.replace(GPU, name="your card", hbm_bandwidth=hbm_tbs * TB)
    fabric = Fabric("your fabric", latency_us * US, bandwidth_gbs * GB)
    step = decode_step(MODEL, card, fabric, n)
    one = decode_step(MODEL, card, fabric, 1)
    reference = decode_step(MODEL, GPU, FAST, 2)

    def ms(seconds: float) -> str:
        return format_seconds(seconds, "ms", decimals=3)

    limit = speedup_limit(MODEL, card, fabric, include_bandwidth=True)
    ceiling = "none (a fabric with no cost)" if limit == float("inf") else format_ratio(limit)
    message = (
        f"<p><b>{n} GPU{'s' if n > 1 else ''}</b>: compute {ms(step.compute_s)} + "
        f"latency {ms(step.latency_s)} + bandwidth {ms(step.bandwidth_s)} = "
        f"<b>{ms(step.total_s)}</b> per token, "
        f"<b>{format_count(step.tokens_per_s)} tokens/s</b> (largest term: {step.bound}).<br>"
        f"Speed-up over one such card: {format_ratio(speedup(one, step))}; "
        f"no number of GPUs on this fabric can beat {ceiling}. "
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
) -> LessonWidget:
    """A widget: latency, HBM bandwidth, N and fabric bandwidth -> time per token.

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

    Returns
    -------
    LessonWidget
        Controls ``latency_us``, ``hbm_tbs``, ``n`` and ``bandwidth_gbs``;
        out-of-range values show a message instead of a traceback.
    """
    style = {"description_width": "initial"}
    controls = [
        widgets.FloatText(value=latency_us, step=1, description="latency (us)", style=style),
        widgets.FloatText(value=hbm_tbs, step=0.25, description="HBM (TB/s)", style=style),
        widgets.IntSlider(value=n, min=1, max=MAX_N, description="GPUs (N)", style=style),
        widgets.FloatText(value=bandwidth_gbs, step=10, description="fabric (GB/s)", style=style),
    ]
    return LessonWidget(
        controls,
        decode_breakdown,
        ["latency_us", "hbm_tbs", "n", "bandwidth_gbs"],
        alt=(
            "Stacked bars of compute, all-reduce latency and all-reduce bandwidth time per "
            "decoded token for one GPU, the chosen configuration and the lesson's 2 GPUs on "
            "the fast fabric."
        ),
    )
