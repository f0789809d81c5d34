"""The overlap chapter: its glued numbers and its table against values worked out by hand."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.chapters.overlap import speculative_numbers, technique_table
from lesson_lib.model.batching import (
    mtp_head_params,
    speculative_crossover_sequences,
    speculative_tokens_per_collective,
)
from lesson_lib.model.specimen import FAST, MODEL


def test_fusion_numbers_by_hand():
    """128 launches a token: 128 x 3.5 us = 0.448 ms (8.4 % of 5.31 ms), 128 x 0.5 us =
    0.064 ms (1.2 %)."""
    v = chapter_numbers("overlap")
    assert (v["ov_launch_eager"], v["ov_launch_graph"]) == ("3.5 us", "0.5 us")
    assert (v["ov_fused_eager"], v["ov_fused_graph"]) == ("0.448 ms", "0.064 ms")
    assert (v["ov_fused_eager_share"], v["ov_fused_graph_share"]) == ("8.4 %", "1.2 %")


def test_sequence_parallelism_and_chunking_by_hand():
    """SP: 256 collectives x 10 us = 2.56 ms. Prefill, four chunks: 44.95 us exposed of
    149.81 us, 5.75 ms a prompt against 19.18 ms. Decode: 47.9 us against 41.52 us. vLLM's SP
    threshold for a hidden size of 8,192 on four GPUs: 8 MiB x 4 / (8,192 x 2 B) = 2,048."""
    v = chapter_numbers("overlap")
    assert (v["ov_sp_collectives"], v["ov_sp_latency"]) == ("256", "2.56 ms")
    assert (v["ov_pre_exposed"], v["ov_pre_unhidden"]) == ("44.95 us", "149.81 us")
    assert (v["ov_pre_step_exposed"], v["ov_pre_step_unhidden"]) == ("5.75 ms", "19.18 ms")
    assert (v["ov_dec_total"], v["ov_dec_plain"]) == ("47.9 us", "41.52 us")
    assert v["ov_sp_min_tokens_8192"] == "2,048"


def test_low_precision_by_hand():
    """FP8: 3.29 ms on four, 5.31 ms on two, 1.61x; latency share 1.28 / 5.3099 = 24.1 % ->
    1.28 / 3.2949 = 38.8 %. NVFP4: 2.41 ms, 53.0 %, 1.47x. FP8 all-reduce: 17.9 -> 8.95 ms."""
    v = chapter_numbers("overlap")
    assert (v["ov_fp8_4"], v["ov_fp8_2"], v["ov_fp8_speedup"]) == ("3.29 ms", "5.31 ms", "1.61x")
    assert (v["ov_share_bf16"], v["ov_share_fp8"], v["ov_share_nvfp4"]) == (
        "24.1 %",
        "38.8 %",
        "53.0 %",
    )
    assert (v["ov_nvfp4_4"], v["ov_nvfp4_speedup"]) == ("2.41 ms", "1.47x")
    assert (v["ov_pre_wire_bf16"], v["ov_pre_wire_fp8"]) == ("17.9 ms", "8.95 ms")
    assert (v["ov_kv_seq_bf16"], v["ov_kv_seq_fp8"]) == ("16", "32")


def test_table_has_a_row_per_technique():
    """Five rows; the fused decoded token is the lesson's 5.31 ms, the unfused 5.31 + 0.064."""
    table = technique_table()
    assert table.count("<tr><td>") == 5
    assert "<td>5.31 ms</td>" in table and "<td>5.38 ms</td>" in table


def test_mtp_head_by_hand():
    """One gated-attention layer of the specimen's shapes, plus the 2h -> h fusion.

    h = 5120, 24 query heads and 4 KV heads of 256, FFN 17,408:
    fusion 2 x 5120 x 5120 = 52,428,800; query and gate 5120 x 12,288 = 62,914,560;
    key and value 2 x 5120 x 1024 = 10,485,760; output 6144 x 5120 = 31,457,280;
    FFN 3 x 5120 x 17,408 = 267,386,880; norms 5 x 5120 + 2 x 256 = 26,112.
    Sum 424,699,392: 0.85 GB in bf16 (849.4 MB, 810 MiB), 1.57 % of 27e9.
    """
    assert mtp_head_params() == 424_699_392
    v = speculative_numbers()
    assert v["mtp_params"] == "0.42 billion"
    assert v["mtp_bytes"] == "0.85 GB"
    assert v["mtp_share"] == "1.6 %"
    with pytest.raises(ValueError, match="layers"):
        mtp_head_params(layers=0)


def test_speculative_tokens_and_crossover_by_hand():
    """k = 3 drafts: 4 tokens a sequence, 40 KiB each all-reduce; 293 / 4 = 73 sequences.

    The crossover on 4 fast GPUs is 10 us x 450 GB/s / (1.5 x 10,240 B) = 293 tokens;
    vLLM's 512 KiB one-stage limit over 40 KiB a sequence is 12.8, so 13 pass it.
    """
    assert speculative_tokens_per_collective(16, 3) == 64
    assert speculative_tokens_per_collective(16, 0) == 16  # plain decode
    crossover = 10e-6 * 450e9 / (1.5 * 10240)
    assert_allclose(speculative_crossover_sequences(MODEL, FAST, 4, 3), crossover / 4)
    v = speculative_numbers()
    assert v["spec_draft_tokens"] == "3"
    assert v["spec_bytes_per_sequence"] == "40 KiB"
    assert v["spec_crossover_4"] == "73"
    assert v["spec_one_stage_sequences"] == "13" and v["spec_one_stage_limit"] == "512 KiB"
    with pytest.raises(ValueError, match="draft_tokens"):
        speculative_tokens_per_collective(1, -1)
