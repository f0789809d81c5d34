"""The token timeline figure: three timelines and one all-reduce, labelled."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from lesson_lib.figures.timeline import token_timeline_figure


def test_figure_has_two_panels_with_labels():
    fig = token_timeline_figure()
    assert isinstance(fig, Figure)
    top, bottom = fig.axes
    assert [t.get_text() for t in top.get_yticklabels()] == [
        "2 GPUs, fast fabric",
        "4 GPUs, fast fabric",
        "4 GPUs, slow fabric",
    ]
    texts = [t.get_text() for t in top.texts]
    assert any("9.34 ms per token" in t for t in texts)
    assert "us" in top.get_xlabel() and "us" in bottom.get_xlabel()
    assert len(top.patches) == 3 * 3 * 4
    assert len(bottom.patches) == 4
    legend = bottom.get_legend()
    assert any("3 us" in t.get_text() for t in legend.get_texts())


def test_figure_refuses_bad_count():
    with pytest.raises(ValueError, match="allreduces"):
        token_timeline_figure(allreduces=0)
