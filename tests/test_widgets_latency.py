"""The decode explorer: controls -> breakdown message and picture; bad values -> message."""

import pytest

from lesson_lib.widgets.latency import MAX_N, decode_breakdown, decode_explorer


def test_defaults_reproduce_the_lesson_four_gpu_line():
    """At 10 us, 3.35 TB/s, 4 GPUs, 450 GB/s: 5.314 ms and 188 tokens/s."""
    w = decode_explorer()
    assert w.error is None
    assert "5.314 ms" in w.message.value
    assert "188 tokens/s" in w.message.value
    assert bytes(w.image.value)[:4] == b"\x89PNG"
    assert "Stacked bars" in w.image.description


def test_slower_fabric_changes_message_and_picture():
    """50 us per all-reduce: 6.4 ms of latency, latency-bound, a new picture."""
    w = decode_explorer()
    before = bytes(w.image.value)
    w.controls["latency_us"].value = 50
    assert "latency 6.4 ms" in w.message.value
    assert "largest term: latency" in w.message.value
    assert bytes(w.image.value) != before


def test_one_gpu_has_no_communication():
    """N = 1: no latency, no bytes, speed-up 1x."""
    w = decode_explorer(n=1)
    assert "latency 0 ms" in w.message.value
    assert "Speed-up over one such card: 1x" in w.message.value
    assert w.controls["n"].max == MAX_N


def test_faster_memory_makes_the_wire_matter_more():
    """Doubling HBM bandwidth halves compute; the ceiling over one card drops with it."""
    msg_slow_hbm, _ = decode_breakdown(10, 3.35, 4, 450)
    msg_fast_hbm, _ = decode_breakdown(10, 6.7, 4, 450)
    assert "compute 4.03 ms" in msg_slow_hbm
    assert "compute 2.015 ms" in msg_fast_hbm
    assert "12.54x" in msg_slow_hbm and "6.27x" in msg_fast_hbm


@pytest.mark.parametrize(
    ("control", "value", "name"),
    [
        ("latency_us", -5.0, "latency (us)"),
        ("latency_us", 1e6, "latency (us)"),
        ("hbm_tbs", 0.0, "HBM bandwidth (TB/s)"),
        ("bandwidth_gbs", 0.0, "fabric bandwidth (GB/s)"),
    ],
)
def test_bad_values_show_a_message_not_a_traceback(control, value, name):
    """An out-of-range value sets .error and an alert naming the control; fixing it clears."""
    w = decode_explorer()
    good = w.controls[control].value
    picture = bytes(w.image.value)
    w.controls[control].value = value
    assert w.error is not None and name in w.error
    assert "Cannot show this choice" in w.message.value
    assert bytes(w.image.value) == picture
    w.controls[control].value = good
    assert w.error is None


def test_wrong_types_raise_type_error():
    """Strings are not numbers; N must be an integer."""
    with pytest.raises(TypeError, match="latency"):
        decode_breakdown("ten", 3.35, 4, 450)
    with pytest.raises(TypeError, match="N"):
        decode_breakdown(10, 3.35, 2.5, 450)
