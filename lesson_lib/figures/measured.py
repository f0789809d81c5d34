"""Figure of the measured chapter: the lesson's stated latencies among ten systems' measured ones."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lesson_lib.figures._style import INK, NEUTRALS, draw_key, new_figure
from lesson_lib.measured import (
    library_kernel,
    link_class,
    measured_fabric,
    smallest_engine_latency,
    systems,
)
from lesson_lib.model.specimen import FAST, SLOW

#: Marker and colour of each kind of measured latency: greys, told apart by
#: the marker, since a kind of measurement is none of the book's meanings.
_KINDS: dict[str, tuple[str, str, str]] = {
    "library2": ("o", INK, "library all-reduce, 2 GPUs (fitted alpha)"),
    "library4": ("s", NEUTRALS[2], "library all-reduce, 4 GPUs (fitted alpha)"),
    "graph": ("^", NEUTRALS[4], "engine kernel in a CUDA graph, 2 GPUs, quickest"),
    "eager": ("v", NEUTRALS[3], "engine kernel eager, 2 GPUs, quickest"),
}


def _readable(system: str) -> str:
    """A system's folder as people name it: ``b300_sxm`` as "B300 SXM", ``b60`` as "Arc Pro B60"."""
    words = (w.title() if w == "server" else w.upper() for w in system.split("_"))
    return "Arc Pro B60" if system == "b60" else " ".join(words)


def measured_latency_figure() -> Figure:
    """Dots per system: measured small all-reduce latencies beside the lesson's 10 us and 50 us.

    Returns
    -------
    matplotlib.figure.Figure
        One axes, a row per system (NVLink-class above PCIe-class), latency in microseconds on a log
        axis; dashed lines at the lesson's fast and slow latencies.
    """
    order = sorted(systems(), key=lambda s: (link_class(s) != "NVLink-class", s), reverse=True)
    # where constrained layout puts the axes above the key (rect 0, 0.25, 1, 0.75), fixed
    fig, ax = new_figure(height=4.8, margins=(0.4135, 0.3908, 0.9918, 0.9913))
    for y, system in enumerate(order):
        kernel = library_kernel(system)
        points = {
            "library2": measured_fabric(system, 2, kernel).fabric.latency,
            "library4": measured_fabric(system, 4, kernel).fabric.latency,
            "graph": smallest_engine_latency(system, 2, "graph"),
            "eager": smallest_engine_latency(system, 2, "eager"),
        }
        for kind, value in points.items():
            if value is None:
                continue
            marker, colour, _ = _KINDS[kind]
            ax.plot(value * 1e6, y, marker=marker, color=colour, linestyle="none", markersize=7)
    for fabric, label in ((FAST, "lesson: fast"), (SLOW, "lesson: slow")):
        ax.axvline(fabric.latency * 1e6, color=INK, linestyle="--", linewidth=1)
        ax.text(fabric.latency * 1e6 * 1.05, len(order) - 0.5, label, fontsize=10, va="bottom")
    ax.set_yticks(range(len(order)), [f"{_readable(s)} ({link_class(s)[:-6]})" for s in order])
    ax.set_xscale("log")
    ax.set_xlim(1.5, 250)  # room for the slow line's label
    ticks = [2, 5, 10, 20, 50, 100]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_ylim(-0.7, len(order) + 0.3)
    ax.set_xlabel("latency of one small all-reduce\n(us, log scale)")
    handles = [
        Line2D([], [], marker=m, color=c, linestyle="none", label=label)
        for m, c, label in _KINDS.values()
    ]
    draw_key(fig, handles, x=0.5, y=0.01, loc="lower center", ncols=1, fontsize=10)
    return fig
