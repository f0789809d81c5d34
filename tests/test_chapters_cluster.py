"""The cluster page: the candidates' table and notes, what each parallelism sends, its numbers."""

import pytest

from lesson_lib import Fabric
from lesson_lib.chapters.cluster import (
    CANDIDATE_HEADER,
    CANDIDATES,
    _candidate_configurations,
    _candidate_notes,
    _candidate_rows,
    _cluster_numbers,
    candidate_table,
    communication_per_token,
)
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.specimen import GPU, INTER_NODE, MODEL


def test_candidates_cover_valid_flagged_and_invalid():
    """The table lesson 9.10 prices: valid rows, flagged TP 8 and TP-across-nodes rows, PP 3 invalid."""
    plans = _candidate_configurations()
    assert len(plans) == len(CANDIDATES)
    verdicts = [p.verdict for p in plans]
    assert sum(v == "valid" for v in verdicts) >= 5
    assert any(v.startswith("valid, flagged") for v in verdicts)
    assert sum(v.startswith("invalid") for v in verdicts) == 0
    assert sum(v.startswith("valid, flagged") for v in verdicts) == 3
    rows = _candidate_rows(plans)
    assert all(len(r) == len(CANDIDATE_HEADER) for r in rows)
    assert rows[2][2] == "5.31"  # 1 node x 4, TP 4, one sequence alone: the lesson's line


def test_the_tables_verdicts_are_short_and_numbered_as_the_notes():
    """The verdict column holds a word and a note number; the reasons are the notes.

    Written out from the candidates' order: rows 5, 8 and 9 are the flagged
    TP 8, TP 4 across two nodes of two and PP 3, the three the page's prose
    discusses one by one.
    """
    plans = _candidate_configurations()
    verdicts = [r[-1].replace("\u00a0", " ") for r in _candidate_rows(plans)]
    assert verdicts == ["valid"] * 4 + ["flagged, note 1"] + ["valid"] * 2 + [
        "flagged, note 2",
        "flagged, note 3",
    ]
    notes = _candidate_notes(plans)
    assert len(notes) == 3
    assert notes[0] == "1 node x 8 GPUs: TP 8: each KV head on 2 GPUs."
    assert notes[1] == "2 nodes x 2 GPUs: TP 4: TP all-reduces on the network."
    assert notes[2] == "3 nodes x 4 GPUs: TP 4 x PP 3: stages of 21, 22, 21 layers."
    html = candidate_table(plans)
    assert html.count("<li>") == 3 and '<tfoot><tr><td colspan="6"><ol class="table-notes">' in html
    assert html.index("</tbody>") < html.index("<tfoot>") < html.index("</table>")


def test_tp_8_across_nodes_looks_fast_alone_and_loses_batched():
    """TP 8 over two nodes of four against TP 4 x DP 2 inside each node, by hand.

    Weights: 54 GB / 8 = 6.75 GB per GPU read at 3.35 TB/s = 2.01 ms, against
    54 / 4 = 13.5 GB at 3.35 TB/s = 4.03 ms. All-reduces: 128 on the network at
    25 us = 3.20 ms of latency (plus the bytes), against 128 x 10 us = 1.28 ms on
    NVLink. So 2.01 + 3.2x = 5.2x ms against 4.03 + 1.28 = 5.31 ms: faster alone by
    the weights, slower batched (614 against 1,219 tokens/s).
    At twice the network's latency, 128 x 25 us more = 3.2 ms more, it is slower.
    """
    v = _cluster_numbers()
    assert (v["tp8_across_token_time"], v["in_node_token_time"]) == ("5.26 ms", "5.31 ms")
    assert (v["tp8_across_compute"], v["dp2_compute"]) == ("2.01 ms", "4.03 ms")
    assert (v["tp8_across_allreduces"], v["dp2_allreduces"]) == ("3.25 ms", "1.28 ms")
    assert (v["tp8_across_tokens_per_s"], v["dp2_tokens_per_s"]) == ("614", "1,219")
    assert v["inter_latency"] == "25 us"
    note = _candidate_notes([plan_cluster(MODEL, GPU, 4, 2, 8)])[0]
    assert note == "2 nodes x 4 GPUs: TP 8: each KV head on 2 GPUs; TP all-reduces on the network."
    slower = Fabric("twice the latency", 50e-6, INTER_NODE.bandwidth)
    tp8 = plan_cluster(MODEL, GPU, 4, 2, 8, inter=slower)
    rule = plan_cluster(MODEL, GPU, 4, 2, 4, inter=slower)
    assert tp8.token_time_s > rule.token_time_s


def test_worse_network_hurts_tp_across_nodes_not_pp():
    """Five times the latency, a fifth of the bandwidth: PP 2 gains 0.1 ms, TP across nodes 13 ms."""
    v = _cluster_numbers()
    assert (v["worse_latency"], v["worse_bandwidth"]) == ("125 us", "10 GB/s")
    assert (v["pp2_token_time"], v["worse_pp2_token_time"]) == ("5.34 ms", "5.44 ms")
    # 128 all-reduces at 125 us = 16 ms of latency on top of TP 4's compute: slower than one GPU.
    assert (v["worse_across_token_time"], v["one_gpu_token_time"]) == ("20.23 ms", "16.12 ms")


def test_candidate_table_is_html():
    """The HTML table has one body row per candidate, a header row and a footer of notes."""
    table = candidate_table(caption="Candidates")
    assert table.startswith("<table") and table.count("<tr>") == len(CANDIDATES) + 2
    assert "<caption>Candidates</caption>" in table


def test_communication_per_token():
    """TP sends 128 all-reduces per token, PP pp - 1 sends, DP nothing."""
    tp, pp, dp = communication_per_token(MODEL, 4, 2)
    assert tp[1].startswith("128") and pp[1].startswith("1 ") and dp[1].startswith("0")
    # one message of two 5,120-wide bf16 vectors: 2 x 5,120 x 2 B = 20,480 B = 20 KiB
    assert pp[2] == "20 KiB: 2 vectors, hidden vector and residual"
    with pytest.raises(ValueError, match="tp"):
        communication_per_token(MODEL, 1, 2)


def test_cluster_numbers_pinned():
    """The glued strings: model dimensions, network assumption, PP vs DP on 2 x 4."""
    values = _cluster_numbers()
    assert (values["kv_heads"], values["query_heads"], values["ffn_size"]) == ("4", "24", "17,408")
    assert (values["inter_latency"], values["inter_bandwidth"]) == ("25 us", "50 GB/s")
    assert values["in_node_token_time"] == "5.31 ms"
    # DP 2 batched at full context, by hand: 16 sequences per replica on TP 4.
    weights = 13.5e9 / 3.35e12
    # KV + a quarter of the DeltaNet state, read and written back
    kv = 16 * (4 * 2**30 + 2 * 153_944_064 / 4) / 3.35e12
    wires = 128 * (10e-6 + 1.5 * 16 * 10240 / 450e9)
    step = weights + kv + wires
    assert values["dp2_tokens_per_s"] == f"{2 * 16 / step:,.0f}" == "1,219"
    assert values["dp2_sequences_total"] == "32"
    assert values["pp2_weights"] == "6.75 GB" and values["pp2_sequences"] == "36"
    # PP 2: 36 sequences in two micro-batches of 18, each pass over the whole model:
    # 4.03 ms weights + 18 x (4 GiB + 2 x 38,486,016 B) / 3.35 TB/s = 23.49 ms of reads
    # + 128 x (10 us + 1.5 x 18 x 10,240 B / 450 GB/s) = 1.359 ms + one send of 18 vectors
    # over the network, 25 us + 18 x 10,240 B / 50 GB/s = 28.7 us: 28.91 ms, 1,245 tokens/s
    pass_s = weights + 18 * (4 * 2**30 + 2 * 153_944_064 / 4) / 3.35e12
    pass_s += 128 * (10e-6 + 1.5 * 18 * 10240 / 450e9) + 25e-6 + 18 * 10240 / 50e9
    assert values["pp2_tokens_per_s"] == f"{36 / pass_s:,.0f}" == "1,245"  # more than DP 2
    assert values["tp8_sequences"] == "18"  # replicated KV heads: barely more than TP 4's 16


def test_the_cluster_page_quotes_the_experts_all_to_alls():
    """The rule's experts line: DeepSeek-V3's 2 x (61 - 3) = 116 all-to-alls per token."""
    from lesson_lib.chapters.glue import chapter_numbers

    assert chapter_numbers("cluster")["ds_alltoalls"] == "116"
