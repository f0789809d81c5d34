"""Shared look of every figure: a colour-blind-safe palette and a figure factory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.text import Text

from lesson_lib.model.specimen import FAST, SLOW
from lesson_lib.model.specs import Fabric

#: Okabe-Ito palette, distinguishable with the common colour-vision deficiencies (Okabe and Ito,
#: "Color Universal Design", 2008), with five dark colours of Paul Tol's colour-blind-safe "muted"
#: scheme (https://personal.sron.nl/~pault/) for meanings the eight cannot cover.
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
    "indigo": "#332288",
    "teal": "#44AA99",
    "olive": "#999933",
    "wine": "#882255",
    "rose": "#CC6677",
    "forest": "#117733",
}


@dataclass(frozen=True)
class Meaning:
    """What one colour stands for in every figure of the book."""

    #: The colour, a hex code of :data:`PALETTE`.
    colour: str
    #: What it stands for, in words a reader sees in a legend.
    means: str


#: The book's legend of colours. A colour stands for one idea in every figure and explorer. Names
#: that share a colour are one idea (:data:`SAME_IDEA`); the ring all-reduce's halves take its
#: colour with other line styles. What has no meaning of its own (GPU counts, pipeline stages) is
#: drawn in :data:`NEUTRALS`, with markers or labels.
MEANINGS: dict[str, Meaning] = {
    "compute": Meaning(PALETTE["blue"], "the GPU's own work: reading the weights from HBM"),
    "weights": Meaning(PALETTE["blue"], "the weights, which each step's compute reads"),
    "prefill": Meaning(PALETTE["blue"], "a prefill: the GPU's own work on a whole prompt"),
    "latency": Meaning(
        PALETTE["vermillion"], "latency: a message's fixed cost (launch, synchronisation, hops)"
    ),
    "bandwidth": Meaning(PALETTE["sky"], "wire time: a message's bytes over the bandwidth"),
    "kv": Meaning(PALETTE["orange"], "the KV cache"),
    # Dark: the state is drawn as a thin line or sliver beside the KV cache's orange.
    "state": Meaning(PALETTE["forest"], "the linear-attention (DeltaNet) state"),
    "free": Meaning(PALETTE["grey"], "free memory, an idle GPU, a reference line"),
    "fast": Meaning(PALETTE["green"], "the fast fabric (NVLink class)"),
    "slow": Meaning(PALETTE["purple"], "the slow fabric (PCIe class)"),
    "network": Meaning(PALETTE["wine"], "a network between nodes (NIC)"),
    "decode": Meaning(PALETTE["black"], "the decode message: one hidden vector per token"),
    "ring": Meaning(PALETTE["teal"], "the ring all-reduce (and its halves)"),
    "two_shot": Meaning(PALETTE["indigo"], "the two-shot all-reduce"),
    "one_shot": Meaning(PALETTE["olive"], "the one-shot all-reduce"),
    "all_to_all": Meaning(PALETTE["rose"], "the all-to-all of expert parallelism"),
}

#: Names that are one idea and so share a colour; every other pair differs.
SAME_IDEA: tuple[frozenset[str], ...] = (frozenset({"compute", "weights", "prefill"}),)

#: Each meaning's colour, the short form figure and explorer code uses.
ROLE_COLORS: dict[str, str] = {name: m.colour for name, m in MEANINGS.items()}

#: Greys, light to dark, for what a figure tells apart without a meaning of
#: its own; none is the colour of a meaning.
NEUTRALS: tuple[str, ...] = ("#D9D9D9", "#B3B3B3", "#808080", "#595959", "#333333")

#: Colour of text and edges, which carries no meaning.
INK: str = PALETTE["black"]

#: Fill of a node's box in a cluster drawing, a shade behind its GPUs.
NODE_FILL: str = "#F4F4F4"


#: Width a figure's image can take on the built site in CSS px at a 1280 px viewport, the article's
#: 688 px text column less the figure's 8 px padding each side (measured in Debian's Chromium on
#: ``_build/html``; the browser test ``tests/browser/test_browser_figure_text.py`` checks it still
#: holds). A figure wider than this is scaled down to it.
COLUMN_PX: float = 672.0

#: The smallest body text of the built site in CSS px, that of table cells (0.85rem of 16 px in
#: ``tools/site/tables.css``; paragraphs are 16 px), measured in the same browser and checked by the
#: same test. No text in a figure should be shown smaller than this.
TEXT_FLOOR_PX: float = 13.6

#: Width a figure's image takes on a 390 px phone in CSS px, the article column less its padding and
#: the figure's (measured in Debian's Chromium on ``_build/html`` at a 390 x 900 viewport). Every
#: figure is scaled down to it there.
PHONE_COLUMN_PX: float = 342.0

#: The smallest figure text the book shows on a phone, CSS px. A goal of
#: the lesson's own, two thirds of the desktop floor :data:`TEXT_FLOOR_PX`
#: (a phone is held nearer than a screen), not a published standard.
PHONE_TEXT_FLOOR_PX: float = 9.0

#: Default width of a figure, inches. With 10 pt text, the smallest the figures use, a figure stays
#: readable on a phone up to a natural width of 10 x 100 / 72 x 342 / 9 = 528 px; 5.1 in at 100 px an
#: inch is 510 px (on a desktop, its text at 13.9 px).
FIGURE_WIDTH_IN: float = 5.1

#: CSS px per inch of figure. The book's SVGs are sized as a PNG at matplotlib's default 100 dpi
#: would be (``lesson_lib.figures.book_svg``), without a tight crop.
BOOK_DPI: float = 100.0


def new_figure(
    width: float = FIGURE_WIDTH_IN,
    height: float = 4.0,
    margins: tuple[float, float, float, float] | None = None,
    **subplot_kw: object,
) -> tuple[Figure, object]:
    """A figure with one axes, without touching ``pyplot``'s global state.

    Parameters
    ----------
    width, height : float
        Size in inches.
    margins : tuple of float, optional
        The axes' left, bottom, right and top (figure fractions) where constrained layout (the
        default) puts them: fixed, the figure is drawn without a layout pass, in half the time.
    **subplot_kw
        Passed to :meth:`~matplotlib.figure.Figure.add_subplot`.

    Returns
    -------
    tuple
        ``(figure, axes)``.
    """
    fig = Figure(figsize=(width, height), layout=None if margins else "constrained")
    if margins:
        fig.subplots_adjust(*margins)
    ax = fig.add_subplot(**subplot_kw)
    ax.grid(True, alpha=0.3)
    return fig, ax


def two_panels(
    height: float,
    boxes: tuple[tuple[float, float, float, float], tuple[float, float, float, float]]
    | None = None,
    **subplots_kw: object,
) -> tuple[Figure, Axes, Axes]:
    """A figure with two axes, one above the other, :data:`FIGURE_WIDTH_IN` wide, no ``pyplot``.

    Parameters
    ----------
    height : float
        Size in inches.
    boxes : pair of tuples of float, optional
        Each axes' left, bottom, right and top (figure fractions), the top one first, where
        constrained layout (the default) puts them: fixed, as ``margins`` in :func:`new_figure`.
    **subplots_kw
        Passed to :meth:`~matplotlib.figure.Figure.subplots` (``sharex``, ``height_ratios``).

    Returns
    -------
    tuple
        ``(figure, top axes, bottom axes)``.
    """
    fig = Figure(figsize=(FIGURE_WIDTH_IN, height), layout=None if boxes else "constrained")
    top, bottom = fig.subplots(2, 1, **subplots_kw)
    for ax, (left, low, right, high) in zip((top, bottom), boxes or (), strict=False):
        ax.set_position((left, low, right - left, high - low))
    return fig, top, bottom


def fabric_color(fabric: Fabric, index: int, others: Sequence[str] = NEUTRALS[2:]) -> str:
    """The colour of a fabric's line: the fast or the slow fabric's own, else one of ``others``.

    Parameters
    ----------
    fabric : Fabric
    index : int
        Its place among the fabrics drawn, which picks (cycling) from ``others``.
    others : sequence of str, default the three darker greys
        Colours of fabrics other than the lesson's two.

    Returns
    -------
    str
    """
    known = {FAST: ROLE_COLORS["fast"], SLOW: ROLE_COLORS["slow"]}
    return known.get(fabric, others[index % len(others)])


def text_shade(colour: str) -> tuple[float, float, float]:
    """``colour`` darkened by 30 %, for text in a line's colour: 4.5:1 or more on white.

    Parameters
    ----------
    colour : str
        A palette colour, e.g. ``ROLE_COLORS["slow"]``.

    Returns
    -------
    tuple of float
        RGB in 0 .. 1.
    """
    return tuple(0.7 * c for c in to_rgb(colour))  # type: ignore[return-value]


def legend_below(ax: Axes, y: float, **kw: object) -> None:
    """The axes' key centred under it, 10 pt, no frame: a key there hides no line or point.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Whose key.
    y : float
        Top of the key, axes fraction (negative: under the axes).
    **kw
        Passed to :meth:`~matplotlib.axes.Axes.legend` (``ncols``, ``handles``).
    """
    ax.legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, y), frameon=False, **kw)


def note(ax: Axes, text: str, xy: tuple[float, float], dx: float, dy: float, **kw: object) -> None:
    """A text ``(dx, dy)`` points from the point ``xy``, 10 pt unless ``kw`` says otherwise.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    text : str
    xy : tuple of float
        The point, in data coordinates unless ``xycoords`` says otherwise.
    dx, dy : float
        Offset from the point, points.
    **kw
        Passed to :meth:`~matplotlib.axes.Axes.annotate` (``ha``, ``color``).
    """
    ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", **{"fontsize": 10, **kw})


def draw_key(
    fig: Figure,
    handles: Sequence[Artist],
    *,
    x: float,
    y: float,
    loc: str = "upper left",
    ncols: int = 1,
    fontsize: float = 8,
) -> list[Text]:
    """A legend laid out by arithmetic instead of measuring its texts.

    Like ``fig.legend(handles=...)``, but each entry's place comes from the font size and the number
    of characters, so a figure with fixed margins knows the key's size before it is drawn.

    Parameters
    ----------
    fig : Figure
        Where to draw (in figure coordinates).
    handles : sequence of Patch, Line2D or BarContainer
        Legend proxies, each one's label its text (which may have several lines).
    x, y : float
        The anchor point, figure fraction.
    loc : {"upper left", "lower center"}, default "upper left"
        Which point of the key sits at ``(x, y)``.
    ncols : int, default 1
        Columns, filled top to bottom as a legend fills them.
    fontsize : float, default 8
        Size of the labels, points; the spacing follows it.

    Returns
    -------
    list of matplotlib.text.Text
        The labels, in the order of ``handles``.

    Raises
    ------
    ValueError
        If ``loc`` is not one of the two anchors or a handle is of another kind.
    """
    if loc not in ("upper left", "lower center"):
        raise ValueError(f"loc must be 'upper left' or 'lower center', got {loc!r}")
    width_in, height_in = fig.get_size_inches()
    em_x, em_y = fontsize / 72 / width_in, fontsize / 72 / height_in
    labels = [h.get_label() for h in handles]
    # Columns as a legend fills them: the first len % ncols get one entry more.
    ncols = max(1, min(ncols, len(handles)))
    rows, extra = divmod(len(handles), ncols)
    sizes = [rows + 1] * extra + [rows] * (ncols - extra)
    firsts = [sum(sizes[:c]) for c in range(ncols)]
    columns = [range(first, first + size) for first, size in zip(firsts, sizes, strict=True)]
    # Widths and heights in em: swatch 2, gap 0.8, 0.6 per character, 2 between columns;
    # 1.2 per line of text and 0.5 between entries.
    widths = [
        2.8 + 0.6 * max(len(line) for i in col for line in labels[i].split("\n")) for col in columns
    ]
    heights = [[1.2 * (labels[i].count("\n") + 1) for i in col] for col in columns]
    span = sum(widths) + 2 * (ncols - 1)
    tall = max(sum(h) + 0.5 * (len(h) - 1) for h in heights)
    left = x if loc == "upper left" else x - span * em_x / 2
    top = y if loc == "upper left" else y + tall * em_y
    texts = []  # the columns hold consecutive entries, so this is the order of handles
    for c, col in enumerate(columns):
        x0 = left + (sum(widths[:c]) + 2 * c) * em_x
        y0 = top
        for i, height in zip(col, heights[c], strict=True):
            middle = y0 - height * em_y / 2
            handle = handles[i]
            if isinstance(handle, BarContainer):  # as ``get_legend_handles_labels`` gives bars
                handle = handle.patches[0]
            if isinstance(handle, Patch):
                swatch: Artist = Rectangle((x0, middle - 0.35 * em_y), 2 * em_x, 0.7 * em_y)
                swatch.update_from(handle)
            elif isinstance(handle, Line2D):
                swatch = Line2D([x0, x0 + em_x, x0 + 2 * em_x], [middle] * 3)
                swatch.update_from(handle)
                swatch.set_markevery([1])  # one marker, in the middle, as a legend draws it
            else:
                raise ValueError(
                    f"handles must be Patch, Line2D or BarContainer, got {type(handle).__name__}"
                )
            # update_from copied the handle's transform and clipping too
            swatch.set_transform(fig.transFigure)
            swatch.set_clip_on(False)
            fig.add_artist(swatch)
            texts.append(
                fig.text(x0 + 2.8 * em_x, middle, labels[i], fontsize=fontsize, va="center")
            )
            y0 -= (height + 0.5) * em_y
    return texts
