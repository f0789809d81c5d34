"""Experts figures: every collective's line, TP and EP bars from the chapter's comparison."""

from numpy.testing import assert_allclose

from lesson_lib.figures.experts import collectives_figure, tp_vs_ep_figure
from lesson_lib.model.experts import comparison


def test_collectives_figure_lines():
    """Five lines per panel; at 4 ranks the all-reduce sends 1.5 payloads, the all-to-all 0.75,
    send/recv 1; the time panel is in us against KiB."""
    top, bottom = collectives_figure().axes
    lines = top.get_lines()
    assert [line.get_label() for line in lines] == [
        "all-reduce",
        "reduce-scatter",
        "all-gather",
        "all-to-all",
        "send/recv",
    ]
    at_four = [line.get_ydata()[3] for line in lines]  # ns start at 1
    assert_allclose(at_four, [1.5, 0.75, 0.75, 0.75, 1.0])
    assert len(bottom.get_lines()) == 5
    assert "us" in bottom.get_ylabel() and "KiB" in bottom.get_xlabel()


def test_tp_vs_ep_bars_are_the_comparison():
    """The bars' totals are the three layouts' times and rates."""
    layouts = comparison()
    top, bottom = tp_vs_ep_figure().axes
    widths = [p.get_width() for p in top.patches]
    # three stacked segments per layout: TP, EP, then TP with DCP
    for i, key in enumerate(("tp", "ep", "dcp")):
        total = sum(widths[3 * i : 3 * i + 3])
        assert_allclose(total, layouts[key].one.total_s * 1e3, rtol=1e-9)
    assert_allclose(
        [p.get_width() for p in bottom.patches],
        [layouts[key].full.tokens_per_s for key in ("tp", "ep", "dcp")],
    )
