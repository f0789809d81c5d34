"""The prefill widget: controls in, message and picture out, never a traceback."""

import pytest

from lesson_lib.figures.prefill import prefill_explorer_figure
from lesson_lib.specimen import FAST, PROMPT_TOKENS, SLOW
from lesson_lib.units import GB, US
from lesson_lib.widgets._base import figure_png
from lesson_lib.widgets.prefill import choose_fabric, prefill_widget


@pytest.fixture
def widget():
    return prefill_widget()


def test_defaults_show_bandwidth_bound_prefill(widget):
    """At the lesson's defaults the prompt's 40 MiB message is bandwidth-bound."""
    text = widget.message.value
    assert "40 MiB" in text and "<b>bandwidth-bound</b>" in text
    assert "latency-bound" in text  # the decode message
    assert bytes(widget.image.value)[:4] == b"\x89PNG"
    assert widget.error is None


def test_short_prompt_becomes_latency_bound(widget):
    """A 100-token prompt's message is below the crossover; the picture changes."""
    before = bytes(widget.image.value)
    widget.controls["prompt_tokens"].value = 100
    assert "<b>latency-bound</b>. One" in widget.message.value
    assert "below the crossover" in widget.message.value
    assert bytes(widget.image.value) != before


def test_slow_fabric_fills_preset_values(widget):
    """Choosing the slow fabric shows its latency and bandwidth, read-only."""
    widget.controls["fabric"].value = "slow"
    assert widget.controls["latency_us"].value == pytest.approx(SLOW.latency / US)
    assert widget.controls["bandwidth_gb_s"].value == pytest.approx(SLOW.bandwidth / GB)
    assert widget.controls["latency_us"].disabled
    assert "2.13 MB" in widget.message.value  # 50 us x 64 GB/s / 1.5 (ring of 4)


def test_custom_fabric_is_editable(widget):
    """A custom fabric reads the two fields; a 10x slower wire moves the crossover down."""
    widget.controls["fabric"].value = "custom"
    assert not widget.controls["bandwidth_gb_s"].disabled
    widget.controls["bandwidth_gb_s"].value = 45.0
    assert "0.3 MB" in widget.message.value  # 10 us x 45 GB/s / 1.5 (ring of 4)
    assert widget.error is None


@pytest.mark.parametrize(
    ("control", "value", "needle"),
    [
        ("prompt_tokens", 0, "prompt_tokens"),
        ("prompt_tokens", 10**7, "prompt_tokens"),
        ("latency_us", -5.0, "latency_us"),
        ("bandwidth_gb_s", 0.0, "bandwidth_gb_s"),
    ],
)
def test_bad_values_show_a_message(widget, control, value, needle):
    """Out-of-range input shows a message naming the parameter, not a traceback."""
    widget.controls["fabric"].value = "custom"
    widget.controls[control].value = value
    assert widget.error is not None and needle in widget.error
    assert "Cannot show this choice" in widget.message.value


def test_choose_fabric():
    """Presets come back unchanged; custom values are converted to SI units."""
    assert choose_fabric("fast", 0, 1) is FAST
    custom = choose_fabric("custom", 20.0, 100.0)
    assert custom.latency == pytest.approx(20 * US) and custom.bandwidth == pytest.approx(100 * GB)
    with pytest.raises(ValueError, match="fabric"):
        choose_fabric("warp", 1, 1)


def test_picture_is_the_setting_the_message_describes(widget):
    """After a change the PNG is the explorer figure of that fabric, ring and prompt."""
    widget.controls["fabric"].value = "slow"
    widget.controls["n"].value = 2
    widget.controls["prompt_tokens"].value = 100
    assert "100 hidden vectors" in widget.message.value
    assert "<b>latency-bound</b>. One" in widget.message.value
    assert bytes(widget.image.value) == figure_png(prefill_explorer_figure(SLOW, 2, 100))
    widget.controls["fabric"].value = "fast"
    widget.controls["n"].value = 4
    widget.controls["prompt_tokens"].value = PROMPT_TOKENS
    assert bytes(widget.image.value) == figure_png(prefill_explorer_figure(FAST, 4, PROMPT_TOKENS))


def test_zero_custom_latency_is_a_message_not_a_traceback():
    """A wire with no latency has no crossover: the widget says so and keeps its picture."""
    w = prefill_widget()
    w.controls["fabric"].value = "custom"
    picture = bytes(w.image.value)
    w.controls["latency_us"].value = 0
    assert w.error == "latency_us must be > 0 us, got 0"
    assert "Cannot show this choice" in w.message.value
    assert bytes(w.image.value) == picture


def test_longest_prompt_stays_on_the_axis():
    """A full-context prompt's payload (2.5 GiB) is drawn inside the x range."""
    w = prefill_widget()
    w.controls["prompt_tokens"].value = 262_144
    assert w.error is None
    assert "2,560 MiB" in w.message.value
