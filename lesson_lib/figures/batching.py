"""Figure of batched decode: throughput and each sequence's wait as the batch grows."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lesson_lib.figures._style import INK, ROLE_COLORS, two_panels
from lesson_lib.model.batching import CONTEXT, batch_curve
from lesson_lib.model.collectives import crossover_tokens
from lesson_lib.model.memory import max_sequences
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import format_count

#: The configurations drawn, as (label, n, fabric, colour, line style, width in points). The
#: 2-GPU fast and 4-GPU slow curves run together from about 16 to 128 sequences: the slow one is
#: a wide band, the 2-GPU one a thin dashed line drawn over it, so both show where they meet.
CONFIGS: tuple[tuple[str, int, Fabric, str, str, float], ...] = (
    ("2 GPUs, fast fabric", 2, FAST, ROLE_COLORS["fast"], "--", 2.0),
    ("4 GPUs, fast fabric", 4, FAST, ROLE_COLORS["fast"], "-", 2.0),
    ("4 GPUs, slow fabric", 4, SLOW, ROLE_COLORS["slow"], "-", 5.0),
)


def batch_figure() -> Figure:
    """Two stacked panels against the batch: tokens/s over all sequences, and ms each sequence waits.

    One curve per entry of :data:`CONFIGS`, the specimen's model and card, each
    sequence's cache holding ``CONTEXT`` tokens. Each curve stops where memory is
    full; a hollow dot marks where the all-reduces turn bandwidth-bound.

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
        left.plot(batches, rates, label=label, **line)
        right.plot(batches, [s.total_s * 1e3 for s in steps], **line)
        # Memory full: a mark on the curve's own last point (a bar read as another curve's).
        for ax, y in ((left, steps[-1].tokens_per_s), (right, steps[-1].total_s * 1e3)):
            ax.plot(batches[-1], y, "s", color=color, ms=6.5, mec="black", mew=1, zorder=4)
        star = crossover_tokens(model, fabric, n)
        if star <= fit:
            # Hollow and small: the slow fabric's crossover lies just left of the 2-GPU curve's
            # square, at nearly its height on top, and must read as another mark.
            b = round(star)
            (at,) = batch_curve(model, accel, fabric, n, [b], context=context)
            for ax, y in ((left, at.tokens_per_s), (right, at.total_s * 1e3)):
                ax.plot(b, y, "o", color=color, ms=6, mfc="white", mec=color, mew=1.8, zorder=4)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ticks = [1, 4, 16, 64, 256, 1024]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.grid(True, alpha=0.3)
    right.set_xlabel(f"sequences in the batch ({format_count(context)}-token contexts)")
    left.set_ylabel("tokens/s over all sequences")
    left.set_title("Throughput grows almost with the batch", fontsize=11)
    right.set_ylabel("ms per token each sequence waits")
    right.set_title("Each sequence waits longer, slowly", fontsize=11)
    left.legend(loc="upper left", fontsize=10, frameon=False)
    marks = "hollow dot: all-reduces turn bandwidth-bound\nsquare, where a curve ends: memory full"
    right.text(0.02, 0.97, marks, transform=right.transAxes, va="top", fontsize=10, color=INK)
    return fig
