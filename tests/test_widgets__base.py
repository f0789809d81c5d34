"""The shared widget frame: messages instead of tracebacks, PNG pictures."""

import ipywidgets as widgets
import pytest

from lesson_lib.figures._style import new_figure
from lesson_lib.widgets._base import LessonWidget, figure_png


def render(n):
    if n > 3:
        raise ValueError(f"n must be at most 3, got {n}")
    fig, ax = new_figure(2, 2)
    ax.bar([0], [n])
    return f"<p>n = {n}</p>", fig


def make():
    return LessonWidget(
        [widgets.IntSlider(value=1, min=1, max=5)], render, ["n"], alt="A bar of height n."
    )


def test_initial_render():
    """Built widgets show their message and picture at once."""
    w = make()
    assert w.message.value == "<p>n = 1</p>"
    assert bytes(w.image.value)[:4] == b"\x89PNG"
    assert w.image.description == "A bar of height n."
    assert w.error is None


def test_value_change_redraws():
    """Moving a control updates the message and the picture."""
    w = make()
    before = bytes(w.image.value)
    w.controls["n"].value = 3
    assert w.message.value == "<p>n = 3</p>"
    assert bytes(w.image.value) != before


def test_bad_choice_shows_message_not_traceback():
    """A ValueError becomes an escaped alert; the last good picture stays."""
    w = make()
    w.controls["n"].value = 2
    picture = bytes(w.image.value)
    w.controls["n"].value = 5
    assert "Cannot show this choice" in w.message.value
    assert "n must be at most 3, got 5" in w.message.value
    assert w.error == "n must be at most 3, got 5"
    assert bytes(w.image.value) == picture
    w.controls["n"].value = 1
    assert w.error is None


def test_mismatched_names():
    """Controls and names must pair up."""
    with pytest.raises(ValueError, match="same length"):
        LessonWidget([widgets.IntSlider()], render, ["a", "b"], alt="x")


def test_figure_png_is_a_png():
    """figure_png returns PNG bytes."""
    fig, _ = new_figure(1, 1)
    assert figure_png(fig)[:4] == b"\x89PNG"


def test_alt_text_is_in_the_saved_state():
    """The picture's alt text is a synced trait, so the static site can show it."""
    w = make()
    assert w.image.alt == "A bar of height n."
    assert w.image.get_state()["alt"] == "A bar of height n."
    assert "alt" in w.image.keys
