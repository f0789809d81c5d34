"""MoE decode under TP and EP: experts touched, weights per GPU, the all-to-alls, by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson_lib.model.moe import (
    MoEStep,
    _experts_touched,
    _local_batch,
    alltoall_crossover_tokens,
    attention_pair_flops_decode,
    dcp_collectives,
    expert_weight_bytes,
    moe_decode_step,
    sequences_that_fit,
    weights_per_gpu,
)
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import FAST, GPU, H200, INTER_NODE, MODEL

MIXTRAL = PRESETS["Mixtral-8x7B"]
DEEPSEEK = PRESETS["DeepSeek-V3"]


def test_experts_touched_by_hand():
    """One token visits k; two visit 8 (1 - (3/4)^2) = 3.5 of 8 experts at top-2."""
    assert _experts_touched(8, 2, 1) == 2
    assert _experts_touched(8, 2, 2) == pytest.approx(3.5)
    assert _experts_touched(8, 2, 0) == 0


def test_weights_per_gpu_by_hand():
    """Mixtral in bf16: 93,405,585,408 B, of which routed experts 2 x 8 x 32 x 176,160,768 =
    90,194,313,216 B. TP 8 holds an eighth, 11,675,698,176 B; EP 8 a whole copy of the other
    3,211,272,192 B and an eighth of the experts, 11,274,289,152 B: 14,485,561,344 B."""
    assert expert_weight_bytes(MIXTRAL) == 90_194_313_216
    assert weights_per_gpu(MIXTRAL, 8, "tp") == 11_675_698_176
    assert weights_per_gpu(MIXTRAL, 8, "ep") == 14_485_561_344


def test_ep_decode_step_of_mixtral_by_hand():
    """EP 8, batch 8 (one sequence per rank), fast fabric (10 us, 450 GB/s, no hop cost).

    Per MoE layer the rank dispatches 2 vectors of 4096 x 2 B, 7/8 of them off-rank: 14,336 B,
    and combines as many back: 28,672 B; 32 layers: 917,504 B per step, 2.039 us at 450 GB/s.
    Two all-to-alls per layer: 64 x 10 us = 640 us of latency. All ranks: 8 x 917,504 B for
    8 tokens, so 917,504 B per token.
    """
    step = moe_decode_step(MIXTRAL, GPU, FAST, 8, parallelism="ep", batch=8)
    assert step.collectives == 64
    assert step.latency_s == pytest.approx(640e-6)
    assert step.wire_bytes == 917_504
    assert step.bandwidth_s == pytest.approx(917_504 / 450e9)
    assert step.wire_bytes_per_token == 917_504
    assert step.weights_per_gpu_bytes == 14_485_561_344


def test_ep_reads_its_replicated_weights_and_its_touched_experts():
    """EP 8, batch 1: 3,211,272,192 B of non-expert weights, and 2 touched experts / 8 ranks =
    1/4 expert per layer: 1/4 x 352,321,536 B x 32 = 2,818,572,288 B; 6,029,844,480 B at
    3.35 TB/s = 1.8 ms."""
    step = moe_decode_step(MIXTRAL, GPU, FAST, 8, batch=1)
    assert step.weights_s == pytest.approx(6_029_844_480 / 3.35e12)


def test_tp_decode_step_of_mixtral_by_hand():
    """TP 8, batch 1: 64 all-reduces of 8 KiB at 1.75 x: 64 x 14,336 = 917,504 B per rank; the
    rank reads an eighth of the non-expert weights and of the 2 visited experts of each layer:
    (3,211,272,192 + 2 x 32 x 352,321,536) / 8 = 25,759,850,496 / 8 = 3,219,981,312 B."""
    step = moe_decode_step(MIXTRAL, GPU, FAST, 8, parallelism="tp", batch=1)
    assert step.collectives == 64
    assert step.wire_bytes == 917_504
    assert step.total_wire_bytes == 8 * 917_504
    assert step.weights_s == pytest.approx(3_219_981_312 / 3.35e12)
    assert step.latency_s == pytest.approx(640e-6)


def test_fp8_dispatch_and_imbalance():
    """FP8 dispatch halves the dispatch bytes (7,168 instead of 14,336 per layer); an imbalance
    of 1.5 makes the busiest rank send 1.5 x (7,168 + 14,336) x 32 = 1,032,192 B."""
    step = moe_decode_step(MIXTRAL, GPU, FAST, 8, batch=8, dispatch_bytes=1, imbalance=1.5)
    assert step.wire_bytes == 1_032_192


def test_one_gpu_has_no_collective():
    """EP 1 and TP 1 put nothing on the wire."""
    for parallelism in ("ep", "tp"):
        step = moe_decode_step(MIXTRAL, GPU, FAST, 1, parallelism=parallelism)
        assert step.latency_s == 0 and step.wire_bytes == 0


def test_mla_sequences_fit_many_more_under_ep():
    """DeepSeek-V3 on 8 H200-class cards (140 GiB = 150,323,855,360 B each), 32,768 tokens
    of 70,272 B: 2,302,672,896 B per sequence. TP 8: 671,026,404,352 / 8 = 83,878,300,544 B
    of weights, 66,445,554,816 B free; the latent is copied to every rank, so 28 sequences.
    EP 8: each rank keeps its own sequences whole, so (card - its weights) // 2,302,672,896,
    times 8 ranks; on the H100-class card (84.9 GB) EP 8's weights alone do not fit."""
    assert sequences_that_fit(DEEPSEEK, H200, 8, "tp", 32_768) == 66_445_554_816 // 2_302_672_896
    ep_weights = weights_per_gpu(DEEPSEEK, 8, "ep")
    per_rank = (150_323_855_360 - ep_weights) // 2_302_672_896
    assert sequences_that_fit(DEEPSEEK, H200, 8, "ep", 32_768) == 8 * per_rank
    assert sequences_that_fit(DEEPSEEK, GPU, 8, "ep", 32_768) == 0  # 98.9 GB > 84.9 GB


def test_alltoall_crossover_by_hand():
    """Qwen3-235B-A22B on EP 8, fast fabric: 10 us x 450 GB/s = 4.5 MB against 7/8 x 8 x 4096 x
    2 B = 57,344 B per token: about 78.5 tokens per rank."""
    m = PRESETS["Qwen3-235B-A22B"]
    assert alltoall_crossover_tokens(m, FAST, 8) == pytest.approx(4.5e6 / 57_344)
    assert alltoall_crossover_tokens(m, FAST, 8, dispatch_bytes=1) == pytest.approx(4.5e6 / 28_672)


@given(st.integers(1, 256), st.integers(1, 8), st.integers(1, 4096))
def test_experts_touched_stays_between_k_and_e(experts, k, tokens):
    """Never fewer than k (for a token or more), never more than E."""
    k = min(k, experts)
    touched = _experts_touched(experts, k, tokens)
    assert k - 1e-9 <= touched <= experts + 1e-9


@given(st.integers(1, 65_536), st.integers(1, 64))
def test_local_batch_covers_the_batch(batch, n):
    """EP's ranks together hold every sequence; TP's each hold all of them."""
    assert _local_batch(batch, n, "ep") * n >= batch
    assert _local_batch(batch, n, "tp") == batch


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: moe_decode_step(MODEL, GPU, FAST, 2), "model must be a mixture-of-experts"),
        (lambda: moe_decode_step(MIXTRAL, GPU, FAST, 16), "n must be an integer from 1 to 8"),
        (lambda: moe_decode_step(MIXTRAL, GPU, FAST, 2, parallelism="dp"), "parallelism"),
        (lambda: moe_decode_step(MIXTRAL, GPU, FAST, 2, imbalance=3.0), "imbalance must be"),
        (lambda: moe_decode_step(MIXTRAL, GPU, FAST, 2, dispatch_bytes=0), "dispatch_bytes"),
        (lambda: alltoall_crossover_tokens(MIXTRAL, INTER_NODE, 1), "n must be"),
    ],
)
def test_bad_arguments_name_themselves(call, message):
    """A dense model, more ranks than experts, an unknown layout or a bad factor is refused."""
    with pytest.raises(ValueError, match=message):
        call()


def _step(weights_s, flops_s, latency_s, bandwidth_s, batch=4):
    """An MoE step on 8 GPUs with the four timed terms given, the rest placeholders."""
    return MoEStep(
        parallelism="ep",
        n=8,
        batch=batch,
        weights_s=weights_s,
        flops_s=flops_s,
        latency_s=latency_s,
        bandwidth_s=bandwidth_s,
        collectives=64,
        wire_bytes=0.0,
        total_wire_bytes=0.0,
        weights_per_gpu_bytes=0.0,
    )


def test_moe_step_adds_its_terms_by_hand():
    """Weights 3 ms against FLOPs 1 ms: compute 3 ms; 640 us + 2 us of communication; total
    3.642 ms; 4 sequences on the 8 GPUs decode 4 tokens, 4 / 3.642 ms = 1,098.3 tokens/s;
    compute-bound."""
    step = _step(3e-3, 1e-3, 640e-6, 2e-6)
    assert step.compute_s == 3e-3
    assert step.communication_s == pytest.approx(642e-6)
    assert step.total_s == pytest.approx(3.642e-3)
    assert step.tokens == 4
    assert step.tokens_per_s == pytest.approx(1098.298, rel=1e-6)
    assert step.bound == "compute"


def test_moe_step_bound_follows_the_largest_term():
    """FLOPs 1 ms over weights 0.5 ms is the compute; 2 ms of latency beats it, and 3 ms of
    bandwidth beats both."""
    assert _step(0.5e-3, 1e-3, 2e-3, 0.0).bound == "latency"
    assert _step(0.5e-3, 1e-3, 2e-3, 3e-3).bound == "bandwidth"
    assert _step(0.5e-3, 1e-3, 0.0, 0.0).compute_s == 1e-3


def test_gqa_sequences_fit_under_tp_by_hand():
    """Mixtral's 8 KV heads split over TP 8: 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B
    a token, an eighth per GPU, 536,870,912 B per GPU for 32,768 tokens. The H100-class card's
    84,932,978,278.4 B less 11,675,698,176 B of weights leaves 73,257,280,102.4 B: 136.45, so
    136 sequences. TP 4: (84,932,978,278.4 - 23,351,396,352) / 1,073,741,824 = 57.35, 57. TP 1:
    93.4 GB of weights do not fit, none."""
    assert sequences_that_fit(MIXTRAL, GPU, 8, "tp", 32_768) == 136
    assert sequences_that_fit(MIXTRAL, GPU, 4, "tp", 32_768) == 57
    assert sequences_that_fit(MIXTRAL, GPU, 1, "tp", 32_768) == 0


def test_moe_flops_by_hand():
    """Mixtral's 12,879,925,248 active parameters a token, of which routed 2 x 176,160,768 x
    32 = 11,274,289,152 and the rest 1,605,636,096. TP 8, batch 4: 2 x 12,879,925,248 x 4 / 8
    = 12,879,925,248 FLOPs a rank. EP 8, batch 16 (2 sequences a rank), imbalance 1.5: the
    rank's own 2 tokens through the rest, 1.5 x the mean 2 tokens through its experts:
    2 x (1,605,636,096 x 2 + 1.5 x 11,274,289,152 x 2) = 74,068,279,296 FLOPs; over 989e12."""
    tp = moe_decode_step(MIXTRAL, GPU, FAST, 8, parallelism="tp", batch=4)
    assert tp.flops_s == pytest.approx(12_879_925_248 / 989e12)
    assert (tp.parallelism, tp.n, tp.batch) == ("tp", 8, 4)
    ep = moe_decode_step(MIXTRAL, GPU, FAST, 8, batch=16, imbalance=1.5)
    assert ep.flops_s == pytest.approx(74_068_279_296 / 989e12)
    assert (ep.parallelism, ep.n, ep.batch) == ("ep", 8, 16)


# DeepSeek-V3 on 8 H200-class cards (4.8 TB/s, 989 TFLOP/s) at 32,768 tokens of context.
# Its latent per token: (512 + 64) elements x 2 B (bf16) x 61 layers = 70,272 B; a sequence
# of 32,768 tokens 70,272 x 32,768 = 2,302,672,896 B.
SEQUENCE = 2_302_672_896


def test_mla_pair_flops_by_hand():
    """Absorbed MLA: 2 x 128 heads x (512 + 64 + 512) = 278,528 FLOPs per pair and layer."""
    assert attention_pair_flops_decode(DEEPSEEK) == 278_528


def test_tp_reads_every_sequences_whole_latent_on_every_rank():
    """TP 8, 28 sequences: each rank reads 28 x 2,302,672,896 = 64,474,841,088 B, 13.43 ms
    at 4.8 TB/s. Its attention: 28 x 61 x 32,768 x 278,528 / 8 = 1.9486e12 FLOPs per rank,
    1.970 ms at 989 TFLOP/s, below the bytes; the step adds 13.43 ms to its weights'."""
    step = moe_decode_step(DEEPSEEK, H200, FAST, 8, parallelism="tp", batch=28, context=32_768)
    assert step.kv_read_bytes == 64_474_841_088
    assert step.kv_read_s == pytest.approx(13.4322e-3, rel=1e-4)
    assert step.attention_flops_s == pytest.approx(1.9702e-3, rel=1e-4)
    bare = moe_decode_step(DEEPSEEK, H200, FAST, 8, parallelism="tp", batch=28)
    assert step.total_s - bare.total_s == pytest.approx(13.4322e-3, rel=1e-4)


def test_ep_reads_its_own_sequences_and_attends_with_all_heads():
    """EP 8, 176 sequences: 22 on the busiest rank, 22 x 2,302,672,896 = 50,658,803,712 B,
    10.554 ms; all 128 heads: 22 x 61 x 32,768 x 278,528 = 1.22480e13 FLOPs, 12.384 ms at
    989 TFLOP/s, so attention is arithmetic-bound and takes 12.384 ms."""
    step = moe_decode_step(DEEPSEEK, H200, FAST, 8, batch=176, context=32_768, dispatch_bytes=1)
    assert step.kv_read_bytes == 50_658_803_712
    assert step.kv_read_s == pytest.approx(10.5539e-3, rel=1e-4)
    assert step.attention_flops_s == pytest.approx(12.3844e-3, rel=1e-4)
    assert step.attention_s == step.attention_flops_s


def test_dcp_splits_each_sequences_tokens():
    """TP 8 + DCP 8, 230 sequences: each rank reads 230 x 2,302,672,896 / 8 = 66,201,845,760 B,
    13.79 ms; it attends with all 128 heads to 4,096 tokens of each: 230 x 61 x 4,096 x
    278,528 = 1.60061e13 FLOPs, 16.184 ms."""
    step = moe_decode_step(
        DEEPSEEK, H200, FAST, 8, parallelism="tp", batch=230, context=32_768, dcp=8
    )
    assert step.kv_read_bytes == 66_201_845_760
    assert step.attention_flops_s == pytest.approx(16.1842e-3, rel=1e-4)


def test_dcp_collectives_by_hand():
    """One sequence, DCP 8 inside TP 8: the group gathers 16 x 8 = 128 heads' queries of
    576 x 2 B, 147,456 B; their log-sum-exps, 128 x 4 = 512 B; and reduce-scatters their
    outputs of 512 x 2 B, 131,072 B."""
    assert dcp_collectives(DEEPSEEK, 8, 8, 1) == (
        ("all_gather", 147_456),
        ("all_gather", 512),
        ("reduce_scatter", 131_072),
    )
    assert dcp_collectives(DEEPSEEK, 8, 1, 1) == ()


def test_dcp_step_latency_and_bytes_by_hand():
    """One sequence at TP 8 + DCP 8 on the fast fabric (10 us, 450 GB/s): 122 all-reduces and
    3 x 61 = 183 DCP collectives, 305 x 10 us = 3.05 ms. Bytes per rank: 122 all-reduces of
    14,336 B at 1.75, 3,060,736 B; DCP 61 x 7/8 x (147,456 + 512 + 131,072) = 61 x 244,160 =
    14,893,760 B; 17,954,496 B in all."""
    step = moe_decode_step(DEEPSEEK, H200, FAST, 8, parallelism="tp", context=32_768, dcp=8)
    assert step.collectives == 305
    assert step.latency_s == pytest.approx(3.05e-3)
    assert step.wire_bytes == pytest.approx(17_954_496)
    assert step.total_wire_bytes == pytest.approx(8 * 17_954_496)


def test_no_context_reads_no_cache():
    """context=0 prices the weights alone, as before the cache was priced."""
    step = moe_decode_step(MIXTRAL, GPU, FAST, 8, batch=8)
    assert step.kv_read_s == 0 and step.attention_flops_s == 0
    assert step.compute_s == max(step.weights_s, step.flops_s)


def test_sequences_that_fit_with_dcp_by_hand():
    """TP 8 + DCP 8 on H200: 150,323,855,360 - 671,026,404,352 / 8 = 66,445,554,816 B free,
    a sequence 2,302,672,896 / 8 = 287,834,112 B per rank: 230 (230.8)."""
    assert sequences_that_fit(DEEPSEEK, H200, 8, "tp", 32_768, dcp=8) == 230


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: moe_decode_step(DEEPSEEK, H200, FAST, 8, dcp=2), "dcp must be 1 under EP"),
        (
            lambda: moe_decode_step(DEEPSEEK, H200, FAST, 8, parallelism="tp", dcp=3),
            "dcp must divide",
        ),
        (
            lambda: moe_decode_step(MIXTRAL, GPU, FAST, 8, parallelism="tp", dcp=2),
            "dcp must be an integer from 1 to 1",
        ),
    ],
)
def test_dcp_refusals(call, message):
    """DCP lives in TP, divides it, and removes only copies (Mixtral's 8 KV heads at TP 8: none)."""
    with pytest.raises(ValueError, match=message):
        call()
