"""Batching figure: curves stop at memory, dots at the crossover batch."""

import numpy as np
from matplotlib.colors import to_rgb
from numpy.testing import assert_allclose

from lesson_lib.figures.batching import batch_figure


def test_two_panels_and_curves():
    """Top: tokens/s; bottom: ms per token. The 4-GPU fast curve ends at 676 sequences."""
    fig = batch_figure()
    top, bottom = fig.axes
    assert top.get_position().y0 > bottom.get_position().y1
    assert "tokens/s" in top.get_ylabel() and "ms" in bottom.get_ylabel()
    (four_fast,) = [line for line in top.get_lines() if line.get_label() == "4 GPUs, fast fabric"]
    assert four_fast.get_xdata()[-1] == 676


def test_memory_full_is_a_square_on_each_curves_own_end():
    """One square per curve and panel, at that curve's last point and in its colour.

    A tall bar at the 2-GPU curve's end (274 sequences) crossed the 4-GPU
    slow curve there and read as its mark; a square sits on one curve only.
    """
    for ax in batch_figure().axes:
        curves = [line for line in ax.get_lines() if line.get_linestyle() in ("-", "--")]
        squares = [line for line in ax.get_lines() if line.get_marker() == "s"]
        assert len(squares) == len(curves) == 3
        for curve, square in zip(curves, squares, strict=True):
            assert square.get_xdata()[0] == curve.get_xdata()[-1]
            assert square.get_ydata()[0] == curve.get_ydata()[-1]
            assert square.get_color() == curve.get_color()
        assert not [line for line in ax.get_lines() if line.get_marker() == "|"]


def test_crossover_dot_at_293():
    """The dot on the 4-GPU fast curve sits at 293 sequences (alpha B / 1.5 x 10 KiB)."""
    bottom = batch_figure().axes[1]
    dots = [line for line in bottom.get_lines() if line.get_marker() == "o"]
    assert_allclose(dots[0].get_xdata()[0], 293)


def test_crossover_dots_are_hollow_and_clear_of_the_squares():
    """Hollow dots, filled squares; in each panel every two marks are at least 4 px apart.

    The dots are on the bottom panel only: on the top one the slow fabric's (208 sequences)
    sat where its band and the 2-GPU line meet, 16 px left of the 2-GPU curve's square (274).
    A mark reaches (size + edge) / 2 pt from its centre, at 100 px an inch.
    """
    fig = batch_figure()
    fig.draw_without_rendering()
    assert not [line for line in fig.axes[0].get_lines() if line.get_marker() == "o"]
    for ax in fig.axes:
        marks = [line for line in ax.get_lines() if line.get_marker() in ("o", "s")]
        dots = [line for line in marks if line.get_marker() == "o"]
        assert all(line.get_markerfacecolor() == "white" for line in dots)
        assert all(line.get_markerfacecolor() != "white" for line in marks if line not in dots)
        placed = [
            (*ax.transData.transform(line.get_xydata()[0]),
             (line.get_markersize() + line.get_markeredgewidth()) / 2 * 100 / 72)
            for line in marks
        ]  # fmt: skip
        for i, (x, y, reach) in enumerate(placed):
            for u, v, other in placed[i + 1 :]:
                assert max(abs(x - u), abs(y - v)) - reach - other >= 4.0


def test_each_crossover_dot_is_labelled_in_its_colour():
    """Each dot is joined to a label in its curve's colour naming its batch: 293 and 208."""
    bottom = batch_figure().axes[1]
    dots = [line for line in bottom.get_lines() if line.get_marker() == "o"]
    labels = {tuple(t.xy): t for t in bottom.texts if t.get_text().startswith("bandwidth-bound")}
    assert [round(d.get_xdata()[0]) for d in dots] == [293, 208]
    for dot in dots:
        label = labels[tuple(dot.get_xydata()[0])]
        assert label.get_text() == f"bandwidth-bound\nfrom {round(dot.get_xdata()[0])}"
        assert _same_hue_darker(label.get_color(), dot.get_markeredgecolor())
        assert label.arrow_patch is not None  # a leader line from the label to the dot


def _contrast_on_white(rgb):
    """WCAG 2 contrast ratio of a colour against white: 1.05 / (relative luminance + 0.05)."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 1.05 / (luminance + 0.05)


def _same_hue_darker(text, line):
    """Text in its line's colour scaled down, readable on white (WCAG AA, 4.5:1)."""
    text, line = to_rgb(text), to_rgb(line)
    ratios = {round(t / c, 6) for t, c in zip(text, line, strict=True) if c > 0}
    return len(ratios) == 1 and ratios.pop() < 1 and _contrast_on_white(text) >= 4.5


def test_label_colours_pass_contrast_where_the_line_colours_do_not():
    """The palette's green (#009E73) and pink on white are below 4.5:1, hence the darker text."""
    assert _contrast_on_white(to_rgb("#009E73")) < 4.5


def _curves(ax):
    return [line for line in ax.get_lines() if line.get_linestyle() != "None"]


def test_each_curve_is_named_beside_itself_in_its_colour():
    """On the top panel each curve's name is in its colour and nearer to it than to any other.

    Distance from a name's box to a curve: the least over the curve's drawn points, px. A
    name by the 2-GPU square (274 sequences) could otherwise read as the slow band's, 1,000
    tokens/s (18 px) above it.
    """
    fig = batch_figure()
    fig.draw_without_rendering()
    top = fig.axes[0]
    assert top.get_legend() is None  # the names replace the key
    names = {t.get_text().replace("\n", " "): t for t in top.texts if "GPUs" in t.get_text()}
    assert sorted(names) == ["2 GPUs, fast", "4 GPUs, fast", "4 GPUs, slow"]
    curves = {line.get_label().removesuffix(" fabric"): line for line in _curves(top)}
    xs = np.arange(*top.bbox.intervalx, 2)  # each curve as drawn, every 2 px across
    drawn = {
        c: np.interp(xs, *top.transData.transform(line.get_xydata()).T, left=np.nan, right=np.nan)
        for c, line in curves.items()
    }
    for name, text in names.items():
        box = text.get_window_extent()

        def distance(c, box=box):
            dx = np.maximum(0, np.maximum(box.x0 - xs, xs - box.x1))
            dy = np.maximum(0, np.maximum(box.y0 - drawn[c], drawn[c] - box.y1))
            return np.nanmin(np.hypot(dx, dy))

        nearest = min(curves, key=distance)
        assert nearest == name, (name, {c: round(distance(c)) for c in curves})
        assert _same_hue_darker(text.get_color(), curves[name].get_color())


def test_the_curves_that_run_together_stay_apart():
    """Up to about 200 sequences the 2-GPU fast and 4-GPU slow curves meet: the slow one is a
    wide band (5 pt) under the thin (2 pt) dashed 2-GPU line, which a white edge wider than it
    keeps seen on the band, in both panels."""
    for ax in batch_figure().axes:
        two, four_fast, four_slow = _curves(ax)
        assert (two.get_linestyle(), four_fast.get_linestyle()) == ("--", "-")
        assert (two.get_linewidth(), four_slow.get_linewidth()) == (2.0, 5.0)
        assert two.get_zorder() > four_slow.get_zorder()
        (edge,) = two.get_path_effects()
        assert edge._gc == {"linewidth": 3.5, "foreground": "white"}
