"""The overlap figure: a bar per technique in each panel, totals as step_time gives them."""

from __future__ import annotations

from lesson_lib.figures.overlap import overlap_figure


def test_two_panels_of_five_labelled_bars():
    """Top: decoded token, 5.38 ms without a technique (4.03 + 0.064 + 1.28 + 0.004 ms) and
    5.31 ms fused; bottom: the prompt, 61.73 ms chunked (55.91 + 0.064 + 5.75 ms)."""
    fig = overlap_figure()
    top, bottom = fig.axes[:2]
    labels = [t.get_text() for t in top.texts]
    assert labels[:2] == [" 5.38 ms", " 5.31 ms"]
    assert " 61.73 ms" in [t.get_text() for t in bottom.texts]
    assert len(top.get_yticklabels()) == 5
