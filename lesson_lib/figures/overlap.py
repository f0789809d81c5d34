"""The overlap page's figure: a decoded token and a prompt under each technique, term by term."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lesson_lib.figures._style import NEUTRALS, ROLE_COLORS, legend_below, two_panels
from lesson_lib.model.overlap import TECHNIQUES, StepTime, step_time
from lesson_lib.model.specimen import PROMPT_TOKENS
from lesson_lib.model.units import MS, format_count

#: Each technique's short label on the bars.
SHORT: dict[str, str] = {
    "none": "none",
    "fused": "fused add + norm",
    "chunked": "chunked overlap",
    "fp8_allreduce": "FP8 all-reduce",
    "fp8_weights": "FP8 weights",
}
#: The bars' segments, each a StepTime attribute, its colour and its legend label.
SEGMENTS: tuple[tuple[str, str, str], ...] = (
    ("compute_s", ROLE_COLORS["compute"], "compute"),
    ("launches_s", NEUTRALS[3], "add + RMSNorm launches"),
    ("latency_s", ROLE_COLORS["latency"], "exposed latency"),
    ("bandwidth_s", ROLE_COLORS["bandwidth"], "exposed bytes"),
)


def _bars(ax, steps: dict[str, StepTime], title: str, legend: bool) -> None:
    ys = np.arange(len(steps))
    for y, step in zip(ys, steps.values(), strict=True):
        start = 0.0
        for attr, colour, label in SEGMENTS:
            width = getattr(step, attr) / MS
            key = label if legend and y == 0 else None
            ax.barh(y, width, left=start, color=colour, height=0.6, label=key)
            start += width
        ax.text(start, y, f" {step.total_s / MS:.2f} ms", va="center", fontsize=10)
    ax.set_yticks(ys, [SHORT[k] for k in steps], fontsize=10)
    ax.set_xlim(0, max(s.total_s for s in steps.values()) / MS * 1.3)
    ax.invert_yaxis()
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("ms", fontsize=10)


def overlap_figure(n: int = 4) -> Figure:
    """A decoded token (top) and the lesson's prompt (bottom) under each technique.

    Parameters
    ----------
    n : int, default 4
        Tensor-parallel GPUs on the fast fabric, from 2 to 4096.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, top, bottom = two_panels(6.2)
    decode = {t: step_time(1, t, n=n) for t in TECHNIQUES}
    prompt = {t: step_time(PROMPT_TOKENS, t, n=n) for t in TECHNIQUES}
    _bars(top, decode, f"A decoded token on {n} fast GPUs", legend=False)
    _bars(bottom, prompt, f"A {format_count(PROMPT_TOKENS)}-token prompt", legend=True)
    legend_below(bottom, -0.35, ncols=2)
    return fig
