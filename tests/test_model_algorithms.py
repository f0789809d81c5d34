"""Tests of lesson_lib.model.algorithms: ties between all-reduce algorithms, engines' limits, CUDA graphs."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from lesson_lib.model.algorithms import cuda_graph_fabric, tie_payload
from lesson_lib.model.specimen import FAST, FAST_RING


def test_tie_one_shot_two_shot_by_hand():
    """One hop saved (1.725 us) x 450 GB/s / (3 - 1.5) payloads = 517.5 kB at N = 4."""
    assert_allclose(tie_payload(FAST_RING, 4, "one_shot", "two_shot"), 1.725e-6 * 450e9 / 1.5)
    # At N = 8 the extra bytes are 7 - 1.75 payloads.
    assert_allclose(tie_payload(FAST_RING, 8, "one_shot", "two_shot"), 1.725e-6 * 450e9 / 5.25)


def test_tie_one_shot_ring_by_hand():
    """At N = 8 one-shot saves 13 hops and sends 5.25 payloads more than the ring."""
    assert_allclose(tie_payload(FAST_RING, 8, "one_shot", "ring"), 13 * 1.725e-6 * 450e9 / 5.25)


def test_tie_on_fixed_latency_fabric_is_zero_and_equal_bytes_refused():
    """No per-hop term: nothing to save, the tie is at 0; equal bytes never tie."""
    assert tie_payload(FAST, 8, "one_shot", "two_shot") == 0.0
    with pytest.raises(ValueError, match="same bytes"):
        tie_payload(FAST_RING, 8, "ring", "two_shot")
    with pytest.raises(ValueError, match="algorithm must be one of"):
        tie_payload(FAST_RING, 8, "ring", "tree")


def test_cuda_graph_fabric_lowers_alpha_only():
    """CUDA graphs take the launch overhead off alpha; bandwidth and hops are unchanged."""
    g = cuda_graph_fabric(FAST, 3e-6)
    assert_allclose(g.latency, 7e-6)
    assert (g.bandwidth, g.hop_latency) == (FAST.bandwidth, FAST.hop_latency)
    with pytest.raises(ValueError, match="saving_s"):
        cuda_graph_fabric(FAST, 20e-6)
