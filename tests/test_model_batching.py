"""Tests of lesson_lib.model.batching: step times per batch, speculative verification, the MTP head."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from lesson_lib.model.batching import (
    batch_curve,
)
from lesson_lib.model.specimen import FAST, GPU, MODEL


def test_throughput_grows_and_wait_grows_slower():
    """64 sequences: far more tokens/s than 1, each sequence waits less than 2x as long."""
    one, many = batch_curve(MODEL, GPU, FAST, 4, [1, 64])
    assert many.tokens_per_s > 30 * one.tokens_per_s
    assert one.total_s < many.total_s < 2 * one.total_s


def test_bad_batch_named():
    """A batch of 0 or a float names the parameter."""
    with pytest.raises(ValueError, match="batch"):
        batch_curve(MODEL, GPU, FAST, 4, [0])
    with pytest.raises(TypeError, match="batch"):
        batch_curve(MODEL, GPU, FAST, 4, [2.5])


def test_one_sequence_row_is_lesson_plus_reads():
    """Batch 1 at 4,096 tokens: the lesson's 5.31 ms plus a small KV read."""
    (step,) = batch_curve(MODEL, GPU, FAST, 4, [1], context=4096)
    assert_allclose(step.latency_s, 1.28e-3)
    assert 5.31e-3 < step.total_s < 5.40e-3
