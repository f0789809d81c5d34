"""The cluster planner: validity, DP, placement, TP across nodes, prices, bad input, hand-offs."""

import pytest
from model_functions import model_functions
from numpy.testing import assert_allclose

from lesson_lib import GB, Fabric, decode_step
from lesson_lib.model.cluster_disaggregated import plan_disaggregated
from lesson_lib.model.cluster_plan import dp_neighbours, spans_nodes, stage_hand_offs, tp_groups
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL, SLOW


def test_one_node_of_four_is_the_lessons_line():
    """TP 4 in one node prices exactly as decode_step on the fast fabric."""
    plan = plan_cluster(MODEL, GPU, 4, 1, 4)
    assert plan.valid and plan.flags == () and plan.dp == 1
    assert plan.tp_fabric is FAST and not plan.tp_crosses_nodes
    assert plan.token_time_s == decode_step(MODEL, GPU, FAST, 4).total_s
    assert_allclose(plan.weights_per_gpu_bytes, 13.5 * GB)


@pytest.mark.parametrize(
    ("gpus_per_node", "nodes", "tp", "pp", "dp"),
    [(8, 1, 4, 1, 2), (4, 2, 4, 1, 2), (4, 2, 4, 2, 1), (8, 2, 4, 2, 2), (2, 1, 1, 1, 2)],
)
def test_dp_is_gpus_over_tp_times_pp(gpus_per_node, nodes, tp, pp, dp):
    """DP fills the rest: gpus / (tp x pp), and every GPU is used."""
    plan = plan_cluster(MODEL, GPU, gpus_per_node, nodes, tp, pp)
    assert plan.dp == dp and plan.valid
    assert plan.tp * plan.pp * plan.dp == plan.gpus and plan.idle_gpus == 0
    assert_allclose(plan.tokens_per_s_total, dp * plan.tokens_per_s_replica)


def test_placement_keeps_tp_inside_nodes_and_pp_across():
    """Ranks fill TP first, then DP, then PP: on 2 x 4 with PP 2 each stage owns a node."""
    plan = plan_cluster(MODEL, GPU, 4, 2, 4, 2)
    assert {s.node for s in plan.placement if s.stage == 0} == {0}
    assert {s.node for s in plan.placement if s.stage == 1} == {1}
    assert [s.tp_rank for s in plan.placement] == [0, 1, 2, 3] * 2
    assert plan.pp_network_boundaries == 1
    # vLLM sends the hidden state and the residual: 2 x 10,240 B a token
    send = INTER_NODE.latency + 2 * 10_240 / INTER_NODE.bandwidth
    assert_allclose(plan.pp_send_s, send)
    assert_allclose(plan.token_time_s, decode_step(MODEL, GPU, FAST, 4).total_s + send)


def test_pp_inside_one_node_uses_the_intra_fabric():
    """Two stages in one 8-GPU node hand off over NVLink, not the network."""
    plan = plan_cluster(MODEL, GPU, 8, 1, 4, 2)
    assert plan.pp_network_boundaries == 0
    assert_allclose(plan.pp_send_s, FAST.latency + 2 * 10_240 / FAST.bandwidth)


def test_pp_halves_weights_and_raises_sequences():
    """PP 2 halves each GPU's weights; more full-length sequences fit per replica."""
    tp_only = plan_cluster(MODEL, GPU, 4, 2, 4, 1)
    with_pp = plan_cluster(MODEL, GPU, 4, 2, 4, 2)
    assert_allclose(with_pp.weights_per_gpu_bytes, tp_only.weights_per_gpu_bytes / 2)
    assert tp_only.sequences_per_replica == 16  # the sizing chapter's TP = 4 count
    assert with_pp.sequences_per_replica > 2 * tp_only.sequences_per_replica


def test_tp_across_nodes_is_flagged_and_priced_on_the_network():
    """TP 4 over 2 nodes of 2 stays valid, is flagged, and pays the network's latency."""
    plan = plan_cluster(MODEL, GPU, 2, 2, 4)
    assert plan.valid and plan.tp_crosses_nodes and plan.tp_fabric is INTER_NODE
    assert any("spans nodes" in f for f in plan.flags)
    assert plan.token_time_s == decode_step(MODEL, GPU, INTER_NODE, 4).total_s
    assert plan.token_time_s > plan_cluster(MODEL, GPU, 4, 1, 4).token_time_s
    assert plan.verdict.startswith("valid, flagged")


def test_uneven_nodes_split_a_tp_group():
    """6 GPUs per node and TP 4: one of the three groups straddles two nodes."""
    plan = plan_cluster(MODEL, GPU, 6, 2, 4)
    assert plan.valid and plan.dp == 3 and plan.tp_crosses_nodes


def test_tp8_replicates_kv_heads_legal_but_flagged():
    """TP 8 is legal (KV heads copied, as vLLM does) and flagged; across two nodes, twice."""
    inside = plan_cluster(MODEL, GPU, 8, 1, 8)
    assert inside.valid and inside.verdict.startswith("valid, flagged")
    assert "4 KV heads" in inside.flags[0] and "2 GPUs" in inside.flags[0]
    across = plan_cluster(MODEL, GPU, 4, 2, 8)
    assert across.valid and across.tp_crosses_nodes and len(across.flags) == 2


def test_gpu_count_must_match():
    """TP x PP x DP must equal the GPUs: leftovers and too-small clusters are problems."""
    leftover = plan_cluster(MODEL, GPU, 3, 2, 4)
    assert leftover.dp == 1 and leftover.idle_gpus == 2
    assert any("must equal the 6 GPUs" in p for p in leftover.problems)
    too_small = plan_cluster(MODEL, GPU, 4, 1, 4, 2)
    assert too_small.dp == 0 and too_small.placement == ()
    assert any("only 4" in p for p in too_small.problems)
    assert too_small.tokens_per_s_total == 0


def test_pp3_is_legal_with_uneven_stages_by_hand():
    """PP 3 x TP 4 on three nodes: stages of 21, 22, 21 layers, 49 full-length sequences.

    Per GPU (84.93 GB card; 13.5 GB of weights at TP 4; 4 GiB of KV and 38.5 MB of
    state per sequence at TP 4, split over 16 attention and 48 DeltaNet layers):
    the last stage holds 21 layers, 6 of them attention, 15 DeltaNet: weights
    13.5e9 x 21 / 64 = 4.43 GB; per sequence 4 GiB x 6 / 16 + 38,486,016 x 15 / 48
    = 1,622,639,616 B; (84,932,978,278 - 4,429,687,500) / 1,622,639,616 = 49.6: 49.
    The first stage (5 attention, 16 DeltaNet) would hold 59.
    """
    plan = plan_cluster(MODEL, GPU, 4, 3, 4, 3)
    assert plan.valid and plan.sequences_per_replica == 49
    assert plan.verdict.startswith("valid, flagged: PP = 3 splits the 64 layers")
    even = plan_cluster(MODEL, GPU, 4, 2, 4, 2)
    assert even.stage_imbalance == 1.0


def test_pp3_is_paced_by_the_stage_with_most_attention_layers_by_hand():
    """The 21-layer stage with 6 of 16 attention layers, not the 22-layer one, sets PP 3's pace.

    A micro-batch is ceil(49 / 3) = 17 sequences of 262,144 tokens, TP 4 (3.35 TB/s HBM,
    989 TFLOP/s, NVLink all-reduce 10 us each). Whole model, all 64 layers:
    weights 54e9 / 4 / 3.35e12 = 4.029851 ms (their FLOPs, 2 x 27e9 x 17 / (4 x 989e12) =
    0.232 ms, hide under it); KV 65,536 B x 262,144 / 4 = 4,294,967,296 B and state
    2 passes x 153,944,064 / 4 = 76,972,032 B a sequence, x 17 = 74,322,968,576 B / 3.35e12 =
    22.185961 ms (attention FLOPs 16 x 24,576 x 262,144 x 17 / 3.956e15 = 0.443 ms, hidden);
    128 all-reduces x 10 us = 1.28 ms and 128 x 261,120 B / 450e9 = 0.074274 ms:
    27.570085 ms. Each stage, the same terms for its own layers:

    - 21 layers, 6 attention, 15 DeltaNet: weights 4.029851 x 21 / 64 = 1.322295 ms; KV
      4 GiB x 6 / 16 = 1,610,612,736 B, state 2 x 15 x 3,207,168 / 4 = 24,053,760 B, x 17 =
      27,789,330,432 B / 3.35e12 = 8.295323 ms; 42 all-reduces 0.42 + 0.024371 ms: 10.061988 ms.
    - 22 layers, 5 attention, 17 DeltaNet: 1.385261 + (1,342,177,280 + 27,260,928) x 17 / 3.35e12
      = 6.949388 ms + 0.44 + 0.025532 ms = 8.800181 ms; 21 layers, 5 and 16: 8.707916 ms.

    The slowest stage against a third of the whole: 10.061988 x 3 / 27.570085 = 1.094881 (the
    layer count alone said 22 x 3 / 64 = 1.03125). Two network hand-offs of 17 vectors, each
    25 us + 17 x 20,480 B / 50e9 = 31.9632 us: a token every 3 x 10.061988 + 0.063926 =
    30.249890 ms (28.495577 ms by the layer count), 49 / 30.249890 ms = 1,619.84 tokens/s.
    """
    plan = plan_cluster(MODEL, GPU, 4, 3, 4, 3)
    whole = 4.029851 + 22.185961 + 1.28 + 0.074274
    assert plan.batched_step.total_s * 1e3 == pytest.approx(whole, abs=2e-6)
    third_stage = 1.322295 + 8.295323 + 0.42 + 0.024371
    assert plan.stage_imbalance == pytest.approx(third_stage * 3 / whole, rel=1e-6)
    assert plan.stage_imbalance == pytest.approx(1.094881, abs=1e-6)
    assert plan.batched_send_s * 1e6 == pytest.approx(2 * 31.9632)
    assert plan.batched_token_time_s * 1e3 == pytest.approx(30.249890, abs=2e-6)
    assert plan.tokens_per_s_total == pytest.approx(1619.84, abs=0.01)


def test_weights_that_do_not_fit_are_a_problem():
    """A 40 GB card cannot hold the 54 GB of weights on one GPU."""
    small = type(GPU)("40 GB card", 40 * GB, GPU.hbm_bandwidth, GPU.peak_flops)
    plan = plan_cluster(MODEL, small, 1, 1, 1)
    assert not plan.weights_fit and not plan.valid
    assert any("weights need 54 GB" in p for p in plan.problems)
    assert plan.sequences_per_replica == 0


def test_slower_intra_fabric_slows_tp():
    """Swapping NVLink for the slow fabric raises the TP step's latency term."""
    fast = plan_cluster(MODEL, GPU, 4, 1, 4)
    slow = plan_cluster(MODEL, GPU, 4, 1, 4, intra=SLOW)
    assert slow.token_time_s > fast.token_time_s
    assert slow.tp_fabric is SLOW


@pytest.mark.parametrize(
    ("kwargs", "name", "error"),
    [
        ({"gpus_per_node": 0}, "gpus_per_node", ValueError),
        ({"nodes": 0}, "nodes", ValueError),
        ({"nodes": 1.5}, "nodes", TypeError),
        ({"tp": 0}, "tp", ValueError),
        ({"pp": -1}, "pp", ValueError),
        ({"context_tokens": 0}, "context_tokens", ValueError),
        ({"intra": "nvlink"}, "intra", TypeError),
        ({"inter": None}, "inter", TypeError),
        ({"model": "qwen"}, "model", TypeError),
        ({"accel": 80e9}, "accel", TypeError),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name, error):
    """Each bad argument raises with its own name in the message."""
    with pytest.raises(error, match=name):
        plan_cluster(**kwargs)


def test_short_verdict_names_every_flag_briefly():
    """The table's verdicts: both flags of TP 8 across nodes, PP 3's stages, a full problem."""
    assert plan_cluster(MODEL, GPU, 4, 1, 4).short_verdict == "valid"
    assert plan_cluster(MODEL, GPU, 8, 1, 8).short_verdict == (
        "valid, flagged: each KV head on 2 GPUs"
    )
    assert plan_cluster(MODEL, GPU, 4, 2, 8).short_verdict == (
        "valid, flagged: each KV head on 2 GPUs; TP all-reduces on the network"
    )
    assert plan_cluster(MODEL, GPU, 4, 3, 4, 3).short_verdict == (
        "valid, flagged: stages of 21, 22, 21 layers"
    )
    invalid = plan_cluster(MODEL, GPU, 3, 1, 3)
    assert invalid.short_verdict == invalid.verdict
    assert invalid.short_verdict.startswith("invalid: TP = 3 does not divide the 4 KV heads")


def test_inter_node_fabric_is_a_stated_assumption():
    """The network constant is labelled an assumption, 50 GB/s per direction."""
    assert isinstance(INTER_NODE, Fabric)
    assert "assumption" in INTER_NODE.name
    assert INTER_NODE.bandwidth == 50 * GB
    assert FAST.latency < INTER_NODE.latency


def test_sizes_are_bounded():
    """A cluster or a replica of more than 4096 GPUs is refused at once, naming the product."""
    with pytest.raises(ValueError, match=r"^tp x pp must be at most 4096"):
        plan_cluster(MODEL, GPU, 8, 1, 4096, 4096)
    with pytest.raises(ValueError, match=r"^gpus_per_node x nodes must be at most 4096"):
        plan_cluster(MODEL, GPU, 4096, 2, 4)
    with pytest.raises(ValueError, match=r"^gpus_per_node must be an integer from 1 to 4096"):
        plan_cluster(MODEL, GPU, 10**18, 1, 4)


def test_plan_cluster_prices_expert_parallelism_for_an_moe_preset():
    """DeepSeek-V3, EP 8 on one node of H200-class cards: the experts chapter's EP layout
    (bf16 dispatch here): 116 all-to-alls x 10 us = 1.16 ms of latency, 8 x 22 = 176
    sequences of 32,768 tokens; on two nodes of four the group spans the network:
    116 x 25 us = 2.9 ms, flagged."""
    from lesson_lib.model.presets import PRESETS
    from lesson_lib.model.specimen import H200

    deepseek = PRESETS["DeepSeek-V3"]
    one = plan_cluster(deepseek, H200, 8, 1, tp=1, ep=8, context_tokens=32_768)
    assert one.valid and not one.flags and one.label == "1 node x 8 GPUs: EP 8"
    assert one.step.latency_s == pytest.approx(116 * 10e-6)
    assert one.sequences_total == 176
    across = plan_cluster(deepseek, H200, 4, 2, tp=1, ep=8, context_tokens=32_768)
    assert across.ep_crosses_nodes and across.step.latency_s == pytest.approx(116 * 25e-6)
    assert across.short_verdict == "valid, flagged: EP all-to-alls on the network"
    two = plan_cluster(deepseek, H200, 8, 2, tp=1, ep=8, context_tokens=32_768)
    assert two.dp == 2 and two.sequences_total == 2 * 176


def test_plan_cluster_refuses_ep_where_it_is_not_modelled():
    """A dense model, EP beside TP, more EP ranks than experts; EP 3 leaves experts uneven."""
    from lesson_lib.model.presets import PRESETS
    from lesson_lib.model.specimen import H200

    mixtral = PRESETS["Mixtral-8x7B"]
    with pytest.raises(ValueError, match="ep must be 1 for a dense model"):
        plan_cluster(MODEL, GPU, 4, 1, tp=1, ep=4)
    with pytest.raises(ValueError, match="ep > 1 is modelled with tp = 1"):
        plan_cluster(mixtral, H200, 8, 1, tp=2, ep=4)
    with pytest.raises(ValueError, match="ep must be an integer from 1 to 8"):
        plan_cluster(mixtral, H200, 16, 1, tp=1, ep=16)
    uneven = plan_cluster(mixtral, H200, 3, 1, tp=1, ep=3)
    assert uneven.problems[0].startswith("EP = 3 does not divide the 8 experts")


def test_plan_cluster_prices_an_moe_under_tp_by_its_routed_experts():
    """Qwen3-235B-A22B, TP 8 on one node of H100-class cards: each token reads the
    22,190,739,456 active parameters x 2 B / 8 GPUs = 5.55 GB per GPU, / 3.35 TB/s
    = 1.656 ms, not all 235,093,610,496 parameters (17.5 ms); 2 all-reduces x 94
    layers = 188, x 10 us = 1.88 ms of latency. Across two nodes of four: 188 x 25 us
    = 4.7 ms, flagged. An MoE with PP is not modelled."""
    from lesson_lib.model.presets import PRESETS

    qwen = PRESETS["Qwen3-235B-A22B"]
    one = plan_cluster(qwen, GPU, 8, 1, tp=8)
    assert one.valid and not one.flags
    assert one.step.weights_s == pytest.approx(22_190_739_456 * 2 / 8 / 3.35e12)
    assert one.step.latency_s == pytest.approx(188 * 10e-6)
    across = plan_cluster(qwen, GPU, 4, 2, tp=8)
    assert across.flags == (
        "a TP group spans nodes, so its 188 all-reduces per token run on the network",
    )
    assert across.step.latency_s == pytest.approx(188 * 25e-6)
    with pytest.raises(ValueError, match="an MoE model is modelled with pp = 1, got pp = 2"):
        plan_cluster(qwen, GPU, 4, 2, tp=4, pp=2)


def test_disaggregated_handoff_by_placement():
    """A full-length request, TP 4 to TP 4: each GPU's 4 GiB + 146.8125 / 4 MiB
    (4,333,453,312 B) over NVLink, 10 us + / 450e9; over its NIC, 25 us + / 50e9; the whole
    17,333,813,248 B through one 25 GB/s shared port, 50 us + / 25e9."""
    full = 262_144
    one = plan_disaggregated(placement="one node", prompt_tokens=full)
    rail = plan_disaggregated(placement="rail", prompt_tokens=full)
    shared = plan_disaggregated(placement="shared port", prompt_tokens=full)
    assert one.shipped_s == pytest.approx(10e-6 + 4_333_453_312 / 450e9)
    assert rail.shipped_s == pytest.approx(25e-6 + 4_333_453_312 / 50e9)
    assert shared.shipped_s == pytest.approx(50e-6 + 17_333_813_248 / 25e9)
    assert rail.streamed_s < rail.shipped_s / 10
    assert one.valid and rail.valid and shared.valid


def test_disaggregated_plan_lists_its_problems():
    """TP 8 + TP 8 do not fit in one 8-GPU node; TP 3 cannot split the 4 KV heads."""
    crowded = plan_disaggregated(prefill_tp=8, decode_tp=8, placement="one node")
    assert crowded.problems == ("TP 8 + TP 8 = 16 GPUs do not fit in one node of 8",)
    assert plan_disaggregated(prefill_tp=8, decode_tp=8, placement="rail").valid
    odd = plan_disaggregated(prefill_tp=3)
    assert odd.problems[0].startswith("prefill instance: TP = 3 does not divide the 4 KV heads")
    with pytest.raises(ValueError, match=r"^placement must be one of 'one node', 'rail'"):
        plan_disaggregated(placement="same rack")


#: A wrong object or an absurd size for each kind of parameter, and the error it must raise.
BAD = {
    "ModelSpec": ("Qwen", TypeError),
    "Accelerator": (80e9, TypeError),
    "Fabric": ({"latency": 1e-5}, TypeError),
    "int": (10**400, ValueError),
}
REFUSALS = [
    pytest.param(function, args, p.name, *BAD[str(p.annotation)], id=f"{name}-{p.name}")
    for name, function, params, args in model_functions(
        ["model.cluster_planner", "model.cluster_disaggregated"]
    )
    for p in params
    if str(p.annotation) in BAD
]


@pytest.mark.parametrize(("function", "args", "name", "bad", "error"), REFUSALS)
def test_planners_refuse_a_wrong_object_or_an_absurd_size_naming_it(
    function, args, name, bad, error
):
    """A wrong object is a TypeError, a 400-digit integer a ValueError, each naming the parameter."""
    with pytest.raises(error, match=rf"^{name} must be"):
        function(**{**args, name: bad})


def test_groups_hand_offs_and_replicas_read_from_the_placement():
    """Two nodes of four: TP 4 x PP 2 hands stage 0 (ranks 0-3, node 0) to stage 1 (ranks
    4-7, node 1) over the network; TP 4 x DP 2 puts its replicas on the two nodes; TP 8
    spans both."""
    pp2 = plan_cluster(MODEL, GPU, 4, 2, 4, 2)
    groups = tp_groups(pp2.placement)
    assert list(groups) == [(0, 0), (0, 1)]
    assert [s.rank for s in groups[(0, 1)]] == [4, 5, 6, 7]
    ((replica, here, there, across),) = stage_hand_offs(groups)
    assert (replica, [s.node for s in here], [s.node for s in there], across) == (
        0, [0] * 4, [1] * 4, True,
    )  # fmt: skip
    assert dp_neighbours(pp2) == []
    dp2 = plan_cluster(MODEL, GPU, 4, 2, 4, 1)
    ((first, second),) = dp_neighbours(dp2)
    assert (first[0].node, second[0].node) == (0, 1)
    assert stage_hand_offs(tp_groups(dp2.placement)) == []
    tp8 = plan_cluster(MODEL, GPU, 4, 2, 8)
    assert [spans_nodes(g) for g in tp_groups(tp8.placement).values()] == [True]
