"""Tests of lesson_lib.widgets.sizing: controls change the verdict and the picture."""

import pytest

from lesson_lib.figures.sizing import memory_bars_figure
from lesson_lib.memory import memory_budget
from lesson_lib.specimen import GPU, MODEL
from lesson_lib.widgets._base import figure_png
from lesson_lib.widgets.sizing import sizing_message, sizing_widget


@pytest.fixture
def widget():
    return sizing_widget()


def test_defaults_show_one_full_sequence_fitting(widget):
    """Defaults: one full-length sequence fits on the 84.93 GB (79.1 GiB) card, 13.6 GB free.

    84.93 - 54 (weights) - 17.18 (KV) - 0.15 (state) = 13.6 GB.
    """
    assert widget.error is None
    assert widget.values == {
        "context_tokens": MODEL.max_context,
        "sequences": 1,
        "n": 1,
        "card_gb": 84.93,
    }
    assert widget.message.value.startswith("<p><b>Fits</b>")
    assert "13.6 GB free" in widget.message.value
    assert widget.image.value[:8] == b"\x89PNG\r\n\x1a\n"


def test_too_many_sequences_says_by_how_much(widget):
    """Three full sequences on one card: 54 + 3 x 17.33 = 106 GB, short by 21 GB of 84.93."""
    before = widget.image.value
    widget.controls["sequences"].value = 3
    assert widget.error is None
    assert "Does not fit" in widget.message.value
    assert "short by 21.07 GB" in widget.message.value
    assert "At most 1 sequence fits" in widget.message.value
    assert widget.image.value != before


def test_tensor_parallelism_makes_room(widget):
    """The same six sequences fit at TP = 2, and the message and picture change."""
    widget.controls["sequences"].value = 6
    assert "Does not fit" in widget.message.value
    before = widget.image.value
    widget.controls["n"].value = 2
    assert widget.message.value.startswith("<p><b>Fits</b>")
    assert "At most 6 sequences fit" in widget.message.value
    assert widget.image.value != before


def test_tp8_warns_about_kv_heads(widget):
    """TP = 8 exceeds the 4 KV heads: the message says the cache stops shrinking."""
    widget.controls["n"].value = 8
    assert "KV heads" in widget.message.value
    widget.controls["n"].value = 4
    assert "KV heads" not in widget.message.value


def test_small_card_cannot_hold_weights(widget):
    """A 16 GB card cannot even hold the weights at TP = 1, and says so."""
    widget.controls["card_gb"].value = 16
    assert "Does not fit" in widget.message.value
    assert "weights alone" in widget.message.value
    assert "16 GB" in widget.message.value


def test_shorter_context_fits_more(widget):
    """At 4,096 tokens many more sequences fit than at full length."""
    widget.controls["context_tokens"].value = 4096
    assert "4,096 tokens each" in widget.message.value
    assert "At most 1 sequence" not in widget.message.value


def test_bad_value_shows_a_message_not_a_traceback(widget):
    """A card size past the allowed range becomes a message; the last picture stays."""
    widget.controls["sequences"].value = 2
    good = widget.image.value
    widget.controls["card_gb"].max = 1000  # widen the slider past what render accepts
    widget.controls["card_gb"].value = 1000
    assert widget.error is not None and "card_gb" in widget.error
    assert "Cannot show this choice" in widget.message.value
    assert widget.image.value == good
    widget.controls["card_gb"].value = 160
    assert widget.error is None
    assert widget.message.value.startswith("<p><b>Fits</b>")


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"context_tokens": 10}, "context_tokens"),
        ({"sequences": -1}, "sequences"),
        ({"n": 3}, "n must be one of"),
        ({"card_gb": 4}, "card_gb"),
    ],
)
def test_bad_initial_values_raise(kwargs, word):
    """Initial values outside the controls' ranges raise ValueError naming them."""
    with pytest.raises(ValueError, match=word):
        sizing_widget(**kwargs)


def test_sizing_message_for_tp4_full_context():
    """The message function alone: 16 full sequences fit at TP = 4 (70.43 / 4.33 GB = 16.5)."""
    text = sizing_message(MODEL, GPU, 4, MODEL.max_context, 16)
    assert "Fits" in text and "At most 16 sequences fit" in text
    assert "Each of the 4 GPUs holds" in text


def test_picture_is_the_budget_the_message_describes(widget):
    """After a change the PNG is the fixed-layout bar of the budget the message states."""
    widget.controls["sequences"].value = 3
    assert "short by 21.07 GB" in widget.message.value
    budget = memory_budget(MODEL, GPU, 1, MODEL.max_context, 3)
    expected = memory_bars_figure(
        [budget], ["the GPU\n3 x 262,144 tokens"], width=5.0, height=3.4, layout="fixed"
    )
    assert bytes(widget.image.value) == figure_png(expected)
    first = bytes(widget.image.value)
    widget.controls["n"].value = 4
    widget.controls["n"].value = 1
    assert bytes(widget.image.value) == first  # redrawn in place, nothing left over
