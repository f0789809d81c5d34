"""Tests of lesson_lib.figures.sizing: bars, labels, units."""

from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.text import Annotation
from numpy.testing import assert_allclose

from lesson_lib import GB, GiB
from lesson_lib.figures._style import ROLE_COLORS
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


def _contrast_with_white(hex_colour: str) -> float:
    """WCAG 2.1's contrast ratio of a colour against white (its relative-luminance formula)."""
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def test_the_state_line_stands_out_and_is_named_on_the_figure():
    """Its colour has at least WCAG 2.1's 3:1 for graphics (SC 1.4.11), a label says it is flat.

    #117733 against white: luminance 0.2126 x 0.0052 + 0.7152 x 0.1845 + 0.0722 x 0.0331 =
    0.1355, so 1.05 / 0.1855 = 5.7:1; the pale yellow it replaces, #F0E442, was 1.3:1. The
    y axis starts under zero, so the line at 147 MiB does not lie on the frame.
    """
    assert _contrast_with_white("#F0E442") < 1.35  # the helper, on the colour it replaces
    (ax,) = kv_context_figure().axes
    state = ax.get_lines()[2]
    assert state.get_color() == ROLE_COLORS["state"]
    assert 5.6 < _contrast_with_white(ROLE_COLORS["state"]) < 5.8
    (label,) = [t for t in ax.texts if "DeltaNet state" in t.get_text()]
    assert "flat" in label.get_text() and "147 MiB" in label.get_text()
    assert label.get_color() == ROLE_COLORS["state"]
    assert ax.get_ylim()[0] < 0


def test_thin_segments_are_labelled_above_their_bar():
    """Every segment has its value: the state in each bar and TP 4's free memory, above the bar.

    Per GPU, GB: the state is 147 MiB per sequence, 0.153944064 GB, so 1 x that at TP 1,
    6 / 2 = 3 x at TP 2 (0.46) and 16 / 4 = 4 x at TP 4 (0.62). TP 4's free memory is
    84.93 - 13.5 - 68.72 - 0.62 = 2.1 GB. Two decimals, as the table beside the figure.
    """
    (ax,) = tp_budget_figure().axes
    capacity = GPU.memory_bytes / GB
    notes = [t for t in ax.texts if isinstance(t, Annotation) and t.xy[1] == capacity]
    above = {t.get_text(): t for t in notes if not t.get_text().startswith("card")}
    assert sorted(above) == ["free 2.1 GB", "state 0.15 GB", "state 0.46 GB", "state 0.62 GB"]
    assert [above[f"state {v} GB"].xy[0] for v in ("0.15", "0.46", "0.62")] == [0, 1, 2]
    assert above["free 2.1 GB"].xyann[1] > above["state 0.62 GB"].xyann[1]  # the stack's order
    inside = [t.get_text() for t in ax.texts if t not in above.values()]
    assert "13.6 GB" in inside and "5.9 GB" in inside
