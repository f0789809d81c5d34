"""Figure of the payloads chapter: decode traffic against fabric bandwidth."""

from __future__ import annotations

import textwrap

from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullFormatter

from lesson_lib.figures._style import FIGURE_WIDTH_IN, ROLE_COLORS, new_figure
from lesson_lib.model.payloads import FABRIC_BANDWIDTHS, decode_wire_rate
from lesson_lib.model.specimen import MODEL, TOKENS_PER_S
from lesson_lib.model.units import MB, TB, format_count, format_rate

_DECADES = {MB: "1 MB/s", 10 * MB: "10 MB/s", 100 * MB: "100 MB/s", 1e9: "1 GB/s",
            1e10: "10 GB/s", 1e11: "100 GB/s", TB: "1 TB/s"}  # fmt: skip


def payload_vs_bandwidth_figure() -> Figure:
    """Dots on a log scale: the specimen's decode wire traffic per rank beside fabric bandwidths.

    Traffic on 2 and 4 GPUs at the lesson's 50 tokens/s; the fabrics of
    :data:`lesson_lib.model.payloads.FABRIC_BANDWIDTHS`, those labelled ``"illustrative"`` hollow.

    Returns
    -------
    matplotlib.figure.Figure
        One axes, a dot per row at its rate, bytes/second on a log scale.
    """
    model, tokens_per_s = MODEL, TOKENS_PER_S
    rows: list[tuple[str, float, str, str, str]] = []  # label, rate, colour, hatch, note
    for n in (2, 4):
        rate = decode_wire_rate(model, n, tokens_per_s)
        note = f"{format_rate(rate, 'MiB')} = {format_rate(rate, 'MB', decimals=1)}"
        rows.append((f"decode traffic per rank, {n} GPUs", rate, ROLE_COLORS["decode"], "", note))
    for label, bandwidth in sorted(FABRIC_BANDWIDTHS.items(), key=lambda item: item[1]):
        hatch = "//" if "illustrative" in label else ""
        rows.append((label, bandwidth, ROLE_COLORS["bandwidth"], hatch, format_rate(bandwidth)))

    fig, ax = new_figure(
        FIGURE_WIDTH_IN, 0.55 * len(rows) + 1.8, margins=(0.3619, 0.1485, 0.9918, 0.9034)
    )
    ys = list(range(len(rows)))
    # Dots, not bars: on a log axis a bar's length is the log of a ratio to
    # the axis's start, so a decode bar would look a third of PCIe's when
    # PCIe carries it hundreds of times over. A dot's place is its value.
    for y, (_label, value, colour, hatch, note) in zip(ys, rows, strict=True):
        edge = colour if colour != ROLE_COLORS["decode"] else "black"
        hollow = "white" if hatch else colour  # an illustrative figure is hollow
        ax.plot(value, y, "o", ms=11, color=colour, mfc=hollow, mec=edge, mew=2)
        ax.text(value * 1.6, y, note, va="center", fontsize=10,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})  # fmt: skip
    ax.set_xscale("log")
    # Labels on two lines leave the bars most of the book's column.
    ax.set_yticks(ys, [_two_lines(r[0]) for r in rows])
    ax.invert_yaxis()
    top = max(r[1] for r in rows)
    ax.set_xlim(MB, top * 60)
    # Every decade gets a tick and a grid line, every other one a label:
    # side by side, the labels would touch at the book's column width.
    ticks = [t for t in _DECADES if MB <= t <= top * 60]
    ax.xaxis.set_major_locator(FixedLocator(ticks[::2]))
    ax.xaxis.set_minor_locator(FixedLocator(ticks[1::2]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticklabels([_DECADES[t] for t in ticks[::2]])
    ax.set_xlabel("bytes per second, one direction\n(log scale, decimal units)")
    title = f"Decode at {format_count(tokens_per_s)} tokens/s\nneeds a sliver of any fabric"
    ax.set_title(title, fontsize=11)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.grid(False, axis="y")
    return fig


def _two_lines(label: str) -> str:
    """A bar's label on at most two lines: before a parenthesis, or wrapped."""
    if " (" in label:
        return label.replace(" (", "\n(", 1)
    return textwrap.fill(label, 24)
