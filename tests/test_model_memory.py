"""Per-GPU memory under tensor parallelism."""

import pytest
from numpy.testing import assert_allclose

from lesson_lib import GB, Accelerator, kv_share, max_sequences, memory_budget, state_share
from lesson_lib.model.specimen import GPU, MODEL


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


def test_utilization_scales_the_capacity_by_hand():
    """At 0.9 of a 79.1 GiB card there are 71.19 GiB; 2 GPUs' weights take 27 GB of it."""
    b = memory_budget(MODEL, GPU, 2, 0, 0, utilization=0.9)
    assert_allclose(b.capacity_bytes, 0.9 * 79.1 * 2**30)
    assert_allclose(b.free_bytes, 0.9 * 79.1 * 2**30 - 27e9)


def test_max_sequences_full_context_by_hand():
    """4 GPUs, 262,144 tokens: each sequence costs a quarter of 16 GiB of KV plus a quarter of
    48 x (48 x 128 x 128 x 4 + 10,240 x 3 x 2) bytes of state; 71.4 GB free fit 16 of them,
    62.9 GB (at utilization 0.9) fit 14."""
    per_sequence = (16 * 2**30 + 48 * (48 * 128 * 128 * 4 + 10240 * 3 * 2)) / 4
    free_all = 79.1 * 2**30 - 54e9 / 4
    free_90 = 0.9 * 79.1 * 2**30 - 54e9 / 4
    assert (free_all // per_sequence, free_90 // per_sequence) == (16, 14)
    assert max_sequences(MODEL, GPU, 4, 262_144) == 16
    assert max_sequences(MODEL, GPU, 4, 262_144, utilization=0.9) == 14


def test_pure_attention_model_has_no_state_to_share():
    """No linear-attention heads: the state share is 0, on any number of ranks."""
    from lesson_lib import ModelSpec

    dense = ModelSpec("dense", 70e9, 8192, 80, 80, 8, 128, 131072)
    assert [state_share(dense, n) for n in (1, 4)] == [0.0, 0.0]
