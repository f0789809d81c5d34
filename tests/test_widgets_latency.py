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


def test_batch_control_moves_throughput_and_message():
    """Batch 64 on 4 fast GPUs, weights only: 64 vectors per all-reduce, far more tokens/s."""
    w = decode_explorer()
    w.controls["batch"].value = 64
    assert w.error is None and "64 sequences" in w.message.value
    # By hand: 4.03 ms of weights + 1.28 ms latency + 128 x 1.5 x 64 x 10 KiB / 450 GB/s.
    total = 13.5e9 / 3.35e12 + 128 * 10e-6 + 128 * 1.5 * 64 * 10240 / 450e9
    assert f"{64 / total:,.0f} tokens/s" in w.message.value


def test_context_control_adds_kv_reads():
    """Full context on 4 GPUs adds about 1.29 ms of KV and state reads to the weights' 4.03."""
    w = decode_explorer()
    w.controls["context"].value = 262_144
    reads = 13.5e9 / 3.35e12 + (4 * 2**30 + 153_944_064 / 4) / 3.35e12
    assert f"weights + KV reads {reads * 1e3:.3f} ms" in w.message.value


def test_algorithm_and_hop_controls():
    """With 1.725 us per hop on 8 GPUs the ring pays 14 hops, one-shot 1."""
    w = decode_explorer(n=8)
    w.controls["hop_us"].value = 1.725
    ring = w.message.value
    assert f"latency {128 * (10 + 14 * 1.725) / 1e3:.3f} ms" in ring
    assert "peaks and then falls" in ring
    w.controls["algorithm"].value = "one_shot"
    assert f"latency {128 * (10 + 1.725) / 1e3:.3f} ms" in w.message.value
    assert w.message.value != ring


def test_bad_choices_refused_at_build_and_as_message():
    """An unknown batch at build time raises; a negative hop becomes a message."""
    with pytest.raises(ValueError, match="batch must be one of"):
        decode_explorer(batch=3)
    w = decode_explorer()
    w.controls["hop_us"].value = -1
    assert w.error is not None and "per-hop latency" in w.error
