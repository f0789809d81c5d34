"""Tests of lesson_lib.figures.sizing: bars, labels, units."""

from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from numpy.testing import assert_allclose

from lesson_lib import GB, GiB
from lesson_lib.figures.sizing import SEGMENTS, kv_context_figure, tp_budget_figure
from lesson_lib.model.specimen import GPU, MODEL


def bars(fig: Figure) -> list[BarContainer]:
    """The bar containers of the figure's only axes."""
    (ax,) = fig.axes
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def test_tp_budget_figure_has_three_stacked_bars():
    """Four segments (weights, KV, state, free) x three degrees, labelled by degree."""
    fig = tp_budget_figure()
    assert isinstance(fig, Figure)
    containers = bars(fig)
    assert len(containers) == len(SEGMENTS) == 4
    assert all(len(c) == 3 for c in containers)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["TP = 1\n1 sequence", "TP = 2\n6 sequences", "TP = 4\n16 sequences"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["weights", "KV cache", "DeltaNet state", "free"]


def test_tp_budget_figure_heights_are_the_budget_in_gb():
    """Weights bars are 54, 27, 13.5 GB; each stack tops out at the card's visible capacity."""
    containers = bars(tp_budget_figure())
    weights = [rect.get_height() for rect in containers[0]]
    assert_allclose(weights, [54, 27, 13.5])
    tops = [sum(c[i].get_height() for c in containers) for i in range(3)]
    assert_allclose(tops, [GPU.memory_bytes / GB] * 3)


def test_memory_bars_figure_axis_labels_have_units():
    """The y axis says GB and what a GB is."""
    ax = tp_budget_figure().axes[0]
    assert "GB" in ax.get_ylabel() and "10" in ax.get_ylabel()
    assert ax.get_xlabel()


def test_kv_context_figure_lines_and_units():
    """Hybrid, pure-attention and state lines; axes in tokens and GiB."""
    fig = kv_context_figure()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 4  # three curves and the room-on-one-card line
    assert "GiB" in ax.get_ylabel()
    assert "tokens" in ax.get_xlabel()
    pure, hybrid, state = (line.get_ydata() for line in ax.get_lines()[:3])
    assert_allclose(pure[-1], 64)
    assert_allclose(hybrid[-1], MODEL.kv_bytes(MODEL.max_context) / GiB)
    assert_allclose(state, MODEL.state_bytes / GiB)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(legend) == 3 and "64 layers" in legend[0]


def test_kv_segments_and_card_are_labelled_in_both_units():
    """The KV cache reads in GB and GiB, as the text beside the figure quotes GiB."""
    fig = tp_budget_figure()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("48 GiB" in t and "51.5 GB" in t for t in texts)
    assert any(t.startswith("card: 84.93 GB = 79.1 GiB") for t in texts)
