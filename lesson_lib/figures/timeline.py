"""Figure of the latency chapter's opening: one decoded token as a chain, and one all-reduce."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from lesson_lib._validate import require_int
from lesson_lib.figures._style import PALETTE, ROLE_COLORS
from lesson_lib.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.specs import Fabric
from lesson_lib.step_time import decode_step
from lesson_lib.timeline import SEGMENT_KINDS, allreduce_anatomy, token_timeline
from lesson_lib.units import US, format_seconds

_KIND_LABELS = {
    "compute": "compute slice",
    "latency": "waiting on the all-reduce (latency)",
    "bandwidth": "the all-reduce's bytes",
}
_ANATOMY_COLORS = (PALETTE["purple"], PALETTE["vermillion"], PALETTE["orange"], PALETTE["sky"])


def token_timeline_figure(
    lines: Sequence[tuple[str, Fabric, int]] = (
        ("2 GPUs, fast fabric", FAST, 2),
        ("4 GPUs, fast fabric", FAST, 4),
        ("4 GPUs, slow fabric", SLOW, 4),
    ),
    allreduces: int = 4,
) -> Figure:
    """The first all-reduces of a decoded token on each line, and one all-reduce taken apart.

    Parameters
    ----------
    lines : sequence of (str, Fabric, int)
        Label, fabric and tensor-parallel degree of each timeline (specimen's
        model and card).
    allreduces : int, default 4
        How many all-reduces of the token to draw (two layers' worth).

    Returns
    -------
    matplotlib.figure.Figure
        Top: compute slices and all-reduce waits in microseconds, each line
        labelled with its whole token's time. Bottom: one 2-GPU all-reduce on
        the fast fabric split into launch, fixed cost, hops and bytes.
    """
    allreduces = require_int(
        "allreduces", allreduces, minimum=1, maximum=MODEL.allreduces_per_token
    )
    fig = Figure(figsize=(6.5, 5.9), layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=[2.2, 1.0])
    seen: set[str] = set()
    longest = 0.0
    for row, (_label, fabric, n) in enumerate(lines):
        whole = decode_step(MODEL, GPU, fabric, n).total_s
        for seg in token_timeline(MODEL, GPU, fabric, n, allreduces=allreduces):
            top.barh(
                row,
                seg.duration_s / US,
                left=seg.start_s / US,
                color=ROLE_COLORS[seg.kind],
                edgecolor="white",
                height=0.6,
                label=None if seg.kind in seen else _KIND_LABELS[seg.kind],
            )
            seen.add(seg.kind)
        end = sum(
            s.duration_s for s in token_timeline(MODEL, GPU, fabric, n, allreduces=allreduces)
        )
        longest = max(longest, end / US)
        top.text(
            end / US + 4,
            row,
            f"... x{MODEL.allreduces_per_token // allreduces}:\n"
            f"{format_seconds(whole, 'ms')} per token",
            va="center",
            fontsize=10,
        )
    top.set_yticks(range(len(lines)), [label for label, _, _ in lines], fontsize=10)
    top.invert_yaxis()
    top.set_xlabel(
        f"time from the token's start (us), first {allreduces} of its "
        f"{MODEL.allreduces_per_token} all-reduces",
        fontsize=10,
    )
    top.set_xlim(-0.02 * longest, longest * 1.5)  # room for the totals after the bars
    handles, labels = top.get_legend_handles_labels()
    order = [labels.index(_KIND_LABELS[k]) for k in SEGMENT_KINDS if _KIND_LABELS[k] in labels]
    fig.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="outside upper center",
        ncol=2,
        fontsize=10,
        frameon=False,
    )
    top.grid(True, axis="x", alpha=0.3)

    parts = allreduce_anatomy(MODEL.hidden_vector_bytes)
    left = 0.0
    for part, color in zip(parts, _ANATOMY_COLORS, strict=True):
        width = part.seconds / US
        bottom.barh(
            0,
            width,
            left=left,
            color=color,
            edgecolor="white",
            height=0.6,
            label=f"{part.label}: {format_seconds(part.seconds, 'us', decimals=2)}",
        )
        left += width
    bottom.set_yticks([0], ["one all-reduce,\n2 GPUs, fast"], fontsize=10)
    bottom.set_xlabel("microseconds (us)", fontsize=10)
    bottom.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=1, fontsize=10, frameon=False
    )
    bottom.grid(True, axis="x", alpha=0.3)
    return fig
