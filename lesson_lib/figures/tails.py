"""The tails page's figure: a token's extra time against the ranks, jitter against a straggler."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, ScalarFormatter

from lesson_lib.figures._style import INK, NEUTRALS, ROLE_COLORS, legend_below, new_figure
from lesson_lib.model.specimen import JITTER_BUSY, MODEL
from lesson_lib.model.tails import persistent_straggler_cost, slowest_rank_wait, token_time_quantile
from lesson_lib.model.units import MS, format_seconds


def tails_figure(jitter_s: float = JITTER_BUSY, max_n: int = 64) -> Figure:
    """Extra time per token against the ranks: jitter's mean and p99, and a persistent straggler.

    The straggler is one rank late by ``jitter_s`` at every collective, flat in ``n``.

    Parameters
    ----------
    jitter_s : float, default :data:`~lesson_lib.model.specimen.JITTER_BUSY`
        Mean per-rank delay, and the straggler's delay, seconds.
    max_n : int, default 64
        Most ranks drawn (powers of two from 1).

    Returns
    -------
    matplotlib.figure.Figure
    """
    ns = [2**k for k in range(int(np.log2(max_n)) + 1)]
    per_token = MODEL.allreduces_per_token / MS
    fig, ax = new_figure(height=4.4, margins=(0.0839, 0.2419, 0.9478, 0.9452))
    for law, colour, style in (("exponential", INK, "-"), ("lognormal", NEUTRALS[3], "--")):
        means = [per_token * slowest_rank_wait(n, jitter_s, law) for n in ns]
        ax.plot(ns, means, style, marker="o", ms=4, color=colour, label=f"jitter, {law}: mean")
    p99 = [token_time_quantile(0.99, n, jitter_s) / MS for n in ns]
    ax.plot(ns, p99, ":", marker="^", ms=4, color=INK, label="jitter, exponential: p99")
    straggler = persistent_straggler_cost(jitter_s) / MS
    ax.axhline(straggler, color=ROLE_COLORS["latency"], lw=1.6, label="one straggler, every time")
    ax.axvline(4, color=ROLE_COLORS["free"], ls=":", lw=1)
    example = "the worked example:\n4 GPUs"
    ax.text(4.2, 0.97, example, fontsize=10, va="top", transform=ax.get_xaxis_transform())
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ns))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_ylim(0, None)
    ax.set_xlabel("ranks in each collective, n (log scale)")
    ax.set_ylabel("extra time per token (ms)")
    ax.set_title(
        f"{MODEL.allreduces_per_token} collectives, each rank late by "
        f"{format_seconds(jitter_s, 'us')} on average",
        fontsize=11,
    )
    legend_below(ax, -0.16, ncols=2)
    return fig
