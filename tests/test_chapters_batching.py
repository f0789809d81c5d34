"""Batched decode: the crossover batch, throughput against each sequence's wait, the buyer's boxes."""

import pytest
from numpy.testing import assert_allclose

from lesson_lib.chapters.batching import (
    BATCH_HEADER,
    BUYER_HEADER,
    batch_rows,
    batching_numbers,
    buyer_numbers,
    buyer_table,
)
from lesson_lib.model.latency import buyer_answers
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


def test_rows_stop_at_memory():
    """The table's last row is the most sequences of 4,096 tokens that fit on 4 GPUs."""
    rows = batch_rows()
    assert all(len(r) == len(BATCH_HEADER) for r in rows)
    # (84.93 GB - 13.5 GB) / (4,096 x 64 KiB / 4 + state / 4) = 676 sequences.
    per = 4096 * 65536 / 4 + 153_944_064 / 4
    assert rows[-1][0] == f"{int((79.1 * 2**30 - 13.5e9) // per):,}"


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


def test_the_buyer_gets_two_answers_by_hand():
    """Latency: two fast GPUs win; throughput at full context: four slow GPUs win.

    One stream, the lesson's arithmetic: 16.12, 9.34 and 10.43 ms (the worked example).
    Full context (262,144 tokens; H100 84.93 GB, 3.35 TB/s; KV 16 GiB and state
    153,944,064 B per sequence, the state read and written back):
    - one GPU: 1 sequence; 54e9 / 3.35e12 = 16.119 ms + (16 GiB + 2 x 153,944,064 B)
      / 3.35e12 = 5.220 ms: 21.34 ms, 46.9 tokens/s;
    - two fast: 6 sequences; 8.060 ms + 6 x (8 GiB + 153,944,064 B) / 3.35e12 = 15.661
      ms + 128 x 10 us + 128 x 6 x 10,240 B / 450 GB/s = 0.017 ms: 25.02 ms, 239.8 tokens/s;
    - four slow: 16 sequences; 4.030 ms + 16 x (4 GiB + 76,972,032 B) / 3.35e12 = 20.882
      ms + 128 x 50 us + 128 x 1.5 x 16 x 10,240 B / 64 GB/s = 0.492 ms: 31.80 ms,
      503.1 tokens/s, 10.7x one GPU and 2.1x two fast GPUs.
    """
    one, two, four = buyer_answers()
    assert [a.sequences for a in (one, two, four)] == [1, 6, 16]
    assert_allclose([a.tokens_per_s for a in (one, two, four)], [46.86, 239.8, 503.1], rtol=2e-3)
    assert_allclose(
        [a.stream_s for a in (one, two, four)], [16.12e-3, 9.34e-3, 10.43e-3], rtol=1e-3
    )
    v = buyer_numbers()
    assert v["throughput_4_vs_2"] == "2.1x"
    assert (v["box_4_tokens_per_s"], v["box_2_tokens_per_s"], v["box_1_tokens_per_s"]) == (
        "503",
        "240",
        "47",
    )


def test_buyer_table_has_a_row_per_box_and_its_per_gpu_rate():
    """Four slow GPUs: 503.1 tokens/s over 4 GPUs = 126 per GPU; two fast: 239.8 / 2 = 120."""
    html = buyer_table(contexts=(262_144,), caption="boxes")
    assert html.count("<tr>") == 1 + 3  # header and three boxes
    for column in BUYER_HEADER:
        assert column in html
    assert "<td>126</td>" in html and "<td>120</td>" in html


def test_buyer_table_adds_the_short_context_rows_by_default():
    """Full context, then 4,096 tokens: three boxes each; per GPU at 4,096 tokens 2,581 and 4,064."""
    html = buyer_table()
    assert html.count("<tr>") == 1 + 6
    assert html.count("<td>262,144</td>") == 3 and html.count("<td>4,096</td>") == 3
    assert "<td>2,581</td>" in html and "<td>4,064</td>" in html


def test_buyer_table_names_a_context_out_of_range():
    with pytest.raises(ValueError, match="context"):
        buyer_table(contexts=(0,))
