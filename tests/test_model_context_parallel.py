"""Context parallelism, every expectation worked out by hand.

The specimen has 16 attention layers of 4 KV heads x 256 x 2 B and 24 query
heads; one query-key pair costs 4 x 24 x 256 = 24,576 FLOPs per layer.
"""

from __future__ import annotations

import pytest

from lesson_lib.model.context_parallel import (
    causal_attention_flops,
    context_parallel_max_sequences,
    context_parallel_prefill,
    context_parallel_sequence_bytes,
    max_dcp,
    ring_attention_min_chunk,
    ring_attention_step,
)
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL
from lesson_lib.model.specs import Fabric

FULL = 262_144
GIB = 2**30


def test_dcp_bound_is_the_kv_head_copies():
    """4 KV heads: TP 8 copies each twice, so DCP up to 2; TP 4 or fewer allows 1."""
    assert [max_dcp(MODEL, tp) for tp in (1, 4, 8, 16)] == [1, 1, 2, 4]


def test_causal_attention_flops_by_hand():
    """4 FLOPs x 16 layers x 24 heads x 256 = 393,216 per pair; 4,096 x 4,097 / 2 pairs."""
    assert causal_attention_flops(MODEL, 1) == 393_216
    assert causal_attention_flops(MODEL, 4096) == 393_216 * 8_390_656


def test_ring_attention_step_at_full_context_over_two_nodes():
    """CP 2 of TP 4 over one NIC: chunk 131,072 tokens; block = 131,072 x 4,096 B / 4
    = 134,217,728 B: 25 us + 2.684 ms. Attention: 4 x 24 x 256 / 2 / 4 = 3,072 FLOPs per
    pair and GPU, x 131,072**2 / 989e12 = 53.4 ms: hidden twenty times over."""
    step = ring_attention_step(MODEL, GPU, INTER_NODE, FULL, 2, tp=4)
    assert step.chunk_tokens == 131_072
    assert step.block_bytes == 134_217_728
    assert step.send_s == pytest.approx(25e-6 + 134_217_728 / 50e9)
    assert step.compute_s == pytest.approx(3_072 * 131_072**2 / 989e12)
    assert step.hidden and step.exposed_s == 0


def test_ring_attention_min_chunk_balances_send_and_attention():
    """At the chunk c returned, 25 us + c x 1,024 B / 50e9 equals 3,072 c**2 / 989e12 (both
    sides typed here); without latency c = 1,024 x 989e12 / (50e9 x 3,072) = 6,593 tokens."""
    c = ring_attention_min_chunk(MODEL, GPU, INTER_NODE, tp=4)
    assert 25e-6 + c * 1024 / 50e9 == pytest.approx(3072 * c**2 / 989e12)
    no_latency = Fabric("no latency", 0.0, 50e9)
    assert ring_attention_min_chunk(MODEL, GPU, no_latency, tp=4) == pytest.approx(6593.3, abs=0.1)
    short = ring_attention_step(MODEL, GPU, INTER_NODE, 2 * int(c) - 2, 2, tp=4)
    long = ring_attention_step(MODEL, GPU, INTER_NODE, 2 * int(c) + 2, 2, tp=4)
    assert not short.hidden and long.hidden


def test_dcp_halves_the_kv_per_gpu_at_tp8():
    """Full context: TP 4 holds one KV head per GPU, 4 GiB, + state / 4 (38,486,016 B); TP 8
    copies the heads, still 4 GiB, + state / 8 (19,243,008 B); DCP 2 makes it 2 GiB."""
    assert context_parallel_sequence_bytes(MODEL, FULL, 4) == 4 * GIB + 38_486_016
    assert context_parallel_sequence_bytes(MODEL, FULL, 8) == 4 * GIB + 19_243_008
    assert context_parallel_sequence_bytes(MODEL, FULL, 8, 2) == 2 * GIB + 19_243_008


def test_dcp_doubles_the_sequences_tp8_holds():
    """79.1 GiB = 84,933,266,022.4 B, less 54e9 / 8 of weights = 78,183,266,022.4 B free:
    / 4,314,210,304 = 18.1 -> 18 sequences without DCP; / 2,166,726,656 = 36.1 -> 36 with."""
    assert context_parallel_max_sequences(MODEL, GPU, FULL, 8) == 18
    assert context_parallel_max_sequences(MODEL, GPU, FULL, 8, 2) == 36
    assert context_parallel_max_sequences(MODEL, GPU, FULL, 4) == 16


def test_context_parallel_prefill_halves_the_full_context_prompt():
    """CP 2 of TP 4 at 262,144 tokens: each position prefills 131,072 tokens,
    2 x 27e9 x 131,072 / (4 x 989e12) = 1.789 s of GEMMs (above the 4 ms of weights), and
    128 all-reduces of 10 us + 1.5 x 131,072 x 10,240 B / 450e9 B/s; the attention,
    393,216 x 262,144 x 262,145 / 2 FLOPs, spreads over 8 GPUs. The ring is hidden."""
    gemm = 2 * 27e9 * 131_072 / (4 * 989e12)
    allreduces = 128 * (10e-6 + 1.5 * 131_072 * 10_240 / 450e9)
    attention = 393_216 * 262_144 * 262_145 / 2 / (8 * 989e12)
    got = context_parallel_prefill(MODEL, GPU, FAST, INTER_NODE, FULL, 2, tp=4)
    assert got == pytest.approx(gemm + allreduces + attention)
    assert got == pytest.approx(4.07, abs=0.005)


def test_context_parallel_prefill_pays_an_exposed_ring():
    """A ring too slow to hide: 1 kB/s between positions. Each of 16 layers x (2 - 1) steps
    adds its send (latency 0 + block bytes / 1e3) less the step's attention."""
    crawl = Fabric("crawl", 0.0, 1e3)
    step = ring_attention_step(MODEL, GPU, crawl, 4096, 2, tp=4)
    assert step.block_bytes == 2048 * 1024  # 2,048 tokens x 4,096 B / 4
    fast_ring = context_parallel_prefill(MODEL, GPU, FAST, FAST, 4096, 2, tp=4)
    slow_ring = context_parallel_prefill(MODEL, GPU, FAST, crawl, 4096, 2, tp=4)
    assert slow_ring - fast_ring == pytest.approx(16 * (2048 * 1024 / 1e3 - step.compute_s))


def test_ring_attention_defaults_to_one_gpu_a_position():
    """Without ``tp`` each ring position is one GPU holding all 4 KV heads: the 2,048-token
    chunk of a 4,096-token prompt over CP 2 sends 2,048 x 2 x 4 x 256 x 2 B = 8,388,608 B,
    and attends with 4 x 24 x 256 / 2 = 12,288 FLOPs per pair: x 2,048**2 / 989e12."""
    step = ring_attention_step(MODEL, GPU, INTER_NODE, 4096, 2)
    assert step.block_bytes == 8_388_608
    assert step.compute_s == pytest.approx(12_288 * 2048**2 / 989e12)
    c = ring_attention_min_chunk(MODEL, GPU, INTER_NODE)
    assert 25e-6 + c * 4096 / 50e9 == pytest.approx(12_288 * c**2 / 989e12)


def test_context_parallel_prefill_defaults_to_one_gpu_a_position():
    """CP 2 of single GPUs on the fast wire, 4,096 tokens: each prefills 2,048 tokens,
    2 x 27e9 x 2,048 / 989e12 of GEMMs (above 54e9 / 3.35e12 of weights) and no all-reduce;
    the attention, 16 x 24,576 x 4,096 x 4,097 / 2 FLOPs, over the 2 GPUs; the ring is hidden
    (10 us + 8,388,608 B / 450e9 = 28.6 us against 52.1 us of attention)."""
    gemm = 2 * 27e9 * 2048 / 989e12
    attention = 16 * 24_576 * 4096 * 4097 / 2 / (2 * 989e12)
    got = context_parallel_prefill(MODEL, GPU, FAST, FAST, 4096, 2)
    assert got == pytest.approx(gemm + attention)


def test_an_exposed_ring_is_paid_at_every_step_of_every_layer():
    """CP 4 of TP 4 at 1 kB/s: chunks of 1,024 tokens, blocks of 1,024 x 4,096 B / 4 =
    1,048,576 B; each of 16 layers x (4 - 1) steps adds 1,048.576 s less its attention,
    3,072 x 1,024**2 / 989e12."""
    crawl = Fabric("crawl", 0.0, 1e3)
    fast_ring = context_parallel_prefill(MODEL, GPU, FAST, FAST, 4096, 4, tp=4)
    slow_ring = context_parallel_prefill(MODEL, GPU, FAST, crawl, 4096, 4, tp=4)
    exposed = 1_048_576 / 1e3 - 3_072 * 1024**2 / 989e12
    assert slow_ring - fast_ring == pytest.approx(16 * 3 * exposed)
