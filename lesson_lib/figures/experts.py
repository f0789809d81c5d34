"""Figures of the experts chapter: every collective's cost, and TP against EP for an MoE model."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lesson_lib.figures._style import NEUTRALS, ROLE_COLORS, legend_below, two_panels
from lesson_lib.model.collectives import COLLECTIVES, collective_time, collective_wire_bytes
from lesson_lib.model.experts import comparison
from lesson_lib.model.specimen import FAST_RING
from lesson_lib.model.units import MS, US, KiB

#: Colour, marker and line style per collective, the same in both panels:
#: the all-reduce and its two halves in the ring's colour, told apart by
#: marker and line; the point-to-point send in the decode message's colour.
COLLECTIVE_STYLE: dict[str, tuple[str, str, str]] = {
    "all_reduce": (ROLE_COLORS["ring"], "o", "-"),
    "reduce_scatter": (ROLE_COLORS["ring"], "s", "--"),
    "all_gather": (ROLE_COLORS["ring"], "D", ":"),
    "all_to_all": (ROLE_COLORS["all_to_all"], "^", "-"),
    "send_recv": (ROLE_COLORS["decode"], "v", "-."),
}


def _label(kind: str) -> str:
    return COLLECTIVES[kind].description.partition(":")[0]


def collectives_figure() -> Figure:
    """Every collective: bytes per rank against 1-16 ranks (top), time against the payload (bottom).

    The time panel is 8 ranks of ``FAST_RING``, whose per-hop latency makes steps cost something.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes, the bytes panel on top, then microseconds against KiB (log-log).
    """
    fabric, n, ns = FAST_RING, 8, range(1, 17)
    fig, left, right = two_panels(
        8.0, ((0.127, 0.5611, 0.9918, 0.9681), (0.127, 0.0626, 0.9918, 0.4697))
    )
    sizes = np.logspace(np.log10(1 * KiB), np.log10(256 * 2**20), 120)
    for kind in COLLECTIVES:
        color, marker, style = COLLECTIVE_STYLE[kind]
        wire = [collective_wire_bytes(kind, 1.0, k) for k in ns]
        left.plot(ns, wire, marker=marker, ls=style, color=color, lw=2, ms=5, label=_label(kind))
        times = [collective_time(kind, s, n, fabric) / US for s in sizes]
        right.loglog(sizes / KiB, times, ls=style, color=color, lw=2)
    left.set_xlabel("ranks (n)")
    left.set_ylabel("bytes each rank sends (x payload)")
    left.set_ylim(0, 2.1)
    left.grid(True, alpha=0.3)
    left.legend(loc="lower right", fontsize=10, frameon=False)
    left.set_title("Bytes per rank", fontsize=12)
    right.set_xlabel("payload (KiB)")
    right.set_ylabel(f"time at {n} ranks (us)")
    right.grid(True, which="both", alpha=0.3)
    right.set_title("Time: steps first, then bytes (colours as above)", fontsize=12)
    return fig


def tp_vs_ep_figure() -> Figure:
    """TP, EP and TP with DCP for the chapter's MoE example: one sequence, and a full node.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: one sequence's ms per token by term, then a full node's tokens/s.
    """
    layouts = comparison()
    names = {"tp": "TP 8", "ep": "EP 8", "dcp": "TP 8 + DCP 8"}
    fig, left, right = two_panels(
        5.6, ((0.2076, 0.6461, 0.9664, 0.9926), (0.2076, 0.0851, 0.9664, 0.4316))
    )
    ys = np.arange(len(layouts))
    for y, lay in zip(ys, layouts.values(), strict=True):
        start = 0.0
        for term, role, label in (
            ("compute_s", "compute", "weights and cache / HBM"),
            ("latency_s", "latency", "collectives' latency"),
            ("bandwidth_s", "bandwidth", "collectives' bytes"),
        ):
            width = getattr(lay.one, term) / MS
            key = label if y == 0 else None
            left.barh(y, width, left=start, color=ROLE_COLORS[role], height=0.6, label=key)
            start += width
        left.text(start + 0.1, y, f"{lay.one.total_s / MS:.2f} ms", va="center", fontsize=11)
    left.set_yticks(ys, [names[k] for k in layouts])
    left.set_xlabel("one sequence: ms per token")
    left.set_xlim(0, max(lay.one.total_s for lay in layouts.values()) / MS * 1.45)
    left.invert_yaxis()
    legend_below(left, -0.3, ncols=2)
    rates = [lay.full.tokens_per_s for lay in layouts.values()]
    right.barh(ys, rates, color=NEUTRALS[2], height=0.6)
    for y, lay in zip(ys, layouts.values(), strict=True):
        rate = f" {lay.full.tokens_per_s:,.0f}\n {lay.sequences} sequences"
        right.text(lay.full.tokens_per_s, y, rate, va="center", fontsize=11)
    right.set_yticks(ys, [names[k] for k in layouts])
    right.set_xlim(0, max(rates) * 1.6)
    right.set_xlabel("full node: tokens/s")
    right.invert_yaxis()
    right.grid(True, axis="x", alpha=0.3)
    return fig
