"""The cluster diagram: nodes, GPUs, TP outlines, PP and DP links, legend."""

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from lesson_lib.figures.cluster import (
    STAGE_COLORS,
    TP_NETWORK_COLOR,
    TP_NVLINK_COLOR,
    _legend_handles,
    _recommended_plans,
    layout_figure,
)
from lesson_lib.figures.cluster_geometry import ClusterGrid
from lesson_lib.model.cluster_plan import tp_groups
from lesson_lib.model.cluster_planner import plan_cluster


def _gpu_squares(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() < 0.9 and p.fill]


def _outlines(ax, color):
    return [
        p
        for p in ax.patches
        if isinstance(p, Rectangle)
        and not p.fill
        and np.allclose(p.get_edgecolor(), to_rgba(color))
    ]


def _links(ax, dashed):
    """PP arrows are solid, DP arcs dashed."""
    return [
        p
        for p in ax.patches
        if isinstance(p, FancyArrowPatch) and (p.get_linestyle() != "solid") == dashed
    ]


def test_recommended_figure_has_two_panels():
    """The default draws TP 4 x PP 2 above TP 4 x DP 2 on 2 nodes x 4 GPUs."""
    fig = layout_figure()
    assert len(fig.axes) == 2
    assert fig.axes[0].get_position().y0 > fig.axes[1].get_position().y1
    titles = [ax.get_title() for ax in fig.axes]
    assert "TP 4 x PP 2" in titles[0] and "TP 4 x DP 2" in titles[1]
    assert [p.label for p in _recommended_plans()] == [t.split("\n")[0] for t in titles]


def test_nodes_and_gpus_are_drawn():
    """One box per node, one square per GPU, coloured by pipeline stage."""
    ax = layout_figure([plan_cluster(gpus_per_node=4, nodes=2, tp=4, pp=2)]).axes[0]
    assert sum(isinstance(p, FancyBboxPatch) for p in ax.patches) == 2
    squares = _gpu_squares(ax)
    assert len(squares) == 8
    colours = {tuple(np.round(p.get_facecolor(), 3)) for p in squares}
    assert colours == {tuple(np.round(to_rgba(c), 3)) for c in STAGE_COLORS[:2]}


def test_tp_groups_outlined_on_nvlink():
    """Each TP group inside a node gets a green outline; none is dashed wine red (the network)."""
    ax = layout_figure([plan_cluster(gpus_per_node=8, nodes=1, tp=4)]).axes[0]
    assert len(_outlines(ax, TP_NVLINK_COLOR)) == 2
    assert _outlines(ax, TP_NETWORK_COLOR) == []


def test_tp_across_nodes_outlined_in_wine_red():
    """A TP group split over two nodes is outlined in two dashed wine-red pieces."""
    plan = plan_cluster(gpus_per_node=2, nodes=2, tp=4)
    ax = layout_figure([plan]).axes[0]
    assert len(_outlines(ax, TP_NETWORK_COLOR)) == 2
    labels = [h.get_label() for h in _legend_handles([plan])]
    assert "TP group split by network" in labels and "TP group, NVLink" not in labels


def test_pp_and_dp_links():
    """One PP arrow per stage boundary per replica; one DP arc between replicas on two nodes."""
    pp_ax, dp_ax = layout_figure().axes
    assert (len(_links(pp_ax, dashed=False)), len(_links(pp_ax, dashed=True))) == (1, 0)
    assert (len(_links(dp_ax, dashed=False)), len(_links(dp_ax, dashed=True))) == (0, 1)
    labels = [h.get_label() for h in _legend_handles(_recommended_plans())]
    assert "PP: hidden vector + residual" in labels and "DP: nothing per token" in labels


def test_idle_gpus_are_hatched():
    """GPUs left over by an uneven layout are drawn hatched and named in the legend."""
    plan = plan_cluster(gpus_per_node=3, nodes=2, tp=4)
    ax = layout_figure([plan]).axes[0]
    hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert len(hatched) == plan.idle_gpus == 2
    assert "idle GPU" in [h.get_label() for h in _legend_handles([plan])]


def test_network_band_only_with_several_nodes():
    """One node: no network band; two nodes: a band named after InfiniBand / RoCE."""
    one = layout_figure([plan_cluster(gpus_per_node=4, nodes=1, tp=4)]).axes[0]
    two = layout_figure([plan_cluster(gpus_per_node=4, nodes=2, tp=4)]).axes[0]
    assert not any("network" in t.get_text() for t in one.texts)
    assert any("InfiniBand" in t.get_text() for t in two.texts)


def test_bad_arguments():
    """An empty plan list is refused by name."""
    with pytest.raises(ValueError, match="plans"):
        layout_figure([])


def test_layout_figure_key_sits_under_the_panels():
    """The key lists every legend entry between the lowest panel and the figure's bottom."""
    plan = plan_cluster(gpus_per_node=2, nodes=3, tp=2, pp=3)
    fig = layout_figure([plan])
    assert fig.get_size_inches()[1] > 2.9  # a 2.9 in panel and the key's rows under it
    assert [t.get_text() for t in fig.texts] == [h.get_label() for h in _legend_handles([plan])]
    panel_bottom = fig.axes[0].get_position().y0
    assert all(0 < t.get_position()[1] < panel_bottom for t in fig.texts)


def test_the_grid_places_nodes_cells_and_hand_offs():
    """Cells 1.0 wide, nodes padded 0.35 and 1.3 apart: with four GPUs a node, node 1 starts
    at 4 + 0.7 + 1.3 = 6.0 and two nodes are 10.7 wide; eight a node take two rows, row 0
    on top. PP 2 stacked in one node of eight loops out on the right (x 4.35)."""
    four, eight = ClusterGrid(4), ClusterGrid(8)
    assert (four.cols, four.rows, eight.cols, eight.rows) == (4, 1, 4, 2)
    assert four.node_x(1) == pytest.approx(6.0) and four.width(2) == pytest.approx(10.7)
    assert four.cell(1, 2) == pytest.approx((8.35, 0.0))
    assert eight.cell(0, 1) == pytest.approx((1.35, 1.0))
    assert eight.cell(0, 5) == pytest.approx((1.35, 0.0))
    plan = plan_cluster(gpus_per_node=8, nodes=1, tp=4, pp=2)
    top, bottom = (g for g in tp_groups(plan.placement).values())
    a, b, rad = eight.pp_ends(top, bottom)
    assert a == pytest.approx((4.35, 1.5)) and b == pytest.approx((4.35, 0.5)) and rad == -0.6


def test_a_hand_off_between_nodes_runs_through_the_network_band():
    """TP 4 x PP 2 on two nodes of four: the arrow leaves node 0's group 0.7 cells right of its
    wire (2.35 + 0.7 = 3.05), goes down into the band's middle (top -0.35 - 0.55 - 0.9 = -1.8,
    middle -1.8 - 0.225 = -2.025), along it and up into node 1's group 0.35 cells right of its
    wire (8.35 + 0.35 = 8.7); the band's name sits under the band, clear of the arrow."""
    fig = layout_figure()
    fig.draw_without_rendering()
    pp_ax = fig.axes[0]
    (arrow,) = _links(pp_ax, dashed=False)
    drawn = arrow.get_window_extent()  # px, the line's and the arrowhead's half-widths around it
    (x0, y0), (x1, y1) = pp_ax.transData.transform([(3.05, -2.025), (8.7, 0.04)])
    assert drawn.x0 == pytest.approx(x0, abs=8) and drawn.x1 == pytest.approx(x1, abs=8)
    assert drawn.y0 == pytest.approx(y0, abs=4) and drawn.y1 == pytest.approx(y1, abs=4)
    (name,) = [t for t in pp_ax.texts if "InfiniBand" in t.get_text()]
    assert name.get_position()[1] < -2.25 and name.get_va() == "top"
    plan = plan_cluster(gpus_per_node=4, nodes=2, tp=4, pp=2)
    route = ClusterGrid(4).pp_band_route(*tp_groups(plan.placement).values())
    np.testing.assert_allclose(route, [(3.05, 0.04), (3.05, -2.025), (8.7, -2.025), (8.7, 0.04)])
    # Stacked in one node of eight, or to a node further on: the arrow of pp_ends instead.
    plan = plan_cluster(gpus_per_node=8, nodes=1, tp=4, pp=2)
    assert ClusterGrid(8).pp_band_route(*tp_groups(plan.placement).values()) is None
    plan = plan_cluster(gpus_per_node=4, nodes=4, tp=4, pp=2)
    groups = tp_groups(plan.placement)
    assert ClusterGrid(4).pp_band_route(groups[(0, 0)], groups[(0, 1)]) is None  # node 0 to 2


def test_gpu_labels_fill_their_squares_and_read_on_a_phone():
    """Each GPU's label lies inside its square, at 11 pt: on a 390 px phone the 5.1 in (510 px)
    figure is shown 342 px wide, so 11 x 100/72 x 342/510 = 10.2 CSS px (the floor is 9)."""
    fig = layout_figure()
    fig.draw_without_rendering()
    assert fig.get_size_inches()[0] == pytest.approx(5.1)
    for ax in fig.axes:
        squares = [p.get_window_extent() for p in _gpu_squares(ax)]
        labels = [t for t in ax.texts if t.get_text().startswith("TP")]
        assert len(labels) == len(squares) == 8
        for label in labels:
            assert label.get_fontsize() == 11.0
            box = label.get_window_extent()
            (square,) = [s for s in squares if s.contains(*box.get_points().mean(axis=0))]
            assert square.x0 < box.x0 and box.x1 < square.x1, label.get_text()
            assert square.y0 < box.y0 and box.y1 < square.y1, label.get_text()
