"""The payloads figure: decode traffic against fabric bandwidth, log scale."""

from matplotlib.figure import Figure
from numpy.testing import assert_allclose

from lesson_lib.figures.payloads import payload_vs_bandwidth_figure
from lesson_lib.model.payloads import FABRIC_BANDWIDTHS, decode_wire_rate
from lesson_lib.model.specimen import MODEL


def _bar_ends(fig):
    """Where each row's dot sits, top to bottom: its rate in bytes/s."""
    ax = fig.axes[0]
    return [line.get_xdata()[0] for line in ax.get_lines() if line.get_marker() == "o"]


def test_default_figure_draws_two_demands_and_three_fabrics():
    """One log-scale axes with a dot per ring size and per fabric, at its rate, and no bars.

    Bars on a log axis would make 98.3 MB/s look a third of 64 GB/s (log
    ratios to the 1 MB/s start: 2 against 4.8 decades); dots have no length.
    """
    fig = payload_vs_bandwidth_figure()
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    expected = [decode_wire_rate(MODEL, n, 50) for n in (2, 4)]
    expected += sorted(FABRIC_BANDWIDTHS.values())
    assert_allclose(_bar_ends(fig), expected)
    assert len(ax.patches) == 0
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert any("illustrative" in label for label in labels)
    assert "bytes per second" in ax.get_xlabel()


def test_bars_are_annotated_in_both_unit_systems():
    """The demand bars say MiB/s and MB/s; the fabrics say GB/s; one note per bar."""
    texts = [t.get_text() for t in payload_vs_bandwidth_figure().axes[0].texts]
    assert "93.75 MiB/s = 98.3 MB/s" in texts
    assert "450 GB/s" in texts
    assert len(texts) == 2 + len(FABRIC_BANDWIDTHS)


def test_no_reference_line():
    """No yardstick line: the bars are compared with each other, not with a round figure."""
    ax = payload_vs_bandwidth_figure().axes[0]
    assert [line for line in ax.get_lines() if line.get_linestyle() == "--"] == []
    assert not any("100 MiB/s" in t.get_text() for t in ax.texts)
