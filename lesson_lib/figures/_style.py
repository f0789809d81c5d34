"""Shared look of every figure: a colour-blind-safe palette and a figure factory."""

from __future__ import annotations

from matplotlib.figure import Figure

#: Okabe-Ito palette, distinguishable with the common colour-vision deficiencies.
PALETTE: dict[str, str] = {
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "black": "#000000",
    "grey": "#999999",
}

#: The same colour means the same thing in every figure.
ROLE_COLORS: dict[str, str] = {
    "weights": PALETTE["blue"],
    "kv": PALETTE["orange"],
    "state": PALETTE["purple"],
    "free": PALETTE["grey"],
    "compute": PALETTE["blue"],
    "latency": PALETTE["vermillion"],
    "bandwidth": PALETTE["sky"],
    "fast": PALETTE["green"],
    "slow": PALETTE["vermillion"],
    "decode": PALETTE["green"],
    "prefill": PALETTE["orange"],
}


def new_figure(
    width: float = 7.0, height: float = 4.0, **subplot_kw: object
) -> tuple[Figure, object]:
    """A figure with one axes, without touching ``pyplot``'s global state.

    Parameters
    ----------
    width, height : float
        Size in inches.
    **subplot_kw
        Passed to :meth:`~matplotlib.figure.Figure.add_subplot`.

    Returns
    -------
    tuple
        ``(figure, axes)``.
    """
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot(**subplot_kw)
    ax.grid(True, alpha=0.3)
    return fig, ax
