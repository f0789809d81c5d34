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
from lesson_lib.model.collectives import ALGORITHMS, MAX_RANKS, allreduce_factor, allreduce_steps
from lesson_lib.model.specimen import FAST, FAST_RING, SLOW


def test_factor_values():
    """0 for one rank, 1 for two, 1.5 for four."""
    assert [ring_allreduce_factor(n) for n in (1, 2, 4, 8)] == [0.0, 1.0, 1.5, 1.75]


@given(st.integers(min_value=2, max_value=MAX_RANKS))
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
        (lambda: crossover_bytes(FAST, 1), ValueError, r"n must be an integer from 2 to 4096"),
    ],
)
def test_bad_input(call, error, name):
    """Bad n or sizes raise and name the parameter."""
    with pytest.raises(error, match=name):
        call()


# --- all-reduce algorithms: ring, two-shot, one-shot ---------------------------------------------


def test_algorithm_steps_and_bytes_by_hand():
    """At N = 8: ring 14 steps and 1.75 payloads, two-shot 2 and 1.75, one-shot 1 and 7."""
    assert [allreduce_steps(8, a) for a in ("ring", "two_shot", "one_shot")] == [14, 2, 1]
    assert [allreduce_factor(8, a) for a in ("ring", "two_shot", "one_shot")] == [1.75, 1.75, 7.0]
    # 10 KiB one-shot over 4 ranks: each rank's buffer is read by 3 peers.
    assert allreduce_wire_bytes(10240, 4, "one_shot") == 30720


def test_algorithms_agree_at_two_ranks_on_bytes():
    """With two ranks every algorithm sends the payload exactly once."""
    assert {allreduce_factor(2, a) for a in ALGORITHMS} == {1.0}


def test_fixed_latency_fabric_same_for_every_algorithm():
    """The lesson's fabrics have no per-hop term: alpha is alpha, whatever the algorithm."""
    for a in ALGORITHMS:
        assert allreduce_latency(4, FAST, a) == FAST.latency
        assert allreduce_latency(8, SLOW, a) == SLOW.latency
        assert allreduce_latency(1, FAST, a) == 0.0


def test_per_hop_latency_by_hand():
    """FAST_RING: base 6.55 us, 1.725 us a hop; ring at 8 = 6.55 + 14 x 1.725 = 30.7 us."""
    assert_allclose(allreduce_latency(8, FAST_RING, "ring"), 30.7e-6, rtol=1e-9)
    assert_allclose(allreduce_latency(8, FAST_RING, "two_shot"), 10.0e-6, rtol=1e-9)
    assert_allclose(allreduce_latency(8, FAST_RING, "one_shot"), 8.275e-6, rtol=1e-9)


@given(st.integers(min_value=2, max_value=MAX_RANKS - 1))
def test_one_shot_latency_flat_in_n(n):
    """One-shot's latency does not grow with N, on any fabric."""
    assert allreduce_latency(n + 1, FAST_RING, "one_shot") == allreduce_latency(
        n, FAST_RING, "one_shot"
    )


@given(st.integers(min_value=3, max_value=MAX_RANKS))
def test_one_shot_sends_more_than_ring(n):
    """For N > 2 one-shot's bytes exceed the ring's lower bound 2(N-1)/N."""
    assert allreduce_wire_bytes(1.0, n, "one_shot") > allreduce_wire_bytes(1.0, n, "ring")


def test_crossover_one_shot_smaller_at_eight():
    """One-shot's crossover is 4 times smaller than the ring's at N = 8 (7 vs 1.75 payloads)."""
    assert_allclose(crossover_bytes(FAST, 8, "ring") / crossover_bytes(FAST, 8, "one_shot"), 4.0)


@pytest.mark.parametrize("bad", ["tree", "", None, 3, "RING"])
def test_unknown_algorithm_lists_valid_ones(bad):
    """An unknown name raises ValueError listing the valid ones."""
    with pytest.raises(ValueError, match="'ring', 'two_shot', 'one_shot'"):
        allreduce_time(1024, 4, FAST, bad)


def test_rank_bound_and_fabric_type():
    """n above MAX_RANKS and a non-Fabric are refused with the parameter's name."""
    with pytest.raises(ValueError, match="n must be an integer from 1 to 4096"):
        allreduce_latency(MAX_RANKS + 1, FAST)
    with pytest.raises(TypeError, match="fabric must be a Fabric"):
        allreduce_latency(4, "nvlink")


def test_ring_is_the_default_algorithm():
    """Without an algorithm the ring is meant: 2(N-1) = 14 steps at N = 8."""
    assert allreduce_steps(8) == 14
    assert allreduce_factor(8) == 1.75


def test_crossover_uses_the_algorithms_own_latency_by_hand():
    """One-shot on FAST_RING at N = 8: alpha = 6.55 + 1 x 1.725 = 8.275 us, 7 payloads, so
    the crossover is 8.275 us x 450 GB/s / 7 = 531,964 bytes, 51.95 hidden vectors of 10 KiB."""
    from lesson_lib.model.collectives import crossover_tokens
    from lesson_lib.model.specimen import MODEL

    by_hand = 8.275e-6 * 450e9 / 7
    assert_allclose(crossover_bytes(FAST_RING, 8, "one_shot"), by_hand, rtol=1e-9)
    assert_allclose(crossover_tokens(MODEL, FAST_RING, 8, "one_shot"), by_hand / 10240, rtol=1e-9)
