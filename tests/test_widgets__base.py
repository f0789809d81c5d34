"""The shared widget frame: messages instead of tracebacks, PNG pictures."""

import io

import ipywidgets as widgets
import pytest
from PIL import Image

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


def test_figure_png_is_rgb_at_the_asked_resolution():
    """A 2 x 1.5 inch figure at 80 dpi is a 160 x 120 RGB PNG; the figure keeps its own dpi."""
    fig, _ = new_figure(2, 1.5)
    fig.set_dpi(100)
    picture = Image.open(io.BytesIO(figure_png(fig, dpi=80)))
    assert picture.size == (160, 120) and picture.mode == "RGB"
    assert fig.dpi == 100


def test_figure_png_follows_changes_of_a_reused_figure():
    """Drawing one figure again gives the same bytes, and new bytes once it has changed."""
    fig, ax = new_figure(2, 2)
    ax.bar([0], [1])
    first = figure_png(fig)
    assert figure_png(fig) == first
    ax.patches[0].set_height(0.5)
    assert figure_png(fig) != first
