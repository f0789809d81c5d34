"""Figures of the KV-transfer chapter: the hand-off against the prefill, and one request's timeline."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from lesson_lib.figures._style import FIGURE_WIDTH_IN, INK, ROLE_COLORS, new_figure
from lesson_lib.model.kv_links import GPUS, LINKS, LINKS_BY_KEY, link_handoff
from lesson_lib.model.specimen import MODEL, PROMPT_TOKENS
from lesson_lib.model.units import format_count, format_seconds

#: Each link's colour, fastest first.
LINK_COLORS: dict[str, str] = {
    "nvlink": ROLE_COLORS["fast"],
    "nic": ROLE_COLORS["network"],
    "ethernet": ROLE_COLORS["slow"],
}


def handoff_vs_context_figure() -> Figure:
    """The prefill and the cache shipped after it on each of ``LINKS``, against the prompt's length.

    Both instances are 4 GPUs (``GPUS``) of tensor parallelism.

    Returns
    -------
    matplotlib.figure.Figure
        Log-log: seconds against prompt tokens (128 to the specimen's context).
    """
    prefill_gpus = decode_gpus = GPUS
    contexts = [2**k for k in range(7, 19)]
    fig, ax = new_figure(FIGURE_WIDTH_IN, 5.6, margins=(0.1682, 0.2975, 0.9714, 0.957))
    handoffs = {
        link.key: [link_handoff(link, c, prefill_gpus, decode_gpus) for c in contexts]
        for link in LINKS
    }
    first = next(iter(handoffs.values()))
    prefill = [h.prefill.total_s for h in first]
    ax.plot(contexts, prefill, color=ROLE_COLORS["prefill"], lw=2.6,
            label=f"prefill on {prefill_gpus} GPUs")  # fmt: skip
    for link in LINKS:
        bulk = [h.bulk.time_s for h in handoffs[link.key]]
        ax.plot(contexts, bulk, color=LINK_COLORS[link.key], lw=2,
                label=f"shipped after it: {link.label}")  # fmt: skip
    exposed = [h.streamed.exposed_s for h in handoffs["ethernet"]]
    ax.plot(contexts, exposed, color=LINK_COLORS["ethernet"], lw=1.6, ls="--",
            label="streamed by layer, shared port: what it adds")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = [128, 1024, 8192, 65_536, MODEL.max_context]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: format_count(v)))
    decades = [10.0**k for k in range(-5, 2)]
    ax.yaxis.set_major_locator(FixedLocator(decades))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_seconds(v, decimals=0)))
    ax.set_ylim(5e-5, 20)
    ax.tick_params(labelsize=10)
    ax.set_xlabel(f"prompt (tokens), {decode_gpus} decode GPUs", fontsize=10)
    ax.set_ylabel("time (log scale)", fontsize=10)
    ax.set_title("The cache's hand-off against the prefill it follows", fontsize=11)
    fig.legend(fontsize=10, loc="outside lower center", ncols=1, frameon=False)
    return fig


def handoff_timeline_figure() -> Figure:
    """One request: its prefill, its cache shipped after it over the NIC, and its cache streamed.

    The lesson's prompt (``PROMPT_TOKENS``), 4 prefill and 4 decode GPUs (``GPUS``).

    Returns
    -------
    matplotlib.figure.Figure
        Three bars on one time axis (ms), each labelled with its span.
    """
    prompt_tokens, link, prefill_gpus, decode_gpus = PROMPT_TOKENS, "nic", GPUS, GPUS
    chosen = LINKS_BY_KEY[link]
    h = link_handoff(chosen, prompt_tokens, prefill_gpus, decode_gpus)
    prefill_ms = h.prefill.total_s * 1e3
    bulk_ms = h.bulk.time_s * 1e3
    streamed_end = h.streamed.finish_s * 1e3
    exposed = format_seconds(h.streamed.exposed_s, "ms", decimals=3)
    bars = (  # label, start, width, colour, note
        ("prefill", 0.0, prefill_ms, ROLE_COLORS["prefill"],
         f"{format_seconds(h.prefill.total_s, 'ms')}"),
        ("shipped after it", prefill_ms, bulk_ms, LINK_COLORS[link],
         f"+ {format_seconds(h.bulk.time_s, 'ms')}"),
        ("streamed by layer", 0.0, streamed_end, LINK_COLORS[link],
         f"+ {exposed} after the prefill"),
    )  # fmt: skip
    fig, ax = new_figure(FIGURE_WIDTH_IN, 3.4, margins=(0.2796, 0.1987, 0.9918, 0.8707))
    for row, (label, start, width, color, note) in enumerate(bars):
        y = len(bars) - 1 - row
        hatch = "//" if label == "streamed by layer" else None
        ax.barh(y, width, left=start, height=0.55, color=color, alpha=0.85, hatch=hatch,
                edgecolor="white")  # fmt: skip
        ax.text(start + width, y + 0.36, note, ha="right", va="bottom", fontsize=10,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})  # fmt: skip
    ax.axvline(prefill_ms, color=INK, lw=1, ls=":", zorder=0)
    ax.set_yticks(np.arange(len(bars))[::-1], [b[0] for b in bars], fontsize=10)
    ax.set_ylim(-0.5, len(bars) - 0.1)
    ax.set_xlim(0, max(prefill_ms + bulk_ms, streamed_end) * 1.02)
    ax.tick_params(labelsize=10)
    ax.set_xlabel(
        f"ms from the prompt's arrival: {format_count(prompt_tokens)} tokens,\n"
        f"{prefill_gpus} prefill and {decode_gpus} decode GPUs",
        fontsize=10,
    )
    ax.set_title(f"One request's hand-off over\n{chosen.label}", fontsize=11)
    return fig
