"""Batching figure: curves stop at memory, dots at the crossover batch."""

from numpy.testing import assert_allclose

from lesson_lib.figures.batching import batch_figure


def test_two_panels_and_curves():
    """Top: tokens/s; bottom: ms per token. The 4-GPU fast curve ends at 676 sequences."""
    fig = batch_figure()
    top, bottom = fig.axes
    assert top.get_position().y0 > bottom.get_position().y1
    assert "tokens/s" in top.get_ylabel() and "ms" in bottom.get_ylabel()
    four_fast = top.get_lines()[1]
    assert four_fast.get_xdata()[-1] == 676


def test_crossover_dot_at_293():
    """The dot on the 4-GPU fast curve sits at 293 sequences (alpha B / 1.5 x 10 KiB)."""
    left = batch_figure().axes[0]
    dots = [line for line in left.get_lines() if line.get_marker() == "o"]
    assert_allclose(dots[0].get_xdata()[0], 293)
