"""Tests of lesson_lib.widgets.ring: the ring all-reduce stepper."""

import pytest

from lesson_lib.figures.ring import ring_state_figure
from lesson_lib.specimen import MODEL
from lesson_lib.tensor_parallel import simulate_hidden_allreduce
from lesson_lib.widgets._base import figure_png
from lesson_lib.widgets.ring import ring_message, ring_stepper_widget


def _count(nbytes):
    return f"{nbytes:,} B"


def test_defaults_show_end_of_reduce_scatter():
    """N = 4, step 3: each rank has sent 3 chunks of 2,560 B = 7,680 B; the whole is 15,360 B."""
    w = ring_stepper_widget()
    assert w.error is None
    assert (w.controls["n"].value, w.controls["step"].value) == (4, 3)
    assert w.controls["step"].max == 6
    msg = w.message.value
    assert "after step 3 of 6" in msg
    assert "Reduce-scatter done" in msg
    assert "<b>7,680 B (7.5 KiB)</b>" in msg
    assert "<b>15,360 B (15 KiB)</b>" in msg
    assert w.image.value[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("n", "step"), [(2, 1), (5, 6), (8, 14)])
def test_message_bytes_come_from_the_simulator(n, step):
    """The bytes-so-far in the message equal RingResult.bytes_sent_after(step)."""
    w = ring_stepper_widget()
    w.controls["n"].value = n
    w.controls["step"].value = step
    sent = simulate_hidden_allreduce(MODEL, n).bytes_sent_after(step)
    assert len(set(sent)) == 1  # 5120 elements split evenly for these N
    assert f"<b>{_count(sent[0])}" in w.message.value
    assert f"after step {step} of {2 * (n - 1)}" in w.message.value
    assert w.error is None


def test_uneven_chunks_show_a_range():
    """N = 3 splits 5120 elements 1707/1707/1706: the message gives the min..max per rank."""
    w = ring_stepper_widget(3, 4)
    sent = simulate_hidden_allreduce(MODEL, 3).bytes_sent_after(4)
    assert min(sent) != max(sent)
    assert f"{_count(min(sent))} (13.33 KiB) to {_count(max(sent))}" in w.message.value
    assert "13,653.33 B" in w.message.value  # the formula's fractional bytes


def test_picture_changes_with_step_and_n():
    """Moving either slider redraws the PNG."""
    w = ring_stepper_widget()
    first = w.image.value
    w.controls["step"].value = 4
    second = w.image.value
    assert second != first
    w.controls["n"].value = 6
    assert w.image.value not in (first, second)


def test_step_maximum_follows_n():
    """The step slider runs 0 .. 2(N-1) and a too-large step is clamped, never an error."""
    w = ring_stepper_widget()
    w.controls["n"].value = 8
    assert w.controls["step"].max == 14
    w.controls["step"].value = 14
    w.controls["n"].value = 2
    assert w.controls["step"].max == 2
    assert w.controls["step"].value == 2
    assert w.error is None
    assert "after step 2 of 2" in w.message.value
    assert "Done: every rank holds the whole sum" in w.message.value


def test_step_beyond_range_shows_a_message_not_a_traceback():
    """If the slider's range is widened by hand, an impossible step gives a message."""
    w = ring_stepper_widget()
    picture = w.image.value
    w.controls["step"].max = 20
    w.controls["step"].value = 20
    assert w.error is not None and "step must be an integer from 0 to 6" in w.error
    assert 'role="alert"' in w.message.value
    assert w.image.value == picture


def test_builder_rejects_bad_initial_values():
    """The builder checks its own arguments and names them."""
    with pytest.raises(ValueError, match="n must be an integer from 2 to 8"):
        ring_stepper_widget(9)
    with pytest.raises(ValueError, match="step must be an integer from 0 to 2"):
        ring_stepper_widget(2, 3)
    with pytest.raises(TypeError, match="n must be an integer"):
        ring_stepper_widget(4.0)


def test_ring_message_phases():
    """Start, reduce-scatter, end of reduce-scatter, all-gather and done each get a note."""
    r = simulate_hidden_allreduce(MODEL, 4)
    notes = [ring_message(r, s) for s in range(7)]
    assert "Before any transfer" in notes[0]
    assert "Reduce-scatter:" in notes[1]
    assert "Reduce-scatter done" in notes[3]
    assert "All-gather" in notes[4]
    assert "Done" in notes[6]
    with pytest.raises(ValueError, match="step"):
        ring_message(r, 7)


def test_picture_is_the_state_the_message_describes():
    """The PNG is exactly the figure of the N and step the message names, redrawn in place."""
    w = ring_stepper_widget()
    w.controls["n"].value = 7
    w.controls["step"].value = 9
    assert "<b>N = 7 ranks, after step 9 of 12.</b>" in w.message.value
    picture = bytes(w.image.value)
    assert picture == figure_png(ring_state_figure(simulate_hidden_allreduce(MODEL, 7), 9))
    w.controls["step"].value = 8
    assert bytes(w.image.value) not in (picture, b"")


def test_two_widgets_keep_their_own_pictures():
    """Each widget redraws its own figure: moving one leaves the other's picture alone."""
    first, second = ring_stepper_widget(), ring_stepper_widget()
    before = bytes(second.image.value)
    first.controls["n"].value = 6
    second.controls["step"].value = 2
    second.controls["step"].value = 3
    assert bytes(second.image.value) == before
    assert bytes(first.image.value) != before
