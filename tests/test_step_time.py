"""Decode and prefill step times: roofline compute plus all-reduces."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from lesson_lib import Fabric, decode_step, prefill_step, speedup
from lesson_lib.specimen import FAST, GPU, MODEL, SLOW


def test_decode_terms():
    """Compute = weights / (n HBM); latency = 128 x alpha; bandwidth = 128 x wire / B."""
    s = decode_step(MODEL, GPU, FAST, 4)
    assert_allclose(s.compute_s, 54e9 / (4 * 3.35e12))
    assert_allclose(s.latency_s, 128 * 10e-6)
    assert_allclose(s.bandwidth_s, 128 * 1.5 * 10240 / 450e9)
    assert_allclose(s.total_s, s.compute_s + s.latency_s + s.bandwidth_s)
    assert_allclose(s.tokens_per_s, 1 / s.total_s)
    assert s.bound == "compute" and s.communication_bound == "latency"


def test_lesson_view_drops_only_bandwidth():
    """include_bandwidth=False zeroes the bandwidth term and nothing else."""
    a = decode_step(MODEL, GPU, SLOW, 4)
    b = decode_step(MODEL, GPU, SLOW, 4, include_bandwidth=False)
    assert b.bandwidth_s == 0
    assert (a.compute_s, a.latency_s) == (b.compute_s, b.latency_s)


def test_single_gpu_has_no_communication():
    """n = 1: no all-reduces."""
    s = decode_step(MODEL, GPU, SLOW, 1)
    assert s.communication_s == 0
    assert_allclose(s.total_s, 54e9 / 3.35e12)


def test_prefill_is_flop_bound_on_compute_side():
    """A 4,096-token prompt makes the arithmetic exceed weight streaming."""
    s = prefill_step(MODEL, GPU, FAST, 4, 4096)
    assert s.flops_s > s.weights_s
    assert_allclose(s.flops_s, 2 * 27e9 * 4096 / (4 * 989e12))
    assert s.tokens == 4096
    assert_allclose(s.tokens_per_s, 4096 / s.total_s)


def test_speedup():
    """Speed-up is a ratio of totals."""
    two = decode_step(MODEL, GPU, FAST, 2)
    assert speedup(two, two) == 1.0


@given(
    n=st.integers(min_value=2, max_value=16),
    latency=st.floats(min_value=0, max_value=1e-3),
    extra=st.floats(min_value=1e-9, max_value=1e-3),
    bandwidth=st.floats(min_value=1e8, max_value=1e13),
)
def test_costs_never_fall_when_latency_rises_or_bandwidth_falls(n, latency, extra, bandwidth):
    """Worse wire, never faster steps, for decode and prefill."""
    base = Fabric("a", latency, bandwidth)
    worse_lat = Fabric("b", latency + extra, bandwidth)
    worse_bw = Fabric("c", latency, bandwidth / 2)
    for step in (
        lambda f: decode_step(MODEL, GPU, f, n),
        lambda f: prefill_step(MODEL, GPU, f, n, 512),
    ):
        assert step(worse_lat).total_s >= step(base).total_s
        assert step(worse_bw).total_s >= step(base).total_s


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: decode_step(MODEL, GPU, FAST, 0), ValueError, "n must be"),
        (lambda: decode_step(MODEL, GPU, FAST, 2.5), TypeError, "n must be"),
        (lambda: decode_step(MODEL, GPU, FAST, False), TypeError, "n must be"),
        (lambda: prefill_step(MODEL, GPU, FAST, 2, 0), ValueError, "prompt_tokens"),
        (lambda: prefill_step(MODEL, GPU, FAST, 2, 10**7), ValueError, "prompt_tokens"),
    ],
)
def test_bad_input(call, error, name):
    """Bad n or prompt length names the parameter and range."""
    with pytest.raises(error, match=name):
        call()


def test_speedup_is_the_old_time_over_the_new_by_hand():
    """10 ms per token before, 4 ms after: 2.5 times faster, not 0.4 (direction matters)."""
    from lesson_lib.step_time import StepBreakdown

    slow = StepBreakdown(
        compute_s=8e-3, latency_s=2e-3, bandwidth_s=0.0, tokens=1, weights_s=8e-3, flops_s=0.0
    )
    fast = StepBreakdown(
        compute_s=3e-3, latency_s=1e-3, bandwidth_s=0.0, tokens=1, weights_s=3e-3, flops_s=0.0
    )
    assert slow.total_s == pytest.approx(10e-3) and fast.total_s == pytest.approx(4e-3)
    assert speedup(slow, fast) == pytest.approx(2.5)
    assert speedup(fast, slow) == pytest.approx(0.4)
