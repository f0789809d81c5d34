"""The ring all-reduce simulator against numpy.sum and the 2(N-1) byte count."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from lesson_lib import ring_allreduce_factor, simulate_ring_allreduce


@given(n=st.integers(min_value=1, max_value=9), length=st.integers(min_value=0, max_value=40))
def test_equals_numpy_sum_and_counts_bytes(n, length):
    """Every rank ends with the exact sum; total bytes = 2(N-1) x payload."""
    rng = np.random.default_rng(n * 1000 + length)
    arrays = [rng.integers(-1000, 1000, size=length) for _ in range(n)]
    result = simulate_ring_allreduce(arrays)
    expected = np.sum(arrays, axis=0)
    for out in result.outputs:
        assert_array_equal(out, expected)
    payload = arrays[0].nbytes
    assert sum(result.bytes_sent) == 2 * (n - 1) * payload
    assert len(result.steps) == 2 * (n - 1)


def test_float_sums_are_close():
    """With floats the ring's summation order differs, but the result matches."""
    rng = np.random.default_rng(0)
    arrays = rng.standard_normal((5, 103))
    result = simulate_ring_allreduce(arrays)
    for out in result.outputs:
        np.testing.assert_allclose(out, arrays.sum(axis=0), rtol=1e-12, atol=1e-12)


def test_each_rank_sends_factor_times_payload_when_divisible():
    """With length divisible by N each rank sends exactly 2(N-1)/N of the payload."""
    n = 4
    arrays = [np.ones(4 * 256, dtype=np.float32) for _ in range(n)]
    result = simulate_ring_allreduce(arrays)
    assert result.bytes_sent == [ring_allreduce_factor(n) * arrays[0].nbytes] * n


def test_schedule_is_a_ring():
    """Every transfer goes to the right-hand neighbour; each step sends every chunk once."""
    result = simulate_ring_allreduce([np.arange(8.0)] * 4)
    for k, transfers in enumerate(result.steps, start=1):
        assert [t.dst for t in transfers] == [(t.src + 1) % 4 for t in transfers]
        assert sorted(t.chunk for t in transfers) == [0, 1, 2, 3]
        assert {t.step for t in transfers} == {k}
    phases = [transfers[0].phase for transfers in result.steps]
    assert phases == ["reduce-scatter"] * 3 + ["all-gather"] * 3


def test_holdings_track_partial_sums():
    """After reduce-scatter rank r holds the full chunk (r+1) % N; at the end everyone has all."""
    n = 4
    result = simulate_ring_allreduce([np.arange(8.0)] * n)
    everyone = frozenset(range(n))
    start = result.holdings[0]
    assert all(start[r][c] == frozenset([r]) for r in range(n) for c in range(n))
    after_rs = result.holdings[n - 1]
    assert all(after_rs[r][(r + 1) % n] == everyone for r in range(n))
    assert all(h == everyone for row in result.holdings[-1] for h in row)
    assert result.bytes_sent_after(len(result.steps)) == result.bytes_sent
    assert result.bytes_sent_after(0) == [0] * n


def test_uneven_chunks():
    """A length not divisible by N gives chunks that differ by one element."""
    result = simulate_ring_allreduce([np.ones(10, dtype=np.int64)] * 3)
    assert result.chunk_bytes == [32, 24, 24]
    assert_array_equal(result.outputs[2], np.full(10, 3))


def test_single_rank():
    """One rank: no steps, no bytes, output equals input."""
    result = simulate_ring_allreduce([np.arange(3)])
    assert result.steps == [] and result.bytes_sent == [0]
    assert_array_equal(result.outputs[0], np.arange(3))


def test_bad_input():
    """Empty input, ragged or 2-D arrays, and bad steps are clear errors."""
    with pytest.raises(ValueError, match="at least one array"):
        simulate_ring_allreduce([])
    with pytest.raises(ValueError, match="same length"):
        simulate_ring_allreduce([np.ones(3), np.ones(4)])
    with pytest.raises(ValueError, match="1-D"):
        simulate_ring_allreduce([np.ones((2, 2)), np.ones((2, 2))])
    result = simulate_ring_allreduce([np.ones(4)] * 2)
    with pytest.raises(ValueError, match="step must be an integer from 0 to 2"):
        result.bytes_sent_after(3)


def test_bad_inputs_say_what_was_expected():
    """No arrays, or arrays of different shapes: the messages, by hand."""
    import numpy as np
    import pytest

    from lesson_lib.model.ring import simulate_ring_allreduce

    with pytest.raises(ValueError) as info:
        simulate_ring_allreduce([])
    assert str(info.value) == "arrays must hold at least one array (one per rank), got none"
    with pytest.raises(ValueError) as info:
        simulate_ring_allreduce([np.zeros(3), np.zeros(4)])
    assert str(info.value) == "arrays must be 1-D and all the same length, got shapes (3,), (4,)"


def test_simulator_bounds_ranks_and_length():
    """500 ranks (minutes and gigabytes of simulation) or a huge vector: a clear ValueError at once."""
    import numpy as np

    from lesson_lib.model.ring import MAX_SIMULATED_ELEMENTS, MAX_SIMULATED_RANKS

    with pytest.raises(ValueError, match=r"^arrays must hold at most 64"):
        simulate_ring_allreduce([np.zeros(4)] * 500)
    assert MAX_SIMULATED_RANKS == 64
    big = np.broadcast_to(np.zeros(1, dtype=np.int8), (MAX_SIMULATED_ELEMENTS + 1,))
    with pytest.raises(ValueError, match=r"^arrays must have at most"):
        simulate_ring_allreduce([big, big])


def test_sixty_four_ranks_and_two_to_the_24_elements_are_allowed():
    """The limits themselves are accepted: 64 ranks, and 2**24 elements on each."""
    from lesson_lib.model.ring import MAX_SIMULATED_ELEMENTS

    result = simulate_ring_allreduce([np.ones(64)] * 64)
    assert len(result.steps) == 2 * 63
    assert_array_equal(result.outputs[63], np.full(64, 64.0))
    assert MAX_SIMULATED_ELEMENTS == 2**24
    big = np.broadcast_to(np.ones(1, dtype=np.int8), (2**24,))
    assert simulate_ring_allreduce([big, big]).chunk_bytes == [2**23, 2**23]
    with pytest.raises(ValueError, match=r"^arrays must hold at most 64 arrays"):
        simulate_ring_allreduce([np.ones(1)] * 65)


def test_too_long_message_gives_the_length():
    """One rank with 2**24 + 1 elements: the message gives both numbers, with separators."""
    big = np.broadcast_to(np.zeros(1, dtype=np.int8), (2**24 + 1,))
    with pytest.raises(ValueError) as info:
        simulate_ring_allreduce([big])
    assert str(info.value) == ("arrays must have at most 16,777,216 elements each, got 16,777,217")


def test_inputs_are_left_as_they_were():
    """The callers' arrays are read, never written."""
    arrays = [np.arange(6.0) * (r + 1) for r in range(3)]
    before = [a.copy() for a in arrays]
    simulate_ring_allreduce(arrays)
    for a, b in zip(arrays, before, strict=True):
        assert_array_equal(a, b)


def test_mixed_dtypes_are_summed_in_their_common_one():
    """int8 and float64 ranks: float64 results, and the messages carry 8-byte elements."""
    result = simulate_ring_allreduce([np.ones(4, dtype=np.int8), np.full(4, 0.5)])
    assert result.chunk_bytes == [2 * 8, 2 * 8]
    for out in result.outputs:
        assert out.dtype == np.float64
        assert_array_equal(out, np.full(4, 1.5))


@pytest.mark.parametrize(
    ("arrays", "dtype"),
    [
        ([np.array(["a", "b"]), np.array(["c", "d"])], "<U1"),  # once summed to 'ca', 'bd'
        ([np.array([1, 2], dtype=object), np.array([3, 4])], "object"),
        ([np.array([True, False]), np.array([True, True])], "bool"),  # + would be "or"
    ],
)
def test_arrays_that_are_not_numbers_are_refused(arrays, dtype):
    """Strings, objects and booleans have no sum the ring could compute: TypeError naming
    ``arrays`` and the dtype found."""
    with pytest.raises(TypeError) as info:
        simulate_ring_allreduce(arrays)
    assert str(info.value) == f"arrays must hold numbers, got dtype {dtype}"
