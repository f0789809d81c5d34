"""Per-GPU memory under tensor parallelism."""

import pytest
from numpy.testing import assert_allclose

from lesson_lib import GB, Accelerator, kv_share, max_sequences, memory_budget, state_share
from lesson_lib.specimen import GPU, MODEL


def test_budget_adds_up():
    """Weights + KV + state + free = capacity."""
    b = memory_budget(MODEL, GPU, 2, 100_000, 3)
    assert_allclose(b.weights_bytes + b.kv_bytes + b.state_bytes + b.free_bytes, GPU.memory_bytes)
    assert b.weights_bytes == MODEL.weight_bytes / 2
    assert_allclose(b.kv_bytes, 3 * MODEL.kv_bytes(100_000) / 2)
    assert_allclose(b.state_bytes, 3 * MODEL.state_bytes / 2)


def test_one_gpu_leaves_little_room():
    """One full-length sequence leaves about 13.6 GB of the 79.1 GiB an "80 GB" card exposes."""
    b = memory_budget(MODEL, GPU, 1, MODEL.max_context, 1)
    assert b.fits and 13.5 * GB < b.free_bytes < 13.7 * GB


def test_does_not_fit_reports_shortfall():
    """Two full-length sequences on one card do not fit; the shortfall is positive."""
    b = memory_budget(MODEL, GPU, 1, MODEL.max_context, 2)
    assert not b.fits
    assert_allclose(b.shortfall_bytes, -b.free_bytes)
    assert memory_budget(MODEL, GPU, 1, 0, 0).shortfall_bytes == 0


def test_kv_heads_stop_splitting_past_their_count():
    """With 4 KV heads, TP 8 still holds one whole head per rank."""
    assert [kv_share(MODEL, n) for n in (1, 2, 4, 8)] == [1.0, 0.5, 0.25, 0.25]
    assert kv_share(MODEL, 3) == 0.5  # the busiest rank holds 2 of 4 heads
    assert state_share(MODEL, 4) == 0.25


def test_max_sequences_grows_with_tp_and_weights_that_do_not_fit():
    """More ranks, more room; a card smaller than the weights fits nothing."""
    fits = [max_sequences(MODEL, GPU, n, 32_768) for n in (1, 2, 4)]
    assert fits == sorted(fits) and fits[0] >= 1
    small = Accelerator("small", memory_bytes=24 * GB, hbm_bandwidth=1e12, peak_flops=1e14)
    assert max_sequences(MODEL, small, 1, 1000) == 0
    assert max_sequences(MODEL, small, 4, 1000) > 0


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        (dict(n=0, context_tokens=1, sequences=1), ValueError, "n must be"),
        (dict(n=2, context_tokens=-1, sequences=1), ValueError, "context_tokens"),
        (dict(n=2, context_tokens=300_000, sequences=1), ValueError, "context_tokens"),
        (dict(n=2, context_tokens=10, sequences=-1), ValueError, "sequences"),
        (dict(n=2, context_tokens=10, sequences=1.5), TypeError, "sequences"),
    ],
)
def test_bad_input(kwargs, error, name):
    """Bad arguments name the parameter."""
    with pytest.raises(error, match=name):
        memory_budget(MODEL, GPU, **kwargs)


def test_max_sequences_needs_a_context():
    """Zero context would mean infinitely many sequences: rejected."""
    with pytest.raises(ValueError, match="context_tokens"):
        max_sequences(MODEL, GPU, 2, 0)
