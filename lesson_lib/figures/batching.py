"""Figure of batched decode: throughput and each sequence's wait as the batch grows."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patheffects import withStroke

from lesson_lib.figures._style import INK, ROLE_COLORS, note, text_shade, two_panels
from lesson_lib.model.batching import CONTEXT, batch_curve
from lesson_lib.model.collectives import crossover_tokens
from lesson_lib.model.memory import max_sequences
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import format_count

#: The configurations drawn, as (label, n, fabric, colour, line style, width in points). The 2-GPU
#: fast and 4-GPU slow curves run together up to about 200 sequences: the slow one is a wide band,
#: the 2-GPU one a dashed line drawn over it with a white edge, so both show where they meet.
CONFIGS: tuple[tuple[str, int, Fabric, str, str, float], ...] = (
    ("2 GPUs, fast fabric", 2, FAST, ROLE_COLORS["fast"], "--", 2.0),
    ("4 GPUs, fast fabric", 4, FAST, ROLE_COLORS["fast"], "-", 2.0),
    ("4 GPUs, slow fabric", 4, SLOW, ROLE_COLORS["slow"], "-", 5.0),
)
#: Each curve's name on the top panel, drawn in its colour. An entry holds the text, the batch
#: whose point it labels (None for the curve's end), its offset in points, and its alignment.
NAMES: dict[str, tuple[str, int | None, float, float, str, str]] = {
    "2 GPUs, fast fabric": ("2 GPUs,\nfast", None, 8, -2, "left", "top"),
    "4 GPUs, fast fabric": ("4 GPUs, fast", 56, -3, 3, "right", "bottom"),
    "4 GPUs, slow fabric": ("4 GPUs,\nslow", None, 3, 7, "right", "bottom"),
}
#: Offset (points) and alignment of each crossover's label on the bottom panel, joined to its dot.
CROSSOVER_NOTES: dict[str, tuple[float, float, str, str]] = {
    "4 GPUs, fast fabric": (0, -30, "center", "top"),
    "4 GPUs, slow fabric": (-30, 40, "right", "bottom"),
}


def batch_figure() -> Figure:
    """Two stacked panels against the batch: tokens/s over all sequences, and ms each sequence waits.

    One curve per entry of :data:`CONFIGS`, the specimen's model and card, each
    sequence's cache holding ``CONTEXT`` tokens, named on the top panel in its
    colour (:data:`NAMES`). Each curve stops where memory is full, a square;
    a hollow dot marks where the all-reduces turn bandwidth-bound, labelled
    with its batch on the bottom panel.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes sharing a log2 batch axis, throughput on top.
    """
    model, accel, context = MODEL, GPU, CONTEXT
    fig, left, right = two_panels(
        7.0, ((0.1545, 0.5405, 0.9565, 0.9656), (0.1545, 0.0681, 0.9565, 0.4932)), sharex=True
    )
    for label, n, fabric, color, style, width in CONFIGS:
        fit = max_sequences(model, accel, n, context)
        batches = np.unique(np.round(np.geomspace(1, fit, 40)).astype(int))
        steps = batch_curve(model, accel, fabric, n, batches.tolist(), context=context)
        rates = [s.tokens_per_s for s in steps]
        line = {"color": color, "ls": style, "lw": width, "zorder": 3 if width < 3 else 2}
        if width < 3:  # a white edge keeps a thin line seen where it crosses the wide band
            line["path_effects"] = [withStroke(linewidth=width + 1.5, foreground="white")]
        left.plot(batches, rates, label=label, **line)
        right.plot(batches, [s.total_s * 1e3 for s in steps], **line)
        text, at, dx, dy, ha, va = NAMES[label]
        xy = (batches[-1], rates[-1]) if at is None else (at, np.interp(at, batches, rates))
        note(left, text, xy, dx, dy, ha=ha, va=va, color=text_shade(color), fontweight="bold")
        # Memory full: a mark on the curve's own last point (a bar read as another curve's).
        for ax, y in ((left, steps[-1].tokens_per_s), (right, steps[-1].total_s * 1e3)):
            ax.plot(batches[-1], y, "s", color=color, ms=6.5, mec="black", mew=1, zorder=4)
        star = crossover_tokens(model, fabric, n)
        if star <= fit:
            b = round(star)
            (at_star,) = batch_curve(model, accel, fabric, n, [b], context=context)
            y = at_star.total_s * 1e3
            right.plot(b, y, "o", color=color, ms=6, mfc="white", mec=color, mew=1.8, zorder=5)
            dx, dy, ha, va = CROSSOVER_NOTES[label]
            note(right, f"bandwidth-bound\nfrom {b}", (b, y), dx, dy, ha=ha,
                 va=va, color=text_shade(color), fontweight="bold",
                 arrowprops={"arrowstyle": "-", "color": color, "lw": 1.2, "shrinkB": 4})  # fmt: skip
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ticks = [1, 4, 16, 64, 256, 1024]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.grid(True, alpha=0.3)
    right.set_xlabel(f"sequences in the batch ({format_count(context)}-token contexts)")
    left.set_ylabel("tokens/s over all sequences")
    left.set_title("Throughput grows with the batch", fontsize=11)
    right.set_ylabel("ms per token each sequence waits")
    right.set_title("Each sequence's wait grows far more slowly", fontsize=11)
    marks = "square, where a curve ends: memory full"
    left.text(0.02, 0.97, marks, transform=left.transAxes, va="top", fontsize=10, color=INK)
    return fig
