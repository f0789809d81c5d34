"""Tests of lesson_lib.model.tensor_parallel: the partial sums a tensor-parallel block leaves."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib.model.ring import simulate_ring_allreduce
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.tensor_parallel import (
    column_row_partials,
    hidden_vector_partials,
    simulate_hidden_allreduce,
)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 10])
def test_partials_sum_to_the_unsplit_product(block, n):
    """Column-split input, row-split output: the n partials add up to the full product."""
    x, w_in, w_out = block
    parts = column_row_partials(x, w_in, w_out, n, activation=np.tanh)
    assert len(parts) == n
    assert all(p.shape == (6,) for p in parts)
    assert_allclose(sum(parts), np.tanh(x @ w_in) @ w_out, rtol=1e-12)


@pytest.fixture
def block():
    rng = np.random.default_rng(1)
    return rng.normal(size=6), rng.normal(size=(6, 10)), rng.normal(size=(10, 6))


def test_each_partial_alone_is_not_the_answer(block):
    """With two or more ranks no single partial equals the full output: a sum is needed."""
    x, w_in, w_out = block
    full = x @ w_in @ w_out
    for part in column_row_partials(x, w_in, w_out, 3):
        assert not np.allclose(part, full)


def test_partials_use_only_the_ranks_own_columns(block):
    """Rank 0's partial is its first columns of w_in times the same rows of w_out."""
    x, w_in, w_out = block
    parts = column_row_partials(x, w_in, w_out, 2)
    assert_allclose(parts[0], x @ w_in[:, :5] @ w_out[:5, :])
    assert_allclose(parts[1], x @ w_in[:, 5:] @ w_out[5:, :])


def test_batch_of_tokens(block):
    """A (tokens, d) input gives (tokens, d_out) partials that still sum to the product."""
    _, w_in, w_out = block
    x = np.random.default_rng(2).normal(size=(3, 6))
    parts = column_row_partials(x, w_in, w_out, 4)
    assert parts[0].shape == (3, 6)
    assert_allclose(sum(parts), x @ w_in @ w_out, rtol=1e-12)


def test_ring_allreduce_of_partials_recovers_product(block):
    """Feeding the partials to the ring simulator gives every rank the unsplit product."""
    x, w_in, w_out = block
    result = simulate_ring_allreduce(column_row_partials(x, w_in, w_out, 4))
    for out in result.outputs:
        assert_allclose(out, x @ w_in @ w_out, rtol=1e-12)


def test_bad_shapes_and_ranks_raise(block):
    """Shapes that do not chain, or more ranks than columns, raise ValueError naming them."""
    x, w_in, w_out = block
    with pytest.raises(ValueError, match="chain"):
        column_row_partials(x, w_in, w_out.T[:, :5], 2)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        column_row_partials(np.zeros((1, 1, 6)), w_in, w_out, 2)
    with pytest.raises(ValueError, match="n must be an integer from 1 to 10"):
        column_row_partials(x, w_in, w_out, 11)
    with pytest.raises(TypeError, match="n must be an integer"):
        column_row_partials(x, w_in, w_out, 2.0)


def test_hidden_vector_partials_have_the_models_size():
    """One hidden vector per rank: 5120 two-byte values, 10 KiB each."""
    parts = hidden_vector_partials(MODEL, 3)
    assert len(parts) == 3
    assert all(p.shape == (5120,) and p.dtype.itemsize == 2 for p in parts)
    assert parts[0].nbytes == 10 * 1024
    assert not np.array_equal(parts[0], parts[1])


def test_hidden_vector_partials_reject_odd_dtype():
    """A 3-byte dtype has no NumPy stand-in and is refused."""
    odd = ModelSpec("odd", 1e6, 8, 2, 2, 1, 4, 16, dtype_bytes=3)
    with pytest.raises(ValueError, match="dtype_bytes"):
        hidden_vector_partials(odd, 2)


@pytest.mark.parametrize(("n", "expected"), [(1, 0), (2, 10240), (4, 15360), (8, 17920)])
def test_simulated_hidden_allreduce_bytes(n, expected):
    """Each rank sends 2(N-1)/N x 10 KiB: 0, 10, 15 and 17.5 KiB for N = 1, 2, 4, 8."""
    result = simulate_hidden_allreduce(MODEL, n)
    assert result.bytes_sent == [expected] * n


def test_edge_collectives_by_hand():
    """Embedding all-reduce: 10 KiB, ring factor; logits: 248,320 x 2 B, each of 4 ranks sends 3/4."""
    from lesson_lib.model.tensor_parallel import edge_collectives

    (name1, embed, embed_wire), (name2, logits, logits_wire) = edge_collectives(MODEL, 4)
    assert "embedding" in name1 and "logits" in name2
    assert (embed, embed_wire) == (10240.0, 1.5 * 10240)
    assert logits == 248_320 * 2 and logits_wire == 248_320 * 2 * 3 / 4


def test_edge_collectives_need_a_vocabulary():
    """A model without vocab_size says which field to give."""
    import dataclasses

    from lesson_lib.model.tensor_parallel import edge_collectives

    with pytest.raises(ValueError, match="vocab_size"):
        edge_collectives(dataclasses.replace(MODEL, vocab_size=None), 4)
