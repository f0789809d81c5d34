"""Decode scaling with N: speed-up curves, their ceiling, break-even latencies."""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib.chapters.latency import buyer_numbers, scaling_numbers, timeline_numbers
from lesson_lib.model.collectives import allreduce_time
from lesson_lib.model.latency import (
    allreduce_anatomy,
    break_even_latency,
    buyer_answers,
    peak_n,
    speedup_curve,
    speedup_limit,
    token_timeline,
)
from lesson_lib.model.specimen import FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import MS, US


def test_curve_starts_at_one_and_reproduces_the_lesson():
    """1 GPU is the baseline; the curve's 4/2 ratio is the lesson's 1.76x."""
    curve = speedup_curve(MODEL, GPU, FAST, [1, 2, 4])
    assert curve[0] == 1.0
    assert_allclose(curve[2] / curve[1], 9.34 / 5.31, rtol=2e-3)
    assert_allclose(curve[1], 16.12 / 9.34, rtol=2e-3)


def test_fixed_latency_curve_rises_but_stays_under_its_ceiling():
    """More GPUs always help a little, never past compute_1 / (128 x latency)."""
    ns = np.arange(1, 65)
    for fabric in (FAST, SLOW):
        curve = speedup_curve(MODEL, GPU, fabric, ns)
        assert np.all(np.diff(curve) > 0)
        assert np.all(curve < speedup_limit(MODEL, GPU, fabric))


def test_ceiling_values_and_approach():
    """16.12 ms / 1.28 ms = 12.6x on the fast fabric, 2.5x on the slow one; reached at large N."""
    compute_1 = decode_step(MODEL, GPU, FAST, 1).compute_s
    assert_allclose(speedup_limit(MODEL, GPU, FAST), compute_1 / (128 * 10 * US))
    assert_allclose(speedup_limit(MODEL, GPU, SLOW), compute_1 / (128 * 50 * US))
    far = speedup_curve(MODEL, GPU, FAST, [4096])[0]
    assert_allclose(far, speedup_limit(MODEL, GPU, FAST), rtol=5e-3)


def test_ceiling_special_cases():
    """A per-hop ring has no ceiling above 0; a free fabric has none at all; bytes lower it."""
    assert speedup_limit(MODEL, GPU, FAST_RING) == 0.0
    assert speedup_limit(MODEL, GPU, Fabric("free", 0.0, 1e12)) == math.inf
    with_bytes = speedup_limit(MODEL, GPU, SLOW, include_bandwidth=True)
    assert with_bytes < speedup_limit(MODEL, GPU, SLOW)
    far = speedup_curve(MODEL, GPU, SLOW, [4096], include_bandwidth=True)[0]
    assert_allclose(far, with_bytes, rtol=5e-3)


def test_break_even_latency_ties_the_two_configurations():
    """At 41.5 us, 4 GPUs take exactly as long as 2 on the fast fabric; faster wins."""
    target = decode_step(MODEL, GPU, FAST, 2, include_bandwidth=False).total_s
    latency = break_even_latency(MODEL, GPU, 4, target)
    assert_allclose(latency, (9.34 - 4.03) * MS / 128, rtol=2e-3)
    tie = decode_step(MODEL, GPU, Fabric("tie", latency, 1e12), 4, include_bandwidth=False)
    assert_allclose(tie.total_s, target)
    assert latency < SLOW.latency  # why four slow GPUs lose to two fast ones


def test_break_even_latency_rejects_unreachable_targets():
    """A target below the compute time of n GPUs cannot be met at any latency."""
    with pytest.raises(ValueError, match="target_s must exceed"):
        break_even_latency(MODEL, GPU, 4, 1 * MS)
    with pytest.raises(ValueError, match="n must be"):
        break_even_latency(MODEL, GPU, 1, 1.0)


def test_peak_n():
    """A per-hop ring peaks at 6 GPUs; a fixed-latency fabric keeps improving."""
    assert peak_n(MODEL, GPU, FAST_RING) == 6
    assert peak_n(MODEL, GPU, FAST, max_n=16) == 16


def test_scaling_numbers():
    """The chapter's strings, each with its unit."""
    out = scaling_numbers()
    assert out["limit_fast"] == "12.6x"
    assert out["limit_slow"] == "2.5x"
    assert out["break_even_4_vs_2"] == "41.5 us"
    assert out["break_even_2_vs_1"] == "63 us"
    assert out["ring_peak_n"] == "6"
    assert out["ring_latency_8"] == "30.7 us"


def test_scaling_numbers_for_the_story():
    """Four slow GPUs: 1.55x over one card, 1.12x slower than two fast; bytes barely count."""
    out = scaling_numbers()
    assert out["speedup_1_to_4_slow"] == "1.55x"
    assert out["slow_4_vs_fast_2"] == "1.12x"
    assert out["weights_share_4"] == "13.5 GB"
    assert out["hbm_bandwidth"] == "3.35 TB/s"
    assert out["bandwidth_4_slow"] == "0.031 ms"


def test_decode_lines_table():
    """Three rows: the lesson's totals, then the bandwidth term and the total with it."""
    from lesson_lib.chapters.latency import decode_lines_table

    html = decode_lines_table()
    assert html.count("<tr>") == 4
    assert "<td>4 GPUs, slow fabric</td><td>4.03 ms</td><td>6.4 ms</td><td>10.43 ms</td>" in html
    assert "<td>0.031 ms</td><td>10.46 ms</td>" in html


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


def test_curve_follows_the_algorithm_by_hand():
    """One-shot on FAST_RING at N = 8: 128 x 8.275 us of latency instead of the ring's
    128 x 30.7 us, so 16.12 ms / (16.12 / 8 ms + 1.059 ms)."""
    compute_1 = 54e9 / 3.35e12
    one_shot = compute_1 / (compute_1 / 8 + 128 * 8.275e-6)
    assert_allclose(speedup_curve(MODEL, GPU, FAST_RING, [8], algorithm="one_shot"), [one_shot])
    ring = compute_1 / (compute_1 / 8 + 128 * 30.7e-6)
    assert_allclose(speedup_curve(MODEL, GPU, FAST_RING, [8]), [ring])


def test_peak_n_follows_the_algorithm_and_tries_64_by_default():
    """One-shot's latency does not grow with N, so it keeps improving to the last N tried;
    by default that is 64."""
    assert peak_n(MODEL, GPU, FAST_RING, 16, algorithm="one_shot") == 16
    assert peak_n(MODEL, GPU, FAST) == 64


def test_ceiling_with_bytes_by_hand():
    """On the slow fabric the bytes add 2 x 10 KiB / 64 GB/s = 0.32 us to each 50 us."""
    compute_1 = 54e9 / 3.35e12
    want = compute_1 / (128 * (50e-6 + 2 * 10240 / 64e9))
    assert_allclose(speedup_limit(MODEL, GPU, SLOW, include_bandwidth=True), want)


def test_target_equal_to_the_compute_time_is_refused():
    """4 GPUs compute a token in 54e9 / (4 x 3.35e12) s; that target leaves no time to talk."""
    compute_4 = MODEL.weight_bytes / (4 * GPU.hbm_bandwidth)
    with pytest.raises(ValueError, match="target_s must exceed"):
        break_even_latency(MODEL, GPU, 4, compute_4)


def test_unreachable_target_message_by_hand():
    """A card streaming 5.4 GB/s takes 54e9 / (2 x 5.4e9) = 5 s on 2 GPUs; a 10 us target
    cannot be met. Both times are in ms, so they compare at a glance."""
    from lesson_lib.model.specs import Accelerator

    slow_memory = Accelerator("slow memory", 1e12, hbm_bandwidth=5.4e9, peak_flops=1e15)
    with pytest.raises(ValueError) as info:
        break_even_latency(MODEL, slow_memory, 2, 1e-5)
    assert str(info.value) == (
        "target_s must exceed the compute time of 2 GPUs (5,000 ms), got 0.01 ms"
    )


def test_decode_lines_table_caption():
    """The caption is passed to the table."""
    from lesson_lib.chapters.latency import decode_lines_table

    assert "<caption>Decode lines</caption>" in decode_lines_table("Decode lines")


def test_timeline_adds_up_to_the_step_and_alternates():
    segments = token_timeline(MODEL, GPU, FAST, 2)
    assert len(segments) == 3 * MODEL.allreduces_per_token
    assert [s.kind for s in segments[:3]] == ["compute", "latency", "bandwidth"]
    assert_allclose(sum(s.duration_s for s in segments), decode_step(MODEL, GPU, FAST, 2).total_s)
    for a, b in itertools.pairwise(segments):
        assert_allclose(b.start_s, a.start_s + a.duration_s)
    # 8.06 ms of compute over 128 slices, 10 us per wait (by hand)
    assert_allclose(segments[0].duration_s, 8.06e-3 / 128, rtol=1e-3)
    assert_allclose(segments[1].duration_s, 10 * US)


def test_timeline_can_stop_early_and_refuses_one_gpu():
    assert len(token_timeline(MODEL, GPU, SLOW, 4, allreduces=2)) == 6
    with pytest.raises(ValueError, match="n"):
        token_timeline(MODEL, GPU, FAST, 1)
    with pytest.raises(ValueError, match="allreduces"):
        token_timeline(MODEL, GPU, FAST, 2, allreduces=MODEL.allreduces_per_token + 1)


def test_anatomy_adds_up_to_the_allreduce():
    parts = allreduce_anatomy(MODEL.hidden_vector_bytes)
    total = allreduce_time(MODEL.hidden_vector_bytes, 2, FAST_RING)
    assert_allclose(sum(p.seconds for p in parts), total)
    assert_allclose(parts[0].seconds + parts[1].seconds + parts[2].seconds, 10 * US)
    assert parts[2].label.startswith("2 hops")
    assert all(p.source for p in parts)
    with pytest.raises(ValueError, match="launch_s"):
        allreduce_anatomy(1024, launch_s=1.0)


def test_timeline_numbers_read_like_the_chapter():
    numbers = timeline_numbers()
    assert numbers["wait_2_fast"] == "10 us"
    assert numbers["anatomy_launch"] == "3 us"
    assert float(numbers["wait_4_slow"].split()[0]) > float(numbers["slice_4_slow"].split()[0])


def test_the_buyer_gets_two_answers_by_hand():
    """Latency: two fast GPUs win; throughput at full context: four slow GPUs win.

    One stream, the lesson's arithmetic: 16.12, 9.34 and 10.43 ms (the worked example).
    Full context (262,144 tokens; H100 84.93 GB, 3.35 TB/s; KV 16 GiB and state
    153,944,064 B per sequence, the state read and written back):
    - one GPU: 1 sequence; 54e9 / 3.35e12 = 16.119 ms + (16 GiB + 2 x 153,944,064 B)
      / 3.35e12 = 5.220 ms: 21.34 ms, 46.9 tokens/s;
    - two fast: 6 sequences; 8.060 ms + 6 x (8 GiB + 153,944,064 B) / 3.35e12 = 15.661
      ms + 128 x 10 us + 128 x 6 x 10,240 B / 450 GB/s = 0.017 ms: 25.02 ms, 239.8 tokens/s;
    - four slow: 16 sequences; 4.030 ms + 16 x (4 GiB + 76,972,032 B) / 3.35e12 = 20.882
      ms + 128 x 50 us + 128 x 1.5 x 16 x 10,240 B / 64 GB/s = 0.492 ms: 31.80 ms,
      503.1 tokens/s, 10.7x one GPU and 2.1x two fast GPUs.
    """
    one, two, four = buyer_answers()
    assert [a.sequences for a in (one, two, four)] == [1, 6, 16]
    assert_allclose([a.tokens_per_s for a in (one, two, four)], [46.86, 239.8, 503.1], rtol=2e-3)
    assert_allclose(
        [a.stream_s for a in (one, two, four)], [16.12e-3, 9.34e-3, 10.43e-3], rtol=1e-3
    )
    v = buyer_numbers()
    assert v["stream_winner"] == "two GPUs on the fast fabric"
    assert v["throughput_winner"] == "four GPUs on the slow fabric"
    assert (v["throughput_4_vs_1"], v["throughput_4_vs_2"]) == ("10.7x", "2.1x")
    assert (v["box_4_tokens_per_s"], v["box_2_tokens_per_s"], v["box_1_tokens_per_s"]) == (
        "503",
        "240",
        "47",
    )


def test_at_full_context_even_one_stream_prefers_four_slow_gpus():
    """One full-length stream: 11.77 ms on four slow GPUs, 11.95 ms on two fast ones.

    Four GPUs each read a quarter of the 16 GiB cache, two a half:
    4.030 + 1.305 + 6.4 + 128 x 1.5 x 10,240 / 64e9 (0.031) = 11.77 ms against
    8.060 + 2.610 + 1.28 + 128 x 10,240 / 450e9 (0.003) = 11.95 ms.
    """
    _, two, four = buyer_answers()
    assert_allclose(four.stream_full_s, 11.766e-3, rtol=1e-3)
    assert_allclose(two.stream_full_s, 11.953e-3, rtol=1e-3)
    assert buyer_numbers()["stream_full_winner"] == "four GPUs on the slow fabric"


def test_embedding_is_not_read_whole_by_hand():
    """248,320 rows x 5,120 x 2 bytes = 2,542,796,800 bytes, 2.54 GB; a token reads 10 KiB."""
    from lesson_lib.chapters.latency import embedding_numbers

    v = embedding_numbers()
    assert v["embedding_gb"] == f"{248_320 * 5_120 * 2 / 1e9:.2f} GB" == "2.54 GB"
    assert v["embedding_row"] == "10 KiB"
