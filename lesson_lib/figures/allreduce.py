"""Figures of the ring all-reduce, read from a simulated one (:class:`lesson_lib.model.ring.RingResult`)."""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from lesson_lib.figures._style import FIGURE_WIDTH_IN, INK, ROLE_COLORS, new_figure, note
from lesson_lib.model._validate import require_int
from lesson_lib.model.collectives import allreduce_wire_bytes
from lesson_lib.model.ring import RingResult
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.tensor_parallel import simulate_hidden_allreduce
from lesson_lib.model.units import KiB

#: Colour of the border around a chunk that arrived in the step shown.
RECEIVED_COLOR: str = ROLE_COLORS["ring"]


def _holdings_colors(n: int) -> ListedColormap:
    """Colours for "this copy holds k of the n contributions", k = 1 .. n."""
    n = require_int("n", n)
    ramp = colormaps["cividis_r"]
    return ListedColormap([ramp(0.08 + 0.84 * k / max(n - 1, 1)) for k in range(n)])


def draw_holdings(
    ax: Axes, result: RingResult, step: int, *, fontsize: float = 8, aspect: str = "equal"
) -> None:
    """Draw the rank x chunk matrix of who holds what after ``step`` steps.

    A cell, one rank's copy of one chunk, is coloured by how many ranks' contributions it holds and
    outlined when it arrived in this step; up to five ranks it lists them (``0+3``) and its sender
    (``\u2190r3``), past five it shows a count (``3/8``).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    result : RingResult
        A simulated ring all-reduce.
    step : int
        From 0 (before any transfer) to ``len(result.steps)``.
    fontsize : float, default 8
        Size of the cell labels.
    aspect : {"equal", "auto"}, default "equal"
        Square cells, or cells stretched to fill the axes.
    """
    step = require_int("step", step, minimum=0, maximum=len(result.steps))
    n = result.n
    held = result.holdings[step]
    counts = np.array([[len(s) for s in row] for row in held])
    cmap = _holdings_colors(n)
    ax.imshow(counts, cmap=cmap, vmin=0.5, vmax=n + 0.5, aspect=aspect)
    received = {}
    if step > 0:
        received = {(t.dst, t.chunk): t.src for t in result.steps[step - 1]}
    for rank in range(n):
        for chunk in range(n):
            k = counts[rank, chunk]
            text = "+".join(str(r) for r in sorted(held[rank][chunk])) if n <= 5 else f"{k}/{n}"
            if k == n and n > 2:
                text = "all"
            if (rank, chunk) in received:
                if n <= 5:
                    text += f"\n\u2190r{received[rank, chunk]}"
                # add_artist, not add_patch: the image has set the limits already.
                outline = Rectangle((chunk - 0.46, rank - 0.46), 0.92, 0.92, fill=False,
                                    edgecolor=RECEIVED_COLOR, linewidth=2.5)  # fmt: skip
                ax.add_artist(outline)
            dark = k > (n + 1) / 2
            ax.text(chunk, rank, text, ha="center", va="center", fontsize=fontsize,
                    linespacing=1.1, color="white" if dark else "black")  # fmt: skip
    ax.set_xticks(range(n), [f"c{c}" for c in range(n)])
    ax.set_yticks(range(n), [f"rank {r}" for r in range(n)])
    ax.tick_params(length=0, labelsize=fontsize)
    edges = np.arange(1, n) - 0.5
    ax.vlines(edges, -0.5, n - 0.5, color="white", linewidth=1.5)
    ax.hlines(edges, -0.5, n - 0.5, color="white", linewidth=1.5)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)


def _holdings_legend_handles(n: int) -> list[Patch]:
    """Legend entries for :func:`draw_holdings` of ``n`` >= 2 ranks: one per count, the border."""
    cmap = _holdings_colors(n)
    handles = [Patch(facecolor=cmap(0), label="own partial only (1 rank)")]
    handles += [Patch(facecolor=cmap(k - 1), label=f"sum of {k} ranks") for k in range(2, n)]
    handles.append(Patch(facecolor=cmap(n - 1), label=f"complete: all {n} ranks"))
    arrived = "arrived this step\n(\u2190r3: sent by rank 3)"
    handles.append(Patch(facecolor="white", edgecolor=RECEIVED_COLOR, linewidth=2, label=arrived))
    return handles


def ring_schedule_figure(n: int = 4) -> Figure:
    """Every state of a ring all-reduce over ``n`` ranks, one :func:`draw_holdings` panel per step.

    The vector summed is the specimen's hidden vector. Left column: the start and the reduce-scatter
    steps; right: the all-gather steps and the legend. ``fig.axes[step]`` is that step's panel.

    Parameters
    ----------
    n : int, default 4
        Number of ranks, from 2 to 6 (more panels would be unreadable).

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = require_int("n", n, minimum=2, maximum=6)
    result = simulate_hidden_allreduce(MODEL, n)
    fig = Figure(figsize=(FIGURE_WIDTH_IN, 2.0 * n + 0.8), layout="constrained")
    grid = fig.add_gridspec(n, 2)
    fontsize = 10 if n <= 4 else 8
    for step in range(len(result.steps) + 1):
        row, col = (step, 0) if step < n else (step - n, 1)
        ax = fig.add_subplot(grid[row, col])
        draw_holdings(ax, result, step, fontsize=fontsize, aspect="auto")
        ax.tick_params(labelleft=col == 0)  # its row's left panel names the ranks: wider cells
        title = (
            f"step {step}: {result.steps[step - 1][0].phase}" if step else "start: own partial only"
        )
        # y=1.0: no x tick labels on top, so matplotlib's search for them can be skipped.
        ax.set_title(title, fontsize=10.5, y=1.0)
        if row == n - 1:
            ax.set_xlabel("chunk of the vector", fontsize=10)
    legend_ax = fig.add_subplot(grid[n - 1, 1])
    legend_ax.axis("off")
    legend_ax.legend(handles=_holdings_legend_handles(n), loc="center", fontsize=10,
                     title="each cell holds", title_fontsize=10, frameon=False)  # fmt: skip
    chunk = result.chunk_bytes[0] / KiB
    about = (
        "" if len(set(result.chunk_bytes)) == 1 else "about "
    )  # chunks differ if N doesn't divide
    fig.suptitle(
        f"Ring all-reduce over {n} ranks: each step, rank r sends one chunk\n"
        f"({about}{chunk:.3g} KiB) to rank (r+1) mod {n}",
        fontsize=11,
    )
    return fig


def ring_bytes_figure(max_n: int = 16) -> Figure:
    """Bytes each rank sends to all-reduce the specimen's hidden vector, for 1 .. ``max_n`` ranks.

    Dots: each rank's bytes in a simulated ring; line: ``2 (n - 1) / n`` times
    the payload (:func:`lesson_lib.model.collectives.allreduce_wire_bytes`).

    Parameters
    ----------
    max_n : int, default 16
        Largest number of ranks, from 2 to 64.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; bytes are shown in KiB (2**10 bytes).
    """
    max_n = require_int("max_n", max_n, minimum=2, maximum=64)
    model = MODEL
    payload = model.hidden_vector_bytes
    ns = np.arange(1, max_n + 1)
    fig, ax = new_figure(FIGURE_WIDTH_IN, 4.2, margins=(0.127, 0.1135, 0.873, 0.944))
    formula = [allreduce_wire_bytes(payload, int(n)) / KiB for n in ns]
    ax.plot(ns, formula, color=INK, lw=2, label="formula: 2(N-1)/N x payload")
    sent = {n: sorted(set(simulate_hidden_allreduce(model, int(n)).bytes_sent)) for n in ns}
    sim_n, sim_bytes = [n for n in ns for _ in sent[n]], [b / KiB for n in ns for b in sent[n]]
    ax.plot(sim_n, sim_bytes, "o", color=ROLE_COLORS["ring"], markeredgecolor="black",
            markersize=6, label="simulated ring: bytes each rank sent", zorder=3)  # fmt: skip
    for times, ls, label in ((2, "--", "2 x payload: approached, never reached"),
                             (1, ":", "1 x payload (one hidden vector)")):  # fmt: skip
        ax.axhline(times * payload / KiB, color=ROLE_COLORS["free"], ls=ls, label=label)
    for n in (2, 4, max_n):
        y = allreduce_wire_bytes(payload, n) / KiB
        # The last label right-aligned well under its dot: the flat run of dots before it
        # (N = 10 .. 15) lies only a few points higher and would touch a label closer to them.
        dx, dy = (6, -14) if n < max_n else (4, -34)
        note(ax, f"N={n}: {y:.4g} KiB", (n, y), dx, dy, ha="left" if n < max_n else "right")
    ax.set_xlabel("ranks in the ring, N")
    ax.set_ylabel("bytes sent per rank (KiB)")
    ax.set_xticks(ns if max_n <= 16 else np.linspace(1, max_n, 9).round())
    ax.set_ylim(0, 2.15 * payload / KiB)
    scale = payload / KiB
    right = ax.secondary_yaxis("right", functions=(lambda y: y / scale, lambda f: f * scale))
    right.set_ylabel("multiple of the payload")
    ax.set_title(
        f"All-reduce of one hidden vector ({model.hidden_size} values x "
        f"{model.dtype_bytes} B = {payload / KiB:g} KiB)",
        fontsize=10,
        y=1.0,  # no x tick labels on top: skip matplotlib's search for them
    )
    ax.legend(loc="lower right", fontsize=10)
    return fig


def ring_topology_figure(n: int = 4) -> Figure:
    """The ring itself: ``n`` GPUs on a circle, each sending only to its neighbour.

    Parameters
    ----------
    n : int, default 4
        Ranks, 2 to 8.

    Returns
    -------
    matplotlib.figure.Figure
        A box per GPU with its vector in ``n`` chunks, an arrow from each rank to the next.
    """
    n = require_int("n", n, minimum=2, maximum=8)
    fig, ax = new_figure(height=4.8)
    ax.set_aspect("equal")
    ax.axis("off")
    box_w, box_h = 0.84, 0.48
    # Far enough apart that neighbouring boxes never touch.
    radius = max(1.0, 0.7 * box_w / np.sin(np.pi / n))
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n  # rank 0 at the top, clockwise
    centres = np.column_stack([radius * np.cos(angles), radius * np.sin(angles)])
    chunk_colors = _holdings_colors(n)
    chunk_size = 10 if n <= 4 else 8.5
    for r, (x, y) in enumerate(centres):
        ax.add_patch(Rectangle((x - box_w / 2, y - box_h / 2), box_w, box_h, facecolor="white",
                               edgecolor=INK, linewidth=1.2, zorder=2))  # fmt: skip
        ax.text(x, y + box_h * 0.22, f"GPU {r}", ha="center", va="center", fontsize=11, zorder=3)
        width = (box_w - 0.08) / n
        for c in range(n):
            left = x - box_w / 2 + 0.04 + c * width
            chunk = Rectangle((left, y - box_h * 0.42), width, box_h * 0.42,
                              facecolor=chunk_colors(0), edgecolor="white", zorder=3)  # fmt: skip
            ax.add_patch(chunk)
            if n <= 5:  # past five, the chunks are too narrow for a name
                ax.text(left + width / 2, y - box_h * 0.21, f"c{c}", ha="center", va="center",
                        fontsize=chunk_size, zorder=4)  # fmt: skip
    for r in range(n):
        start, end = centres[r], centres[(r + 1) % n]
        direction = (end - start) / np.linalg.norm(end - start)
        shrink = 0.44
        arrow = {"arrowstyle": "-|>", "color": ROLE_COLORS["ring"], "lw": 2}
        ax.annotate("", xy=end - direction * shrink, xytext=start + direction * shrink,
                    arrowprops=arrow, zorder=1)  # fmt: skip
    ax.set_xlim(-radius - 0.5, radius + 0.5)
    ax.set_ylim(-radius - 0.32, radius + 0.32)
    ax.set_title(
        "Each GPU sends only to its neighbour", fontsize=11, y=1.0
    )  # see ring_bytes_figure
    return fig
