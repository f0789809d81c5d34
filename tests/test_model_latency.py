"""Tests of lesson_lib.model.latency: decode lines, speed-up with N, the token's timeline, the buyer's boxes."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib import GB
from lesson_lib.model.collectives import allreduce_time
from lesson_lib.model.latency import (
    allreduce_anatomy,
    break_even_latency,
    decode_lines,
    peak_n,
    speedup_curve,
    speedup_limit,
    token_timeline,
)
from lesson_lib.model.specimen import (
    FAST,
    FAST_RING,
    GPU,
    MODEL,
    PCIE_BANDWIDTH,
    SLOW,
)
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import MS, US


def test_three_lines_in_lesson_arithmetic():
    """Compute + latency, bandwidth term left out: 9.34 / 5.31 / 10.43 ms."""
    totals = [line.step.total_s / MS for line in decode_lines(include_bandwidth=False)]
    assert_allclose(totals, [9.34, 5.31, 10.43], atol=0.005)


def test_bandwidth_term_barely_moves_decode():
    """With wire bytes / bandwidth added, the slow line is about 10.46 ms at 64 GB/s."""
    assert SLOW.bandwidth == PCIE_BANDWIDTH == 64 * GB
    without = decode_lines(include_bandwidth=False)
    with_bw = decode_lines(include_bandwidth=True)
    assert_allclose(with_bw[2].step.total_s / MS, 10.46, atol=0.005)
    for a, b in zip(without, with_bw, strict=True):
        assert 0 < b.step.total_s - a.step.total_s < 0.05 * MS


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
    # Each fitted part says what the fit is, in words (not "fit" alone).
    assert "line fitted through published 2- and 4-GPU times" in parts[1].label
    assert "same fitted line" in parts[2].label
    assert all(p.source for p in parts)
    with pytest.raises(ValueError, match="launch_s"):
        allreduce_anatomy(1024, launch_s=1.0)
