"""A decoded token as a chain of compute and all-reduces; one all-reduce taken apart."""

from __future__ import annotations

import itertools

import pytest
from numpy.testing import assert_allclose

from lesson_lib.collectives import allreduce_time
from lesson_lib.specimen import FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.step_time import decode_step
from lesson_lib.timeline import allreduce_anatomy, timeline_numbers, token_timeline
from lesson_lib.units import US


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
