"""The latency chapter's figures: step breakdown, speed-up curves, fixed vs per-hop."""

import numpy as np
import pytest
from matplotlib.figure import Figure
from numpy.testing import assert_allclose

from lesson_lib.figures.latency import (
    breakdown_figure,
    fixed_vs_hop_figure,
    speedup_curves_figure,
    token_timeline_figure,
)
from lesson_lib.model.latency import decode_lines, speedup_curve, speedup_limit
from lesson_lib.model.published import PUBLISHED
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.model.units import MS


def test_breakdown_bars_stack_to_the_totals():
    """The lesson's decode lines in order, three stacked terms each, ending at the line's total."""
    fig = breakdown_figure()
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    lines = decode_lines(include_bandwidth=True)
    assert [t.get_text() for t in ax.get_yticklabels()] == [line.label for line in lines]
    assert len(ax.patches) == 3 * len(lines)
    ends = [p.get_x() + p.get_width() for p in ax.patches[-len(lines) :]]
    assert_allclose(ends, [line.step.total_s / MS for line in lines])
    texts = " ".join(t.get_text() for t in ax.texts)
    for total in ("9.34 ms", "5.31 ms", "10.46 ms", "188 tokens/s"):
        assert total in texts
    assert ax.get_xlabel() == "time per decoded token (ms)"


def test_speedup_curves_match_scaling():
    """Each fabric's line is speedup_curve; its ceiling is drawn at speedup_limit."""
    ns = range(1, 17)
    fig = speedup_curves_figure()
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    for fabric in (FAST, SLOW):
        assert_allclose(lines[fabric.name].get_ydata(), speedup_curve(MODEL, GPU, fabric, ns))
        ceilings = [
            line.get_ydata()[0]
            for line in ax.get_lines()
            if line.get_linestyle() == "--" and line.get_color() == lines[fabric.name].get_color()
        ]
        assert_allclose(ceilings, [speedup_limit(MODEL, GPU, fabric)])
    assert "speed-up" in ax.get_ylabel()


def test_speedup_curves_draw_invalid_degrees_hollow():
    """Filled at 1, 2, 4, 8 only: 3, 6 and 12 do not divide 16 DeltaNet key heads, 16 not 24 query heads."""
    (ax,) = speedup_curves_figure().axes
    for fabric in (FAST, SLOW):
        colour = next(ln.get_color() for ln in ax.get_lines() if ln.get_label() == fabric.name)
        dots = [ln for ln in ax.get_lines() if ln.get_marker() == "o" and ln.get_color() == colour]
        filled = [ln for ln in dots if ln.get_markerfacecolor() != "white"]
        hollow = [ln for ln in dots if ln.get_markerfacecolor() == "white"]
        assert list(filled[0].get_xdata()) == [1, 2, 4, 8]
        assert list(hollow[0].get_xdata()) == [3, 5, 6, 7, *range(9, 17)]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "hollow: N the specimen cannot be split over" in labels


def test_fixed_vs_hop_shows_both_speedups_and_the_measurements():
    """Two stacked panels; the bottom one names 1.76x and 1.51x; the top plots every record."""
    fig = fixed_vs_hop_figure()
    top, bottom = fig.axes
    assert top.get_position().y0 > bottom.get_position().y1
    texts = " ".join(t.get_text() for t in bottom.texts)
    assert "1.76x" in texts and "1.51x" in texts
    points = [line for line in top.get_lines() if line.get_linestyle() == "None"]
    assert len(points) == len([r for r in PUBLISHED if r.ranks <= 16])
    ring = [line for line in top.get_lines() if line.get_label().startswith("per hop")]
    assert_allclose(np.asarray(ring[0].get_ydata())[[0, 2]], [10.0, 16.9])


def test_timeline_has_one_panel_with_each_lines_time():
    fig = token_timeline_figure()
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "2 GPUs, fast fabric",
        "4 GPUs, fast fabric",
        "4 GPUs, slow fabric",
    ]
    texts = [t.get_text() for t in ax.texts]
    assert any("9.34 ms per token" in t for t in texts)
    # bytes left out as in the breakdown below it: 4.03 + 128 x 50 us = 10.43 ms, not 10.46 ms
    assert any("10.43 ms per token" in t for t in texts)
    assert not any("10.46" in t for t in texts)
    assert all(t.startswith("repeated x32:") for t in texts)  # 4 of 128 all-reduces drawn
    assert "us" in ax.get_xlabel()
    # three lines x four all-reduces, each a compute slice and a latency (no bytes bar)
    assert len(ax.patches) == 3 * 2 * 4


def test_the_chapters_breakdown_shows_the_sums_under_it():
    """Bytes left out, as in the bullets under it: 4.03 + 6.4 = 10.43 ms, not 10.46 ms."""
    texts = " ".join(t.get_text() for t in breakdown_figure(include_bandwidth=False).axes[0].texts)
    assert "10.43 ms" in texts and "10.46" not in texts


def test_a_narrow_breakdown_wraps_its_labels_and_refuses_too_narrow():
    """At 4.2 in (the landing page's) each label takes two lines; the bars and totals are the same.

    On a 342 px phone column its 10 pt text shows at 10 x 100/72 x 342/420 = 11.3 px, against
    9.3 px at the default 5.1 in.
    """
    fig = breakdown_figure(title=None, include_bandwidth=False, width=4.2)
    assert_allclose(fig.get_size_inches(), [4.2, 0.7 * 3 + 1.9])
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "2 GPUs,\nfast fabric",
        "4 GPUs,\nfast fabric",
        "4 GPUs,\nslow fabric",
    ]
    wide = breakdown_figure(title=None, include_bandwidth=False)
    assert [t.get_text() for t in ax.texts] == [t.get_text() for t in wide.axes[0].texts]
    assert "2 GPUs, fast fabric" in [t.get_text() for t in wide.axes[0].get_yticklabels()]
    with pytest.raises(ValueError, match=r"width must be >= 4 in, got 3\.5"):
        breakdown_figure(width=3.5)
