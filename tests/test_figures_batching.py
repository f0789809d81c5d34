"""Batching figure: curves stop at memory, dots at the crossover batch."""

from numpy.testing import assert_allclose

from lesson_lib.figures.batching import batch_figure


def test_two_panels_and_curves():
    """Top: tokens/s; bottom: ms per token. The 4-GPU fast curve ends at 676 sequences."""
    fig = batch_figure()
    top, bottom = fig.axes
    assert top.get_position().y0 > bottom.get_position().y1
    assert "tokens/s" in top.get_ylabel() and "ms" in bottom.get_ylabel()
    (four_fast,) = [line for line in top.get_lines() if line.get_label() == "4 GPUs, fast fabric"]
    assert four_fast.get_xdata()[-1] == 676


def test_memory_full_is_a_square_on_each_curves_own_end():
    """One square per curve and panel, at that curve's last point and in its colour.

    A tall bar at the 2-GPU curve's end (274 sequences) crossed the 4-GPU
    slow curve there and read as its mark; a square sits on one curve only.
    """
    for ax in batch_figure().axes:
        curves = [line for line in ax.get_lines() if line.get_linestyle() in ("-", "--")]
        squares = [line for line in ax.get_lines() if line.get_marker() == "s"]
        assert len(squares) == len(curves) == 3
        for curve, square in zip(curves, squares, strict=True):
            assert square.get_xdata()[0] == curve.get_xdata()[-1]
            assert square.get_ydata()[0] == curve.get_ydata()[-1]
            assert square.get_color() == curve.get_color()
        assert not [line for line in ax.get_lines() if line.get_marker() == "|"]


def test_crossover_dot_at_293():
    """The dot on the 4-GPU fast curve sits at 293 sequences (alpha B / 1.5 x 10 KiB)."""
    left = batch_figure().axes[0]
    dots = [line for line in left.get_lines() if line.get_marker() == "o"]
    assert_allclose(dots[0].get_xdata()[0], 293)


def test_crossover_dots_are_hollow_and_clear_of_the_squares():
    """Hollow dots, filled squares; in each panel every two marks are at least 4 px apart.

    The slow fabric's crossover (208 sequences) sits 16 px left of the 2-GPU
    curve's square (274) at nearly its height on top; a 7 pt dot beside an
    8 pt square, each with a 1 pt edge, left 15.5 - 5.6 - 6.25 = 3.6 px.
    A mark reaches (size + edge) / 2 pt from its centre, at 100 px an inch.
    """
    fig = batch_figure()
    fig.draw_without_rendering()
    for ax in fig.axes:
        marks = [line for line in ax.get_lines() if line.get_marker() in ("o", "s")]
        dots = [line for line in marks if line.get_marker() == "o"]
        assert dots and all(line.get_markerfacecolor() == "white" for line in dots)
        assert all(line.get_markerfacecolor() != "white" for line in marks if line not in dots)
        placed = [
            (*ax.transData.transform(line.get_xydata()[0]),
             (line.get_markersize() + line.get_markeredgewidth()) / 2 * 100 / 72)
            for line in marks
        ]  # fmt: skip
        for i, (x, y, reach) in enumerate(placed):
            for u, v, other in placed[i + 1 :]:
                assert max(abs(x - u), abs(y - v)) - reach - other >= 4.0


def test_the_curves_that_run_together_stay_apart():
    """From about 16 to 128 sequences the 2-GPU fast and 4-GPU slow curves meet: the slow one is
    a wide band (5 pt) under the thin (2 pt) dashed 2-GPU line, in both panels and the key."""
    fig = batch_figure()
    for ax in fig.axes:
        two, four_fast, four_slow = [ln for ln in ax.get_lines() if ln.get_linestyle() != "None"]
        assert (two.get_linestyle(), four_fast.get_linestyle()) == ("--", "-")
        assert (two.get_linewidth(), four_slow.get_linewidth()) == (2.0, 5.0)
        assert two.get_zorder() > four_slow.get_zorder()
    legend = fig.axes[0].get_legend()
    key = {t.get_text(): h for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)}
    assert key["4 GPUs, slow fabric"].get_linewidth() == 5.0
    assert key["2 GPUs, fast fabric"].get_linestyle() == "--"
