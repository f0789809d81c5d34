"""Ring all-reduce cost: the 2(N-1)/N factor, alpha-beta time, crossover."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from lesson_lib import (
    Fabric,
    allreduce_latency,
    allreduce_time,
    allreduce_wire_bytes,
    crossover_bytes,
    ring_allreduce_factor,
)
from lesson_lib.specimen import FAST, FAST_RING


def test_factor_values():
    """0 for one rank, 1 for two, 1.5 for four."""
    assert [ring_allreduce_factor(n) for n in (1, 2, 4, 8)] == [0.0, 1.0, 1.5, 1.75]


@given(st.integers(min_value=2, max_value=100_000))
def test_factor_in_one_to_two(n):
    """For n >= 2 the factor lies in [1, 2)."""
    assert 1.0 <= ring_allreduce_factor(n) < 2.0


def test_single_rank_costs_nothing():
    """One rank has nothing to exchange."""
    assert allreduce_time(10_000, 1, FAST) == 0.0
    assert allreduce_wire_bytes(10_000, 1) == 0.0


def test_alpha_beta_time():
    """t = latency + 2(n-1) hop + wire / B."""
    fabric = Fabric("f", latency=10e-6, bandwidth=1e9, hop_latency=1e-6)
    assert_allclose(allreduce_time(1e6, 4, fabric), 10e-6 + 6e-6 + 1.5e6 / 1e9)
    assert_allclose(allreduce_latency(4, FAST_RING), 16.9e-6)
    assert_allclose(allreduce_latency(2, FAST_RING), 10e-6)


def test_crossover_balances_the_terms():
    """At the crossover the latency term equals the bandwidth term."""
    for n in (2, 4, 8):
        m = crossover_bytes(FAST, n)
        assert_allclose(allreduce_wire_bytes(m, n) / FAST.bandwidth, allreduce_latency(n, FAST))
    assert_allclose(crossover_bytes(FAST, 2), 10e-6 * 450e9)


@given(
    payload=st.floats(min_value=0, max_value=1e10),
    n=st.integers(min_value=2, max_value=64),
    latency=st.floats(min_value=0, max_value=1e-3),
    extra=st.floats(min_value=0, max_value=1e-3),
    bandwidth=st.floats(min_value=1e6, max_value=1e13),
    factor=st.floats(min_value=1, max_value=100),
)
def test_cost_never_falls_when_wire_gets_worse(payload, n, latency, extra, bandwidth, factor):
    """More latency or less bandwidth never makes an all-reduce cheaper."""
    base = allreduce_time(payload, n, Fabric("a", latency, bandwidth))
    slower = allreduce_time(payload, n, Fabric("b", latency + extra, bandwidth))
    thinner = allreduce_time(payload, n, Fabric("c", latency, bandwidth / factor))
    assert slower >= base
    assert thinner >= base


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: ring_allreduce_factor(0), ValueError, "n must be"),
        (lambda: ring_allreduce_factor(2.0), TypeError, "n must be"),
        (lambda: ring_allreduce_factor(True), TypeError, "n must be"),
        (lambda: allreduce_wire_bytes(-1, 2), ValueError, "payload_bytes"),
        (lambda: allreduce_time(10, -3, FAST), ValueError, "n must be"),
        (lambda: crossover_bytes(FAST, 1), ValueError, r"n must be an integer >= 2"),
    ],
)
def test_bad_input(call, error, name):
    """Bad n or sizes raise and name the parameter."""
    with pytest.raises(error, match=name):
        call()
