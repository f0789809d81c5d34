"""Tests of lesson_lib.chapters.sizing: the sizing chapter's glue strings."""

from lesson_lib import GB
from lesson_lib.chapters.sizing import sizing_numbers
from lesson_lib.model.specimen import GPU


def test_sizing_numbers_strings():
    """The glued strings: per-GPU weights and KV, free room, the 4x factor."""
    s = sizing_numbers()
    assert (s["sizing_weights_1"], s["sizing_weights_2"], s["sizing_weights_4"]) == (
        "54 GB",
        "27 GB",
        "13.5 GB",
    )
    assert (s["sizing_kv_full_2"], s["sizing_kv_full_4"], s["sizing_kv_full_8"]) == (
        "8 GiB",
        "4 GiB",
        "4 GiB",
    )
    assert s["sizing_pure_factor"] == "4x"
    assert s["sizing_headroom_gb"] == "30.93 GB"  # 79.1 x 2**30 B - 54 GB
    assert s["sizing_headroom_gib"] == f"{(79.1 * 2**30 - 54e9) / 2**30:.2f} GiB" == "28.81 GiB"
    assert s["sizing_sequences_8"] == "18"  # (84.93 - 6.75) / (4 GiB + state / 8) = 18.1
    assert (s["sizing_attention_layers"], s["sizing_layers"]) == ("16", "64")
    assert all(key.startswith("sizing_") for key in s)


def test_sizing_numbers_follow_the_card():
    """A bigger card leaves more room: the strings are computed, not fixed."""
    bigger = type(GPU)("big", 141 * GB, GPU.hbm_bandwidth, GPU.peak_flops)
    assert sizing_numbers(accel=bigger)["sizing_headroom_gb"] == "87 GB"


def test_nccl_buffers_are_aiconfigurators_figure_in_mib():
    """aiconfigurator's TP 4 figure, 411,041,792 B = 392 x 2**20 B, printed in MiB."""
    from lesson_lib.chapters.sizing import sizing_numbers

    assert 392 * 2**20 == 411_041_792
    assert sizing_numbers()["sizing_nccl_buffer_4"] == "392 MiB"
