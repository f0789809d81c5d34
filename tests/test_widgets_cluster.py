"""The cluster explorer: validity report, time per token, never a traceback."""

import pytest

from lesson_lib.cluster import plan_cluster
from lesson_lib.figures.cluster import layout_figure
from lesson_lib.widgets._base import figure_png
from lesson_lib.widgets.cluster import MAX_NODES, cluster_report, cluster_widget


@pytest.fixture
def widget():
    return cluster_widget()


def test_default_is_valid_tp4_pp2(widget):
    """The explorer starts at 2 nodes x 4 GPUs, TP 4 x PP 2: valid, one hand-off on the network."""
    text = widget.message.value
    assert "Valid layout" in text and "TP 4 x PP 2 x DP 1" in text
    assert "1 pipeline hand-off per token, 1 across the network" in text
    assert "5.34 ms per token" in text
    assert bytes(widget.image.value)[:4] == b"\x89PNG" and widget.error is None


def test_tp8_is_flagged_twice_across_two_nodes(widget):
    """TP 8 on two nodes of four: legal, flagged for copied KV heads and for spanning nodes."""
    before = bytes(widget.image.value)
    widget.controls["pp"].value = 1
    widget.controls["tp"].value = 8
    text = widget.message.value
    assert "Valid layout" in text and "4 KV heads" in text
    assert "spans nodes" in text
    assert widget.error is None
    assert bytes(widget.image.value) != before


def test_several_problems_each_listed(widget):
    """TP 3 x PP 3 on 8 GPUs: head groups, super-blocks and GPU count are each listed."""
    widget.controls["tp"].value = 3
    widget.controls["pp"].value = 3
    text = widget.message.value
    for needle in ("KV heads", "16 super-blocks", "only 8"):
        assert needle in text
    assert text.count("<li>") >= 4
    assert "no complete replica" in text


def test_dp_shown_when_gpus_allow(widget):
    """Four nodes x 4 with TP 4 x PP 2 gives DP 2."""
    widget.controls["nodes"].value = 4
    assert "x DP 2" in widget.message.value and "2 replicas" in widget.message.value


@pytest.mark.parametrize(
    ("control", "value", "needle"),
    [
        ("gpus_per_node", 0, "gpus_per_node"),
        ("gpus_per_node", 64, "gpus_per_node"),
        ("nodes", MAX_NODES + 1, "nodes"),
        ("tp", 0, "tp"),
        ("pp", -2, "pp"),
    ],
)
def test_bad_values_show_a_message(widget, control, value, needle):
    """Out-of-range input gives a message naming the parameter, never a traceback."""
    widget.controls[control].value = value
    assert widget.error is not None and needle in widget.error
    assert "Cannot show this choice" in widget.message.value


def test_report_escapes_and_flags():
    """A flagged plan's report shows the flag; TP 1 says there are no all-reduces."""
    flagged = cluster_report(plan_cluster(gpus_per_node=2, nodes=2, tp=4))
    assert "Flagged" in flagged and "the network" in flagged
    single = cluster_report(plan_cluster(gpus_per_node=1, nodes=1, tp=1))
    assert "no tensor-parallel all-reduces" in single and "1 full-length sequence " in single


def test_picture_is_the_plan_the_message_describes(widget):
    """After a change the PNG is the diagram of the plan the message reports, widened to fit."""
    widget.controls["nodes"].value = 4
    widget.controls["pp"].value = 4
    assert "Valid layout:</b> 16 GPUs = TP 4 x PP 4 x DP 1" in widget.message.value
    plan = plan_cluster(gpus_per_node=4, nodes=4, tp=4, pp=4)
    expected = layout_figure([plan], width=2.6 + 1.4 * 4, height=3.0)
    assert bytes(widget.image.value) == figure_png(expected)


def test_huge_degrees_are_a_message_not_a_hang(widget):
    """TP or PP of 10**9 (typed into the box) is refused at once with the allowed range."""
    widget.controls["tp"].value = 10**9
    assert widget.error is not None and widget.error.startswith("tp must be an integer from 1")
    widget.controls["tp"].value = 4
    widget.controls["pp"].value = 33
    assert widget.error is not None and widget.error.startswith("pp must be")
