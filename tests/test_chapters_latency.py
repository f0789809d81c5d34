"""The latency chapter's glued numbers: speed-up and timeline; the buyer's boxes in the model."""

import math

import pytest
from numpy.testing import assert_allclose

from lesson_lib.chapters.latency import _timeline_numbers, scaling_numbers
from lesson_lib.model.latency import (
    buyer_answers,
    speedup_curve,
    speedup_limit,
)
from lesson_lib.model.specimen import GPU, MODEL, SLOW


def test_scaling_numbers():
    """The chapter's strings, each with its unit."""
    out = scaling_numbers()
    assert out["limit_fast"] == "12.6x"
    assert out["limit_slow"] == "2.5x"
    assert out["break_even_4_vs_2"] == "41.5 us"
    assert out["ring_peak_n"] == "6"
    assert out["ring_latency_8"] == "30.7 us"
    # eight GPUs: 16.12 / (16.12 / 8 + 1.28) = 4.89 fast, 16.12 / (2.015 + 6.4) = 1.92 slow
    assert (out["speedup_fast_8"], out["speedup_slow_8"]) == ("4.9x", "1.9x")
    # the bytes on four fast GPUs: 128 x 1.5 x 10,240 B / 450e9 B/s = 0.00437 ms
    assert out["bandwidth_4_fast"] == "0.004 ms"


def test_scaling_numbers_for_the_story():
    """Four slow GPUs: 1.55x over one card, 1.12x slower than two fast."""
    out = scaling_numbers()
    assert out["speedup_1_to_4_slow"] == "1.55x"
    assert out["slow_4_vs_fast_2"] == "1.12x"
    assert out["weights_share_4"] == "13.5 GB"
    assert out["hbm_bandwidth"] == "3.35 TB/s"


def test_slow_ceiling_in_tokens_per_second_by_hand():
    """1 / (128 x 50 us) = 156.25 tokens/s; 90 % of the ceiling needs 16.12 ms / N <= 6.4 ms x (1/0.9 - 1)."""
    numbers = scaling_numbers()
    assert numbers["ceiling_tokens_per_s_slow"] == "156"
    one_gpu_s = 54e9 / 3.35e12  # 16.119 ms of weight streaming
    assert math.ceil(one_gpu_s / (128 * 50e-6 * (1 / 0.9 - 1))) == 23
    assert numbers["gpus_to_90_percent_slow"] == "23"
    # A second method: walk the speed-up curve (as the chapter's exercise does).
    ceiling = speedup_limit(MODEL, GPU, SLOW)
    curve = speedup_curve(MODEL, GPU, SLOW, range(1, 64))
    assert next(n for n, s in enumerate(curve, start=1) if s >= 0.9 * ceiling) == 23


def test_timeline_numbers_read_like_the_chapter():
    numbers = _timeline_numbers()
    assert numbers["wait_2_fast"] == "10 us"
    assert float(numbers["wait_4_slow"].split()[0]) > float(numbers["slice_4_slow"].split()[0])


def test_embedding_is_not_read_whole_by_hand():
    """248,320 rows x 5,120 x 2 bytes = 2,542,796,800 bytes, 2.54 GB; a token reads 10 KiB."""
    from lesson_lib.chapters.latency import _embedding_numbers

    v = _embedding_numbers()
    assert v["embedding_gb"] == f"{248_320 * 5_120 * 2 / 1e9:.2f} GB" == "2.54 GB"
    assert v["embedding_row"] == "10 KiB"
    # (54e9 - 2,542,796,800) / 2 / 3.35e12 = 7.680 ms, against 8.06 ms with every weight
    assert v["compute_2_without_embedding"] == "7.68 ms"


def test_at_short_context_the_slow_box_is_bound_by_its_wire_too():
    """4,096-token sequences: 676 fit on four slow GPUs, and their bytes take 20.77 ms a step.

    Per GPU: 84.93 GB - 54 GB / 4 = 71.43 GB free; a sequence holds 16 GiB x 4,096 /
    262,144 / 4 = 64 MiB of KV and 153,944,064 / 4 = 38,486,016 B of state per GPU,
    105,594,880 B: 71.43e9 / 105,594,880 = 676.4 -> 676. Each all-reduce carries
    676 x 10,240 B; a ring moves 1.5 x that per GPU at 64 GB/s, 128 a token:
    128 x 1.5 x 6,922,240 / 64e9 = 20.77 ms.
    """
    _, two, four = buyer_answers(context=4_096)
    assert four.sequences == 676
    assert_allclose(four.wire_bytes_s, 128 * 1.5 * 676 * 10_240 / 64e9, rtol=1e-6)
    assert four.wire_bytes_s / four.step_s > 0.3  # a third of the step on the wire
    assert four.tokens_per_s_per_gpu < two.tokens_per_s_per_gpu
    assert (four.context, two.context) == (4_096, 4_096)


def test_buyer_answers_refuse_a_context_out_of_range():
    """The context must be a whole number of tokens up to the model's maximum."""
    with pytest.raises(ValueError, match=r"context must be an integer from 1 to 262144"):
        buyer_answers(context=300_000)
    with pytest.raises(ValueError, match="context"):
        buyer_answers(context=0)
