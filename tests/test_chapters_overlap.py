"""The overlap chapter: its glued numbers and its table against values worked out by hand."""

from __future__ import annotations

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.chapters.overlap import technique_table


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
