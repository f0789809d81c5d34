"""Tests of lesson_lib.model.sizing: fits per TP degree and the pure-attention twin."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from lesson_lib import GiB, memory_budget
from lesson_lib.model.sizing import DEGREES, fits_by_degree, pure_attention_twin
from lesson_lib.model.specimen import GPU, MODEL


def test_fits_by_degree_matches_the_lesson():
    """1, 6 and 16 full-length sequences fit at TP = 1, 2, 4 on 79.1 GiB, each leaving room >= 0."""
    fits = fits_by_degree()
    assert [f.n for f in fits] == list(DEGREES)
    assert [f.sequences for f in fits] == [1, 6, 16]
    for f in fits:
        assert f.budget.fits
        one_more = memory_budget(MODEL, GPU, f.n, f.context_tokens, f.sequences + 1)
        assert not one_more.fits


def test_fits_by_degree_tp8_gains_two_sequences():
    """Past 4 KV heads the cache stops shrinking: TP = 8 fits 18, only two more than TP = 4."""
    (fit,) = fits_by_degree(degrees=(8,))
    assert fit.sequences == 18


def test_fits_by_degree_short_context_fits_more():
    """Shorter sequences fit in larger numbers."""
    (short,) = fits_by_degree(degrees=(1,), context_tokens=4096)
    assert short.sequences > 1


@pytest.mark.parametrize(
    ("kwargs", "exc", "word"),
    [
        ({"context_tokens": 0}, ValueError, "context_tokens"),
        ({"context_tokens": MODEL.max_context + 1}, ValueError, "context_tokens"),
        ({"degrees": (0,)}, ValueError, "n must"),
        ({"degrees": (2.0,)}, TypeError, "n must"),
    ],
)
def test_fits_by_degree_rejects_bad_input(kwargs, exc, word):
    """Bad context or degree raises with the parameter's name."""
    with pytest.raises(exc, match=word):
        fits_by_degree(**kwargs)


def test_pure_attention_twin_has_four_times_the_kv_and_no_state():
    """Every layer attention: 64 GiB per full sequence, no DeltaNet state."""
    twin = pure_attention_twin(MODEL)
    assert twin.num_attention_layers == MODEL.num_layers
    assert twin.state_bytes == 0
    assert_allclose(twin.kv_bytes(MODEL.max_context), 64 * GiB)
    assert twin.weight_bytes == MODEL.weight_bytes
