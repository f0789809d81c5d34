"""Collective costs: the ring all-reduce's 2(N-1)/N factor, the other collectives, alpha-beta time."""

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
from lesson_lib.model.collectives import (
    ALGORITHMS,
    COLLECTIVES,
    MAX_RANKS,
    allreduce_factor,
    allreduce_steps,
    alltoall_time,
    alltoall_wire_bytes,
    collective_steps,
    collective_time,
    collective_wire_bytes,
)
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


# --- every collective ----------------------------------------------------------------------------


MIB = 2**20


def test_the_table_of_collectives_by_hand():
    """One MiB over four ranks: all-reduce 2 x 3/4 = 1.5 MiB per rank, the halves 0.75 MiB,
    the all-to-all 3/4 (a quarter stays home), send/recv the whole MiB. Steps over 8 ranks:
    ring all-reduce 2 x 7 = 14, reduce-scatter and all-gather 7, all-to-all and send/recv 1."""
    assert list(COLLECTIVES) == [
        "all_reduce",
        "reduce_scatter",
        "all_gather",
        "all_to_all",
        "send_recv",
    ]
    wire = {k: collective_wire_bytes(k, MIB, 4) / MIB for k in COLLECTIVES}
    assert wire == {
        "all_reduce": 1.5,
        "reduce_scatter": 0.75,
        "all_gather": 0.75,
        "all_to_all": 0.75,
        "send_recv": 1.0,
    }
    steps = {k: collective_steps(k, 8) for k in COLLECTIVES}
    assert steps == {
        "all_reduce": 14,
        "reduce_scatter": 7,
        "all_gather": 7,
        "all_to_all": 1,
        "send_recv": 1,
    }
    assert all(collective_steps(k, 1) == 0 for k in COLLECTIVES)


def test_times_in_the_alpha_beta_per_hop_model_by_hand():
    """5 us + 1 us per hop, 100 GB/s; 1 MB over 5 ranks (4/5 of it is 0.8 MB = 8 us).

    all-gather 5 + 4 x 1 + 8 = 17 us; reduce-scatter the same; all-to-all 5 + 1 + 8 =
    14 us; send/recv 5 + 1 + 10 = 16 us; all-reduce 5 + 8 x 1 + 16 = 29 us.
    """
    fabric = Fabric("test", latency=5e-6, bandwidth=100e9, hop_latency=1e-6)
    assert_allclose(collective_time("all_gather", 1e6, 5, fabric), 17e-6)
    assert_allclose(collective_time("reduce_scatter", 1e6, 5, fabric), 17e-6)
    assert_allclose(alltoall_time(1e6, 5, fabric), 14e-6)
    assert_allclose(collective_time("send_recv", 1e6, 5, fabric), 16e-6)
    assert_allclose(collective_time("all_reduce", 1e6, 5, fabric), 29e-6)
    assert collective_time("all_to_all", 1e6, 1, fabric) == 0.0


def test_the_named_functions_are_the_table_rows():
    """alltoall_wire_bytes is (n-1)/n of the payload: 8 tokens' DeepSeek vectors over 8 ranks
    are 8 x 7168 x 2 = 114,688 B, of which 7/8, 100,352 B, leave the rank."""
    assert alltoall_wire_bytes(114_688, 8) == 100_352
    assert collective_wire_bytes("reduce_scatter", 800, 8) == 700
    assert collective_wire_bytes("all_gather", 800, 8) == 700
    assert collective_wire_bytes("send_recv", 800, 2) == 800
    assert collective_wire_bytes("send_recv", 800, 1) == 0


@given(st.floats(0, 1e12), st.integers(1, MAX_RANKS))
def test_alltoall_never_sends_more_than_its_payload(payload, n):
    """(n-1)/n < 1: an all-to-all's bytes per rank never exceed the payload; 0 at n = 1."""
    wire = alltoall_wire_bytes(payload, n)
    assert 0 <= wire <= payload
    if n == 1:
        assert wire == 0


@given(st.floats(0, 1e12), st.integers(1, MAX_RANKS))
def test_reduce_scatter_and_all_gather_make_the_ring_all_reduce(payload, n):
    """The ring all-reduce is a reduce-scatter then an all-gather: bytes and steps add up."""
    assert_allclose(
        collective_wire_bytes("reduce_scatter", payload, n)
        + collective_wire_bytes("all_gather", payload, n),
        allreduce_wire_bytes(payload, n),
        rtol=1e-12,
    )
    assert collective_steps("reduce_scatter", n) + collective_steps(
        "all_gather", n
    ) == allreduce_steps(n)
    assert collective_time("all_reduce", payload, n, FAST_RING) == pytest.approx(
        allreduce_time(payload, n, FAST_RING)
    )


@given(st.integers(2, MAX_RANKS - 1))
def test_more_ranks_never_send_fewer_bytes_per_rank(n):
    """Each factor grows (or stays) with n."""
    for kind in COLLECTIVES:
        assert collective_wire_bytes(kind, 1.0, n + 1) >= collective_wire_bytes(kind, 1.0, n)


def test_unknown_collective_is_refused_with_the_list():
    """A typo names kind and lists the collectives."""
    with pytest.raises(ValueError, match=r"kind must be one of 'all_reduce'"):
        collective_steps("alltoall", 2)
    with pytest.raises(ValueError, match="kind must be one of"):
        collective_steps(None, 2)


def test_payloads_whose_result_overflows_are_refused():
    """allreduce_time(1e308, 4096) once returned inf: the ring sends 2 x 4095 / 4096 x 1e308
    bytes, about 2e308, beyond the largest float (1.8e308). A payload of 1e300 bytes over a
    fabric of 1e-10 bytes/s would take 2 x 1e300 / 1e-10 = 2e310 s, beyond it too."""
    with pytest.raises(ValueError) as info:
        allreduce_time(1e308, 4096, FAST)
    assert str(info.value) == ("payload_bytes must keep wire bytes finite, got 1e+308 bytes")
    with pytest.raises(ValueError, match="payload_bytes must keep wire bytes finite"):
        allreduce_wire_bytes(1e308, 4096)
    crawl = Fabric("crawl", latency=1e-6, bandwidth=1e-10)
    with pytest.raises(ValueError) as info:
        allreduce_time(1e300, 2, crawl)
    assert str(info.value) == (
        "payload_bytes must keep seconds at 1e-10 bytes/s finite, got 1e+300 bytes"
    )
    # half the largest float on two ranks (factor 1): finite, kept
    assert allreduce_wire_bytes(8e307, 2) == 8e307
