"""Shared figure style: the legend of meanings, palette and figure factory."""

import ast
import re
from pathlib import Path

import pytest
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lesson_lib.figures._style import (
    MEANINGS,
    NEUTRALS,
    PALETTE,
    ROLE_COLORS,
    SAME_IDEA,
    draw_key,
    fabric_color,
    legend_below,
    new_figure,
    note,
    two_panels,
)
from lesson_lib.model.specimen import FAST, FAST_RING, INTER_NODE, SLOW


def test_new_figure_returns_figure_and_axes():
    """A Figure with exactly one axes, sized as asked."""
    fig, ax = new_figure(5, 3)
    assert isinstance(fig, Figure)
    assert fig.axes == [ax]
    assert tuple(fig.get_size_inches()) == (5, 3)


def test_two_panels_stack_two_axes():
    """Two axes, the first above the second, on a figure of the asked height."""
    fig, top, bottom = two_panels(6.0, sharex=True)
    assert fig.axes == [top, bottom]
    assert tuple(fig.get_size_inches())[1] == 6.0
    assert top.get_position().y0 > bottom.get_position().y0


def test_fabric_colours_name_the_lesson_fabrics_and_cycle_the_others():
    """The fast and slow fabrics keep their meaning's colour; others cycle through ``others``."""
    assert fabric_color(FAST, 5) == PALETTE["green"]
    assert fabric_color(SLOW, 0) == PALETTE["purple"]
    assert fabric_color(INTER_NODE, 0) == NEUTRALS[2]
    assert fabric_color(FAST_RING, 3, ("#111111", "#222222")) == "#222222"


def test_note_and_legend_below():
    """A note sits at its offset in points, 10 pt; the key hangs under the axes without a frame."""
    _fig, ax = new_figure()
    ax.plot([0, 1], [0, 1], label="line")
    note(ax, "here", (0.5, 0.5), 4, -3, ha="right")
    (text,) = ax.texts
    assert text.get_text() == "here" and text.get_fontsize() == 10
    assert text.xyann == (4, -3) and text.anncoords == "offset points"
    legend_below(ax, -0.2, ncols=2)
    legend = ax.get_legend()
    assert not legend.get_frame_on()
    assert [t.get_text() for t in legend.get_texts()] == ["line"]
    assert legend.get_texts()[0].get_fontsize() == 10


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


def test_draw_key_bad_input():
    """Unknown anchors and handles are refused."""
    fig = Figure(figsize=(6, 3))
    with pytest.raises(ValueError, match="loc must be"):
        draw_key(fig, _handles(), x=0, y=0, loc="best")
    with pytest.raises(ValueError, match="handles must be"):
        draw_key(fig, [fig.text(0, 0, "a text is no handle")], x=0, y=0)


def test_each_colour_has_one_meaning():
    """Two meanings share a colour only when SAME_IDEA says they are one idea.

    Seen in the figures before the scheme: vermillion meant latency, the slow
    fabric, the ring and a received chunk at once.
    """
    by_colour: dict[str, set[str]] = {}
    for name, meaning in MEANINGS.items():
        by_colour.setdefault(meaning.colour, set()).add(name)
    shared = [names for names in by_colour.values() if len(names) > 1]
    assert all(frozenset(names) in SAME_IDEA for names in shared), shared
    assert ROLE_COLORS == {name: m.colour for name, m in MEANINGS.items()}
    assert set(ROLE_COLORS.values()) <= set(PALETTE.values())
    assert not set(NEUTRALS) & set(ROLE_COLORS.values())
    for pair in [("latency", "slow"), ("latency", "ring"), ("fast", "decode"), ("kv", "latency")]:
        assert ROLE_COLORS[pair[0]] != ROLE_COLORS[pair[1]], pair


FIGURES = Path(__file__).resolve().parents[1] / "lesson_lib" / "figures"
_COLOUR_KWARGS = {
    "color", "colors", "facecolor", "edgecolor", "ecolor", "mec", "mfc", "markeredgecolor",
    "markerfacecolor", "foreground",
}  # fmt: skip
_HEX = re.compile(r"#[0-9A-Fa-f]{3,8}\b")


def stray_colours(source: str) -> list[str]:
    """Colours a figure module's source names itself instead of taking from the scheme.

    A hex code anywhere, a use of ``PALETTE``, or a colour keyword given a
    string other than black, white or none (ink and paper, which mean
    nothing).
    """
    stray = [f"hex {m}" for m in _HEX.findall(source)]
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "PALETTE":
            stray.append(f"PALETTE at line {node.lineno}")
        if isinstance(node, ast.keyword) and node.arg in _COLOUR_KWARGS:
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                if value.value.lower() not in ("black", "white", "none"):
                    stray.append(f"{node.arg}={value.value!r} at line {value.lineno}")
    return stray


@pytest.mark.parametrize("path", sorted(FIGURES.glob("*.py")), ids=lambda p: p.name)
def test_figure_modules_take_colours_from_the_scheme(path):
    """No figure module but the style module names a colour of its own."""
    if path.name == "_style.py":
        return
    assert stray_colours(path.read_text(encoding="utf-8")) == []


def test_stray_colours_are_found():
    """Hex codes, PALETTE and named colours are caught; ink, paper and the scheme are not."""
    source = (
        'ax.plot(x, color="#E69F00")\nax.bar(x, color=PALETTE["sky"])\n'
        'ax.plot(x, mec="tab:red")\nax.plot(x, color="black", mfc="white")\n'
        'ax.plot(x, color=ROLE_COLORS["fast"])\n'
    )
    assert sorted(stray_colours(source)) == [
        "PALETTE at line 2",
        "color='#E69F00' at line 1",
        "hex #E69F00",
        "mec='tab:red' at line 3",
    ]


def test_text_shade_darkens_each_channel_by_thirty_percent():
    """#CC79A7 = (204, 121, 167) / 255; times 0.7: (0.56, 0.3322, 0.4585)."""
    from lesson_lib.figures._style import text_shade

    assert text_shade("#CC79A7") == pytest.approx((0.56, 0.33216, 0.45847), abs=1e-4)
