"""Overlap, fusion and low precision: launches saved, chunked overlap, dual batches, by hand."""

from __future__ import annotations

import pytest

from lesson_lib.model.overlap import (
    NVFP4_BYTES,
    TECHNIQUES,
    chunked_overlap,
    dual_batch_overlap,
    fused_launch_saving_s,
    kv_sequences,
    low_precision_decode,
    step_time,
)
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import FAST, GPU, KERNEL_LAUNCH_EAGER, KERNEL_LAUNCH_GRAPH

MIXTRAL = PRESETS["Mixtral-8x7B"]


def test_fusion_saves_one_launch_per_allreduce():
    """128 x 3.5 us = 0.448 ms eager, 128 x 0.5 us = 0.064 ms from graphs: against the lesson's
    5.31 ms token on four fast GPUs, 8.4 % and 1.2 %."""
    assert fused_launch_saving_s(128, KERNEL_LAUNCH_EAGER) == pytest.approx(0.448e-3)
    assert fused_launch_saving_s(128, KERNEL_LAUNCH_GRAPH) == pytest.approx(0.064e-3)
    assert 0.448 / 5.3099 == pytest.approx(0.0844, abs=5e-4)
    assert 0.064 / 5.3099 == pytest.approx(0.0121, abs=5e-4)
    fused = step_time(1, "fused")
    assert fused.launches_s == 0 and fused.latency_s == pytest.approx(128 * 10e-6)


def test_chunked_prefill_allreduce_by_hand():
    """4,096 tokens on four fast GPUs: wire 1.5 x 40 MiB / 450e9 = 139.81 us; compute
    2 x 27e9 x 4096 / 4 / 989e12 = 55.91 ms, / 128 = 436.8 us. Four chunks: c = 10 + 34.95 =
    44.95 us, g = 109.2 us; total 44.95 + 3 x 109.2 + 109.2 = 481.8 us, 44.95 us exposed
    against 149.81 us unhidden."""
    wire = 1.5 * 40 * 2**20 / 450e9
    compute = 2 * 27e9 * 4096 / 4 / 989e12 / 128
    one = chunked_overlap(10e-6, wire, compute, 4)
    assert wire == pytest.approx(139.81e-6, abs=0.01e-6)
    assert compute == pytest.approx(436.8e-6, abs=0.1e-6)
    assert one.total_s == pytest.approx(481.76e-6, abs=0.01e-6)
    assert one.exposed_s == pytest.approx(44.95e-6, abs=0.01e-6)
    # per prompt: 128 x 44.95 us = 5.75 ms exposed, against 128 x 149.81 us = 19.18 ms
    prompt = step_time(4096, "chunked")
    assert prompt.latency_s + prompt.bandwidth_s == pytest.approx(5.754e-3, abs=1e-6)
    plain = step_time(4096)
    assert plain.latency_s + plain.bandwidth_s == pytest.approx(19.176e-3, abs=1e-6)


def test_chunking_a_decoded_token_adds_latency():
    """One token: wire 1.5 x 10 KiB / 450e9 = 0.0341 us, compute 4.03 ms / 128 = 31.48 us.
    Four chunks: c = 10.0085 us, g = 7.87 us, total 10.0085 + 3 x 10.0085 + 7.87 = 47.90 us,
    against 10.034 + 31.48 = 41.52 us unchunked."""
    wire, compute = 1.5 * 10 * 1024 / 450e9, 54e9 / 4 / 3.35e12 / 128
    four = chunked_overlap(10e-6, wire, compute, 4)
    one = chunked_overlap(10e-6, wire, compute, 1)
    assert four.total_s == pytest.approx(47.905e-6, abs=0.001e-6)
    assert one.total_s == pytest.approx(41.517e-6, abs=0.001e-6)
    assert step_time(1, "chunked").total_s > step_time(1).total_s


def test_chunked_overlap_limits():
    """k = 1 is no overlap (c + C); c << g hides all but the first chunk; c >> g hides all
    but... the whole compute: 10 + 100 us of wire over 4 chunks against 4 us of compute:
    c = 35, g = 1, total 35 + 3 x 35 + 1 = 141 us, exposed 137 us, hidden 3 us."""
    assert chunked_overlap(5e-6, 3e-6, 40e-6, 1).total_s == pytest.approx(48e-6)
    assert chunked_overlap(5e-6, 3e-6, 40e-6, 1).hidden_s == pytest.approx(0.0)
    small = chunked_overlap(1e-6, 4e-6, 400e-6, 4)  # c = 2, g = 100
    assert small.exposed_s == pytest.approx(2e-6)
    big = chunked_overlap(10e-6, 100e-6, 4e-6, 4)
    assert big.total_s == pytest.approx(141e-6)
    assert big.hidden_s == pytest.approx(3e-6)


def test_fp8_allreduce_halves_prefill_wire_not_decode_latency():
    """Prefill's wire 128 x 139.81 us = 17.90 ms becomes 8.95 ms; decode keeps 1.28 ms."""
    assert step_time(4096, "fp8_allreduce").bandwidth_s == pytest.approx(8.948e-3, abs=1e-6)
    assert step_time(1, "fp8_allreduce").latency_s == pytest.approx(1.28e-3)


def test_low_precision_decode_by_hand():
    """FP8: 6.75 GB / 3.35 TB/s = 2.0149 ms + 1.28 = 3.2949 ms on four; 13.5 GB: 4.0299 +
    1.28 = 5.3099 ms on two: 1.6115x. NVFP4, 0.5625 B a weight: 3.796875 GB -> 1.1334 ms +
    1.28 = 2.4134 ms on four, 2.2668 + 1.28 = 3.5468 ms on two: 1.4696x."""
    assert low_precision_decode(1, 4).total_s == pytest.approx(3.2949e-3, abs=1e-7)
    assert low_precision_decode(1, 2).total_s == pytest.approx(5.3099e-3, abs=1e-7)
    assert 5.3099 / 3.2949 == pytest.approx(1.6115, abs=1e-4)
    assert NVFP4_BYTES == 0.5625
    assert low_precision_decode(NVFP4_BYTES, 4).total_s == pytest.approx(2.4134e-3, abs=1e-7)
    assert low_precision_decode(NVFP4_BYTES, 2).total_s == pytest.approx(3.5468e-3, abs=1e-7)
    assert step_time(1, "fp8_weights").compute_s == pytest.approx(2.0149e-3, abs=1e-7)


def test_fp8_kv_fits_more_sequences():
    """Four GPUs at 262,144 tokens: 79.1 GiB - 13.5 GB = 71,432,978,278.4 B free a GPU; a
    sequence's bf16 cache 16 GiB / 4 = 4,294,967,296 B, its state (conv and fp32 recurrent,
    153,944,064 B) / 4 = 38,486,016 B. bf16: 71.43e9 // 4,333,453,312 = 16; FP8 cache:
    // 2,185,969,664 = 32."""
    assert 71_432_978_278.4 // 4_333_453_312 == 16
    assert 71_432_978_278.4 // 2_185_969_664 == 32
    assert kv_sequences(262_144, 2, 4) == 16
    assert kv_sequences(262_144, 1, 4) == 32


def test_dual_batch_overlap_small_and_large_batches():
    """Mixtral, EP 8, H100-class, fast fabric. Batch 16 (a micro-batch of 8, one a rank):
    compute reads 3,211,272,192 B of shared weights and 8 (1 - 0.75^8) / 8 = 0.899887 of an
    expert per layer, x 352,321,536 B x 32 = 10,145,708,... B: 3.987 ms; its all-to-alls 64 x
    10 us + 917,504 B / 450 GB/s = 642.04 us: hidden, yet 2 x 3.987 = 7.97 ms against 4.934 ms
    at once. Batch 4096: compute 2 x (1,782,769,664 x 256 + 11,274,289,152 x 2048 / 8) FLOP
    / 989e12 = 6.668 ms a half against 640 + 256 x 917,504 / 450e9 = 1,162 us: 13.34 ms
    against 15.02 ms at once."""
    small = dual_batch_overlap(MIXTRAL, GPU, FAST, 8, 16)
    shared, expert = 3_211_272_192, 352_321_536
    half_read = shared + 8 * (1 - 0.75**8) / 8 * expert * 32
    assert small.compute_half_s == pytest.approx(half_read / 3.35e12)
    assert small.alltoall_half_s == pytest.approx(640e-6 + 917_504 / 450e9)
    assert small.hidden and small.with_s > small.without_s
    large = dual_batch_overlap(MIXTRAL, GPU, FAST, 8, 4096)
    other, routed = 12_879_925_248 - 11_274_289_152, 11_274_289_152
    half_flops = 2 * (other * 256 + routed * 2048 / 8)
    assert large.compute_half_s == pytest.approx(half_flops / 989e12)
    assert large.alltoall_half_s == pytest.approx(640e-6 + 256 * 917_504 / 450e9)
    assert large.with_s == pytest.approx(2 * half_flops / 989e12)
    assert large.with_s < large.without_s


def test_refusals_name_the_parameter():
    """An unknown technique, an odd batch, a chunk count of 0."""
    with pytest.raises(ValueError, match=r"^technique must be one of"):
        step_time(1, "magic")
    with pytest.raises(ValueError, match=r"^batch must be even"):
        dual_batch_overlap(MIXTRAL, GPU, FAST, 8, 15)
    with pytest.raises(ValueError, match=r"^chunks must be"):
        chunked_overlap(1e-6, 1e-6, 1e-6, 0)
    assert len(TECHNIQUES) == 5
