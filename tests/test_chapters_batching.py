"""Batched decode: the crossover batch, throughput against each sequence's wait."""

import pytest
from numpy.testing import assert_allclose

from lesson_lib.chapters.batching import (
    BATCH_HEADER,
    LLAMA2_13B,
    PUBLISHED_SCALING,
    REALITY_HEADER,
    batch_curve,
    batch_rows,
    batching_numbers,
    reality_numbers,
    reality_rows,
)
from lesson_lib.model.specimen import FAST, GPU, MODEL
from lesson_lib.model.step_time import decode_step


def test_crossover_batches_by_hand():
    """alpha B / (f x 10 KiB): 10 us x 450 GB/s / 10,240 B = 439 at N = 2, / 1.5 = 293 at N = 4."""
    v = batching_numbers()
    assert v["batch_crossover_2"] == f"{10e-6 * 450e9 / 10240:,.0f}" == "439"
    assert v["batch_crossover_4"] == f"{10e-6 * 450e9 / (1.5 * 10240):,.0f}" == "293"


def test_full_context_kv_read_matches_latency_term():
    """One full-length sequence on 4 GPUs reads (and writes its state) about as long as the
    128 x 10 us of latency: (4 GiB + 2 x 153,944,064 B / 4) / 3.35 TB/s = 1.31 ms."""
    v = batching_numbers()
    assert v["kv_read_full_4"] == "1.31 ms" and v["latency_term_fast_4"] == "1.28 ms"
    assert v["fit_full_4"] == "16"


def test_throughput_grows_and_wait_grows_slower():
    """64 sequences: far more tokens/s than 1, each sequence waits less than 2x as long."""
    one, many = batch_curve(MODEL, GPU, FAST, 4, [1, 64])
    assert many.tokens_per_s > 30 * one.tokens_per_s
    assert one.total_s < many.total_s < 2 * one.total_s


def test_rows_stop_at_memory():
    """The table's last row is the most sequences of 4,096 tokens that fit on 4 GPUs."""
    rows = batch_rows()
    assert all(len(r) == len(BATCH_HEADER) for r in rows)
    # (84.93 GB - 13.5 GB) / (4,096 x 64 KiB / 4 + state / 4) = 676 sequences.
    per = 4096 * 65536 / 4 + 153_944_064 / 4
    assert rows[-1][0] == f"{int((79.1 * 2**30 - 13.5e9) // per):,}"


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


def test_chunked_prefill_numbers_by_hand():
    """Chunk + 32 decode tokens against the 293-token crossover; 4,096 / 512 = 8 passes of 1.28 ms."""
    v = batching_numbers()
    assert (v["chunk_small_tokens"], v["chunk_small_bound"]) == ("160", "latency")
    assert (v["chunk_large_tokens"], v["chunk_large_bound"]) == ("544", "bandwidth")
    assert v["chunk_steps"] == "8"
    assert v["chunked_latency"] == f"{8 * 128 * 10e-6 * 1e3:.2f} ms" == "10.24 ms"


def test_promise_batch_and_its_estimate():
    """20 ms per token: 306 sequences, fewer than the 676 that fit.

    By hand, per sequence of 4,096 tokens on TP 4: GEMM FLOPs 13.650 us, KV and state
    traffic (268,435,456 + 2 x 153,944,064) / 4 B / 3.35 TB/s = 43.012 us, attention
    FLOPs 0.407 us (below the traffic), all-reduce bytes 1.5 x 10,240 x 128 / 450 GB/s
    = 4.369 us; above 295 sequences the GEMMs are compute-bound, so a step takes
    1.28 ms + b x 61.032 us, under 20 ms for b <= 306.7. The page's estimate keeps the
    GEMMs at the weights' 4.03 ms: (20 - 4.03 - 1.28) ms / 47.38 us = 310.
    """
    v = batching_numbers()
    assert v["promise_ms"] == "20 ms"
    assert v["promise_estimate"] == "310" and v["promise_batch"] == "306"
    within = decode_step(MODEL, GPU, FAST, 4, batch=306, context=4096).total_s
    beyond = decode_step(MODEL, GPU, FAST, 4, batch=307, context=4096).total_s
    assert within <= 0.02 < beyond


def test_measured_speedups_from_the_page():
    """69.7 / 61.4 = 1.14x for Llama-2-13B on H100 (NeMo docs, batch 1)."""
    assert_allclose(PUBLISHED_SCALING[0].measured_speedup, 69.7 / 61.4)
    assert reality_numbers()["reality_13b_measured"] == "1.14x"


def test_model_predicts_more_than_measured():
    """The model's speed-up exceeds every measured one: the gap the chapter discusses."""
    for r in PUBLISHED_SCALING:
        assert r.predicted_speedup > r.measured_speedup + 0.3


def test_prediction_floor_by_hand():
    """At TP 4, 20 tokens stream 13e9 x 2 B / 4 from HBM at least: 20 x 1.94 ms."""
    r = PUBLISHED_SCALING[0]
    assert r.model is LLAMA2_13B
    floor = 20 * 13e9 * 2 / 4 / 3.35e12
    assert floor < r.predicted_s(4) < floor + 0.02


def test_rows_shape():
    """One row per record, five cells each."""
    rows = reality_rows()
    assert len(rows) == len(PUBLISHED_SCALING)
    assert all(len(row) == len(REALITY_HEADER) for row in rows)
    assert rows[0][0] == "Llama-2-13B on H100"


def test_streaming_floor_of_the_13b_row_by_hand():
    """20 tokens x 26 GB of bf16 weights / (2 GPUs x 3.35 TB/s) = 77.6 ms, above the measured 69.7 ms."""
    from lesson_lib.chapters.batching import reality_numbers

    numbers = reality_numbers()
    assert (
        numbers["reality_13b_stream_tp2"]
        == f"{20 * 26e9 / (2 * 3.35e12) * 1e3:.1f} ms"
        == "77.6 ms"
    )
    assert numbers["reality_13b_tp2"] == "69.7 ms"
