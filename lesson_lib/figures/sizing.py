"""Figures of the sizing chapter: what fills one GPU's memory, and one sequence's KV cache."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from lesson_lib.figures._style import INK, ROLE_COLORS, legend_below, new_figure, note
from lesson_lib.model.memory import MemoryBudget
from lesson_lib.model.sizing import fits_by_degree, pure_attention_twin
from lesson_lib.model.specimen import GPU, MODEL
from lesson_lib.model.units import GB, GiB, format_bytes, format_count

#: Segments of a memory bar, bottom to top; (MemoryBudget attribute, legend label, role).
SEGMENTS: tuple[tuple[str, str, str], ...] = (
    ("weights_bytes", "weights", "weights"),
    ("kv_bytes", "KV cache", "kv"),
    ("state_bytes", "DeltaNet state", "state"),
    ("free_bytes", "free", "free"),
)

# Segments thinner than this share of the capacity are labelled above the bar, not inside it.
_LABEL_MIN_SHARE = 0.06
# Points between rows of the labels above the bars.
_ROW_PT = 13


def _memory_bars_figure(
    budgets: Sequence[MemoryBudget], labels: Sequence[str], title: str
) -> Figure:
    """Stacked per-GPU memory bars with the card's capacity as a dashed line."""
    fig, ax = new_figure(height=4.4, margins=(0.1049, 0.2590, 0.8974, 0.9452))
    ax.grid(False, axis="x")
    x = np.arange(len(budgets))
    bottom = np.zeros(len(budgets))
    capacity = max(b.capacity_bytes for b in budgets) / GB
    above: list[int] = [0] * len(budgets)  # labels above each bar so far
    for attr, label, role in SEGMENTS:
        values = np.array([max(getattr(b, attr), 0.0) for b in budgets]) / GB
        alpha = 0.45 if role == "free" else 1.0
        bars = ax.bar(x, values, 0.7, bottom=bottom, color=ROLE_COLORS[role], label=label,
                      edgecolor="white", linewidth=0.8, alpha=alpha)  # fmt: skip
        for i, (rect, value) in enumerate(zip(bars, values, strict=True)):
            if 0 < value < _LABEL_MIN_SHARE * capacity:
                # Too thin for its value: named above the bar's end, in the stack's order, with
                # the two decimals of the table beside the figure.
                text = f"{label.removeprefix('DeltaNet ')} {format_bytes(value * GB, 'GB')}"
                note(ax, text, (x[i], capacity), 0, 3 + _ROW_PT * above[i], ha="center",
                     va="bottom", color=INK if role == "free" else ROLE_COLORS[role])  # fmt: skip
                above[i] += 1
            elif value > 0:
                text = format_bytes(value * GB, "GB", decimals=1)
                # The KV cache is quoted in GiB in the text and tables beside
                # this figure: give both, so the two do not seem to disagree.
                if role == "kv":
                    text += f"\n= {format_bytes(value * GB, 'GiB', decimals=1)}"
                ax.text(rect.get_x() + rect.get_width() / 2, rect.get_y() + value / 2, text,
                        ha="center", va="center", fontsize=10,
                        color="white" if role == "weights" else "black")  # fmt: skip
        bottom = bottom + values
    ax.axhline(capacity, color=INK, linestyle="--", linewidth=1.2)
    card = (f"card: {format_bytes(capacity * GB, 'GB', decimals=2)} "
            f"= {format_bytes(capacity * GB, 'GiB', decimals=1)}")  # fmt: skip
    # From the left edge across the first two bars, above their labels.
    note(ax, card, (-0.55, capacity), 0, 3 + _ROW_PT * max(above[:2]), ha="left", va="bottom")
    ax.set_xticks(x, labels)
    ax.set_xlim(-0.6, len(budgets) - 0.4)
    # Room for two rows of labels above the line (about 30 pt); no tick over it, no wider labels.
    top = max(capacity, float(bottom.max()))
    ax.set_ylim(0, top * 1.22)
    ax.set_yticks(np.arange(0, top, 20))
    ax.set_ylabel("memory per GPU (GB, 10$^9$ bytes)")
    # Clear of the two-line tick labels above it.
    ax.set_xlabel("configuration", labelpad=8)
    ax.set_title(title, fontsize=11)
    legend_below(ax, -0.27, ncols=4)  # below, the axes has the width for three wide bars
    return fig


def tp_budget_figure() -> Figure:
    """Per-GPU memory at TP = 1, 2, 4 with as many full-length sequences as fit.

    The specimen on cards sold as 80 GB (79.1 GiB visible) at its full context
    (:func:`lesson_lib.model.sizing.fits_by_degree`).

    Returns
    -------
    matplotlib.figure.Figure
        One stacked bar per degree, labelled with it and the sequences.
    """
    fits = fits_by_degree()
    labels = [f"TP = {f.n}\n{f.sequences} sequence{'' if f.sequences == 1 else 's'}" for f in fits]
    title = f"Each GPU, filled with sequences of {format_count(fits[0].context_tokens)} tokens"
    return _memory_bars_figure([f.budget for f in fits], labels, title)


def kv_context_figure() -> Figure:
    """One sequence's memory against its length: the hybrid specimen vs its pure-attention twin.

    The dotted line is the room one 80 GB card has beside the whole (unsplit) weights.

    Returns
    -------
    matplotlib.figure.Figure
        The two KV caches and the fixed DeltaNet state in GiB, and the room
        beside the weights dotted, against thousands of tokens.
    """
    twin = pure_attention_twin(MODEL)
    tokens = np.linspace(0, MODEL.max_context, 65).astype(int)
    hybrid = np.array([MODEL.kv_bytes(int(t)) for t in tokens]) / GiB
    pure = np.array([twin.kv_bytes(int(t)) for t in tokens]) / GiB
    state = np.full(tokens.shape, MODEL.state_bytes / GiB)
    fig, ax = new_figure(height=4.4, margins=(0.1049, 0.1073, 0.9658, 0.9905))
    k = tokens / 1024
    for values, style, width, label in (
        (pure, "--", 2, f"KV cache, all {twin.num_attention_layers} layers attention"),
        (hybrid, "-", 2.5, f"KV cache, hybrid ({MODEL.num_attention_layers} attention layers)"),
    ):
        ax.plot(k, values, color=ROLE_COLORS["kv"], linestyle=style, linewidth=width, label=label)
    ax.plot(k, state, color=ROLE_COLORS["state"], linewidth=2.5,
            label=f"DeltaNet state, hybrid ({MODEL.num_linear_layers} layers, fixed)")  # fmt: skip
    room = (GPU.memory_bytes - MODEL.weight_bytes) / GiB
    ax.axhline(room, color=INK, linestyle=":", linewidth=1.2)
    right = MODEL.max_context / 1024
    beside = f"room beside the weights\non one card: {format_bytes(room * GiB, 'GiB', decimals=1)}"
    # Under the line, where the steep dashed line has passed.
    note(ax, beside, (right, room), -4, -3, ha="right", va="top")
    mib = format_bytes(MODEL.state_bytes, "MiB", decimals=0)
    fixed = f"DeltaNet state, flat: {mib} at any length"
    note(ax, fixed, (right, float(state[-1])), -4, 4, ha="right", va="bottom",
         color=ROLE_COLORS["state"])  # fmt: skip
    ax.set_xlim(0, right)
    top = float(pure.max()) * 1.08
    ax.set_ylim(-0.03 * top, top)  # zero off the frame: the flat state line shows clear of it
    ax.set_xticks(np.linspace(0, right, 9))
    ax.set_xlabel("context length (thousands of tokens, 1K = 1,024)")
    ax.set_ylabel("memory per sequence (GiB, 2$^{30}$ bytes)")
    ax.legend(loc="upper left", frameon=False, fontsize=10)
    return fig
