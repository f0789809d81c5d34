"""Tests of lesson_lib.figures.allreduce: the figures are read from a simulated ring all-reduce."""

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from numpy.testing import assert_allclose

from lesson_lib.figures.allreduce import (
    RECEIVED_COLOR,
    _holdings_colors,
    _holdings_legend_handles,
    draw_holdings,
    ring_bytes_figure,
    ring_schedule_figure,
)
from lesson_lib.model.collectives import allreduce_wire_bytes
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.tensor_parallel import simulate_hidden_allreduce
from lesson_lib.model.units import KiB


def _cell_texts(ax, n):
    """Map (rank, chunk) -> label text of one holdings panel."""
    return {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
        for t in ax.texts
        if 0 <= round(t.get_position()[0]) < n
    }


def _received_boxes(ax):
    return [
        p
        for p in ax.patches
        if isinstance(p, Rectangle) and np.allclose(p.get_edgecolor()[:3], _rgb(RECEIVED_COLOR))
    ]


def _rgb(hex_color):
    return tuple(int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))


@pytest.fixture(scope="module")
def ring4():
    return simulate_hidden_allreduce(MODEL, 4)


def test_schedule_figure_has_one_panel_per_state_and_a_legend():
    """N = 4: 7 states and the legend in two columns of four, one phase per column."""
    fig = ring_schedule_figure(4)
    assert isinstance(fig, Figure)
    axes = fig.axes
    assert len(axes) == 8
    boxes = [ax.get_position() for ax in axes]
    # Left column: the start and the reduce-scatter steps, top to bottom; right
    # column: the all-gather steps, then the legend.
    for column in (boxes[:4], boxes[4:]):
        assert len({round(b.x0, 3) for b in column}) == 1
        assert [b.y0 for b in column] == sorted((b.y0 for b in column), reverse=True)
    assert boxes[4].x0 > boxes[0].x1
    assert [ax.get_title() for ax in axes[:7]] == [
        "start: own partial only",
        "step 1: reduce-scatter",
        "step 2: reduce-scatter",
        "step 3: reduce-scatter",
        "step 4: all-gather",
        "step 5: all-gather",
        "step 6: all-gather",
    ]
    legend = axes[7].get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[0].startswith("own partial") and "complete: all 4 ranks" in labels


def test_schedule_panels_follow_the_simulators_holdings(ring4):
    """Every cell label lists exactly the ranks the simulator says that copy contains."""
    fig = ring_schedule_figure(4)
    for step in range(7):
        texts = _cell_texts(fig.axes[step], 4)
        for rank in range(4):
            for chunk in range(4):
                held = ring4.holdings[step][rank][chunk]
                first_line = texts[rank, chunk].split("\n")[0]
                expected = "all" if len(held) == 4 else "+".join(map(str, sorted(held)))
                assert first_line == expected, (step, rank, chunk)


def test_schedule_marks_the_transfers_of_each_step(ring4):
    """Each step panel outlines the N cells that just arrived and names their senders."""
    fig = ring_schedule_figure(4)
    assert _received_boxes(fig.axes[0]) == []
    for step in range(1, 7):
        ax = fig.axes[step]
        assert len(_received_boxes(ax)) == 4
        texts = _cell_texts(ax, 4)
        for t in ring4.steps[step - 1]:
            assert texts[t.dst, t.chunk].endswith(f"\u2190r{t.src}")


def test_after_reduce_scatter_each_rank_owns_one_complete_chunk():
    """Panel of step N-1: rank r holds the complete chunk (r + 1) mod N and no other."""
    fig = ring_schedule_figure(4)
    texts = _cell_texts(fig.axes[3], 4)
    complete = sorted(k for k, v in texts.items() if v.startswith("all"))
    assert complete == sorted((r, (r + 1) % 4) for r in range(4))


def test_many_ranks_show_counts(ring4):
    """With 6 ranks the cells show counts such as 1/6, not long rank lists."""
    fig = ring_schedule_figure(6)
    texts = _cell_texts(fig.axes[0], 6)
    assert set(texts.values()) == {"1/6"}


def test_bytes_figure_dots_are_the_simulator_and_line_the_formula():
    """Dots = every rank's simulated bytes, line = 2(N-1)/N x 10 KiB, both in KiB."""
    fig = ring_bytes_figure(16)
    ax = fig.axes[0]
    line, dots = ax.lines[0], ax.lines[1]
    ns = np.arange(1, 17)
    payload = MODEL.hidden_vector_bytes
    assert_allclose(line.get_xdata(), ns)
    assert_allclose(line.get_ydata(), [allreduce_wire_bytes(payload, int(n)) / KiB for n in ns])
    expected = [
        (n, b / KiB)
        for n in ns
        for b in sorted(set(simulate_hidden_allreduce(MODEL, int(n)).bytes_sent))
    ]
    assert_allclose(np.column_stack([dots.get_xdata(), dots.get_ydata()]), expected)
    assert_allclose(dots.get_ydata()[dots.get_xdata() == 4], [15.0])
    assert max(dots.get_ydata()) < 20.0
    assert "KiB" in ax.get_ylabel() and ax.get_xlabel()


def test_bytes_figure_limit_line_is_twice_the_payload():
    """The dashed limit sits at 2 x 10 KiB = 20 KiB, above every dot."""
    ax = ring_bytes_figure(8).axes[0]
    limit = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert len(limit) == 1
    assert_allclose(limit[0].get_ydata(), [20.0, 20.0])


def test_bad_arguments_raise(ring4):
    """Out-of-range N or step raise ValueError naming the parameter."""
    with pytest.raises(ValueError, match="n must be an integer from 2 to 6"):
        ring_schedule_figure(7)
    with pytest.raises(ValueError, match="max_n"):
        ring_bytes_figure(1)
    ax = Figure().add_subplot()
    with pytest.raises(ValueError, match="step must be an integer from 0 to 6"):
        draw_holdings(ax, ring4, 7)
    with pytest.raises(ValueError, match="step"):
        draw_holdings(ax, ring4, -1)


def test_colours_and_legend():
    """N colours, light to dark; the legend has N count entries plus the border entry."""
    cmap = _holdings_colors(4)
    assert cmap.N == 4
    lum = [sum(cmap(k)[:3]) for k in range(4)]
    assert lum == sorted(lum, reverse=True)
    assert len(_holdings_legend_handles(4)) == 5


def test_ring_topology_has_a_box_and_an_arrow_per_gpu():
    from lesson_lib.figures.allreduce import ring_topology_figure

    fig = ring_topology_figure(4)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert [t for t in texts if t.startswith("GPU")] == ["GPU 0", "GPU 1", "GPU 2", "GPU 3"]
    assert texts.count("c3") == 4
    arrows = [c for c in ax.get_children() if type(c).__name__ == "Annotation"]
    assert len(arrows) == 4
    with pytest.raises(ValueError, match="n"):
        ring_topology_figure(9)


def test_schedule_title_says_about_only_when_the_chunks_differ():
    """10,240 B over 4 ranks: four chunks of 2,560 B = 2.5 KiB exactly; over 3 they differ."""
    exact = ring_schedule_figure(4)._suptitle.get_text()
    uneven = ring_schedule_figure(3)._suptitle.get_text()
    assert "(2.5 KiB)" in exact and "about" not in exact
    assert "(about 3.33 KiB)" in uneven
