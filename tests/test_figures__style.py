"""Shared figure style: palette and figure factory."""

import pytest
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lesson_lib.figures._style import (
    PALETTE,
    ROLE_COLORS,
    draw_key,
    new_figure,
)


def test_new_figure_returns_figure_and_axes():
    """A Figure with exactly one axes, sized as asked."""
    fig, ax = new_figure(5, 3)
    assert isinstance(fig, Figure)
    assert fig.axes == [ax]
    assert tuple(fig.get_size_inches()) == (5, 3)


def test_roles_use_the_colour_blind_safe_palette():
    """Every role colour comes from the Okabe-Ito palette."""
    assert set(ROLE_COLORS.values()) <= set(PALETTE.values())
    assert ROLE_COLORS["fast"] != ROLE_COLORS["slow"]


def _handles():
    """Five legend proxies: three patches, a dashed line with a marker, a hatched patch."""
    return [
        Patch(facecolor=PALETTE["blue"], label="one"),
        Patch(facecolor=PALETTE["orange"], label="two"),
        Patch(facecolor=PALETTE["green"], label="three\nlines"),
        Line2D([], [], color=PALETTE["vermillion"], ls="--", marker=">", label="four"),
        Patch(facecolor="white", edgecolor=PALETTE["grey"], hatch="///", label="five"),
    ]


def test_draw_key_fills_columns_like_a_legend():
    """Five entries in four columns: the first column takes two, top to bottom; texts in order."""
    fig = Figure(figsize=(8, 3))
    texts = draw_key(fig, _handles(), x=0.5, y=0.05, loc="lower center", ncols=4)
    assert [t.get_text() for t in texts] == ["one", "two", "three\nlines", "four", "five"]
    xs = [t.get_position()[0] for t in texts]
    ys = [t.get_position()[1] for t in texts]
    assert xs[0] == xs[1] < xs[2] < xs[3] < xs[4]
    assert ys[1] < ys[0] and ys[0] > 0.05
    left = min(a.get_x() for a in fig.artists if isinstance(a, Patch))
    assert 0.05 < left < xs[0] < 0.5 < xs[4] < 0.95  # centred on x = 0.5


def test_draw_key_swatches_copy_the_handles():
    """Each swatch has its handle's colours, hatch, line style and one marker, and is not clipped."""
    fig = Figure(figsize=(6, 3))
    handles = _handles()
    draw_key(fig, handles, x=0.1, y=0.9)
    patches = [a for a in fig.artists if isinstance(a, Patch)]
    (line,) = [a for a in fig.artists if isinstance(a, Line2D)]
    assert [p.get_facecolor() for p in patches] == [
        h.get_facecolor() for h in handles if isinstance(h, Patch)
    ]
    assert patches[-1].get_hatch() == "///"
    assert line.get_linestyle() == "--" and line.get_marker() == ">"
    assert list(line.get_markevery()) == [1]
    assert not any(a.get_clip_on() for a in [*patches, line])
    assert all(Artist.get_transform(a) is fig.transFigure for a in [*patches, line])


def test_draw_key_frame_and_bad_input():
    """A frame is one white box behind the entries; unknown anchors and handles are refused."""
    fig = Figure(figsize=(6, 3))
    draw_key(fig, _handles()[:2], x=0.1, y=0.9, frame=True)
    box = fig.artists[0]
    assert box.get_facecolor()[:3] == (1, 1, 1) and len(fig.artists) == 3
    with pytest.raises(ValueError, match="loc must be"):
        draw_key(fig, _handles(), x=0, y=0, loc="best")
    with pytest.raises(ValueError, match="handles must be"):
        draw_key(fig, [fig.text(0, 0, "a text is no handle")], x=0, y=0)
