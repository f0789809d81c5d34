"""The KV cache on the wire, every expectation worked out by hand.

The specimen's per-token KV cache is 2 (K and V) x 16 attention layers x 4 KV
heads x 256 x 2 B = 65,536 B = 64 KiB. Its recurrent state, per Gated DeltaNet
layer: 48 value heads x 128 x 128 x 4 B = 3,145,728 B, plus the convolution's
(2 x 16 x 128 + 48 x 128) = 10,240 channels x 3 x 2 B = 61,440 B; 3,207,168 B
per layer, x 48 layers = 153,944,064 B = 146.8125 MiB.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from lesson_lib.model.kv_transfer import (
    context_parallel_sequence_bytes,
    handoff,
    kv_transfer_bytes,
    kv_transfer_time,
    overlap_stream,
    prefill_time,
    requests_per_second,
    sharded_transfer,
)
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL, NODE_ETHERNET
from lesson_lib.model.step_time import prefill_step

STATE = 153_944_064  # bytes, by hand above
FULL = 262_144
GIB = 2**30
MIB = 2**20


def test_full_length_sequence_is_16_gib_and_the_state():
    """262,144 x 65,536 B = 2**18 x 2**16 = 2**34 B = 16 GiB, + 146.8125 MiB of state."""
    assert kv_transfer_bytes(MODEL, FULL) == 16 * GIB + STATE
    assert STATE / MIB == 146.8125
    assert kv_transfer_bytes(MODEL, FULL) == 17_333_813_248


def test_lesson_prompt_is_4096_times_64_kib_and_the_state():
    """4,096 x 65,536 B = 268,435,456 B (256 MiB); + 153,944,064 B = 422,379,520 B."""
    assert kv_transfer_bytes(MODEL, 4096) == 4096 * 64 * 1024 + STATE == 422_379_520


def test_one_token_still_carries_the_whole_state():
    """A one-token cache is 64 KiB of KV beside 146.8 MiB of state: the state does not shrink."""
    assert kv_transfer_bytes(MODEL, 1) == 65_536 + STATE


def test_full_length_sequence_over_one_400_gbps_nic():
    """400 Gb/s / 8 = 50 GB/s: 17,333,813,248 B / 50e9 B/s = 0.34667626496 s, + 25 us."""
    assert kv_transfer_time(MODEL, FULL, INTER_NODE) == pytest.approx(0.34670126496, rel=1e-12)
    assert requests_per_second(MODEL, FULL, INTER_NODE) == pytest.approx(1 / 0.34670126496)


def test_pure_attention_model_has_no_state_to_send():
    """All 64 layers attention: 4 x 64 KiB = 256 KiB per token, and nothing else."""
    pure = replace(MODEL, num_attention_layers=64)
    assert kv_transfer_bytes(pure, 10) == 10 * 262_144


@pytest.mark.parametrize(
    ("context", "error", "message"),
    [
        (0, ValueError, "context must be an integer from 1 to 262144, got 0"),
        (262_145, ValueError, "context must be an integer from 1 to 262144, got 262145"),
        ("4096", TypeError, "context must be an integer from 1 to 262144, got '4096' (str)"),
        (4096.0, TypeError, "context must be an integer from 1 to 262144, got 4096.0 (float)"),
    ],
)
def test_bad_context_is_refused_naming_it(context, error, message):
    """Context 0, beyond max_context, or not an integer: refused with the name and range."""
    for call in (
        lambda: kv_transfer_bytes(MODEL, context),
        lambda: kv_transfer_time(MODEL, context, INTER_NODE),
        lambda: sharded_transfer(MODEL, context, INTER_NODE, 4, 4),
    ):
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message


def test_wrong_objects_are_refused_naming_them():
    """A string for the model, a dict for the fabric: TypeError naming the parameter."""
    with pytest.raises(TypeError, match=r"^model must be a ModelSpec, got str$"):
        kv_transfer_bytes("Qwen", 4096)
    with pytest.raises(TypeError, match=r"^fabric must be a Fabric, got dict$"):
        kv_transfer_time(MODEL, 4096, {"bandwidth": 50e9})
    with pytest.raises(TypeError, match=r"^link must be a Fabric"):
        handoff(MODEL, GPU, FAST, "NIC", 4096, 4, 4)
    with pytest.raises(TypeError, match=r"^shared_port must be a bool"):
        sharded_transfer(MODEL, 4096, INTER_NODE, 4, 4, shared_port=1)


def test_prefill_time_adds_attention_to_the_lesson_step():
    """On 4 GPUs: 393,216 x 8,390,656 FLOPs / (4 x 989e12 FLOP/s) = 0.834 ms on top."""
    got = prefill_time(MODEL, GPU, FAST, 4, 4096)
    assert got.attention_s == pytest.approx(393_216 * 8_390_656 / (4 * 989e12))
    assert got.attention_s == pytest.approx(0.834e-3, rel=1e-3)
    assert got.step == prefill_step(MODEL, GPU, FAST, 4, 4096)
    assert got.total_s == got.step.total_s + got.attention_s


def test_four_gpus_each_send_their_own_quarter_over_their_own_nic():
    """P = D = 4, one NIC each: 4 GiB of KV + 146.8125 / 4 MiB of state per GPU.

    4,294,967,296 + 38,486,016 = 4,333,453,312 B; / 50e9 = 86.669 ms, + 25 us.
    """
    t = sharded_transfer(MODEL, FULL, INTER_NODE, 4, 4)
    assert t.sender_bytes == t.receiver_bytes == t.port_bytes == 4_333_453_312
    assert t.total_bytes == 16 * GIB + STATE
    assert t.time_s == pytest.approx(25e-6 + 4_333_453_312 / 50e9)


def test_one_shared_port_carries_everything():
    """Through one 25 GB/s port per node: 17,333,813,248 B / 25e9 = 0.69335 s, + 50 us."""
    t = sharded_transfer(MODEL, FULL, NODE_ETHERNET, 4, 4, shared_port=True)
    assert t.port_bytes == 17_333_813_248
    assert t.time_s == pytest.approx(50e-6 + 0.69335253)


def test_uneven_sides_the_busier_side_sets_the_time():
    """P = 1, D = 4: the one prefill GPU sends everything (17.33 GB) though each receiver
    takes a quarter; P = 4, D = 1: the one decode GPU receives everything."""
    assert sharded_transfer(MODEL, FULL, INTER_NODE, 1, 4).port_bytes == 17_333_813_248
    assert sharded_transfer(MODEL, FULL, INTER_NODE, 4, 1).port_bytes == 17_333_813_248
    assert sharded_transfer(MODEL, FULL, INTER_NODE, 4, 1).sender_bytes == 4_333_453_312


def test_tp8_decode_receives_copies_and_dcp_removes_them():
    """D = 8 > 4 KV heads: each GPU takes one head, 16 GiB / 4 = 4 GiB, + 146.8125 / 8 MiB
    (19,243,008 B): 8 x 4 GiB = two copies of the KV cache in all. DCP 2 halves the KV."""
    t8 = sharded_transfer(MODEL, FULL, INTER_NODE, 4, 8)
    assert t8.receiver_bytes == 4 * GIB + 19_243_008
    assert t8.total_bytes == 32 * GIB + STATE
    t8_dcp = sharded_transfer(MODEL, FULL, INTER_NODE, 4, 8, dcp=2)
    assert t8_dcp.receiver_bytes == 2 * GIB + 19_243_008
    assert t8_dcp.total_bytes == 16 * GIB + STATE


def test_dcp_is_bounded_by_the_copies_it_removes():
    """dcp may reach tp / kv_heads: 2 at TP 8, 1 at TP 4."""
    with pytest.raises(ValueError, match=r"^dcp must be an integer from 1 to 2, got 3$"):
        sharded_transfer(MODEL, FULL, INTER_NODE, 4, 8, dcp=3)
    with pytest.raises(ValueError, match=r"^dcp must be an integer from 1 to 1, got 2$"):
        context_parallel_sequence_bytes(MODEL, FULL, 4, 2)


def test_stream_that_keeps_up_leaves_only_the_last_piece():
    """Three layers of 1 s, pieces of 0.5 s: each piece crosses during the next layer; the
    last starts at 3 s and lands at 3.5 s (+ 0.1 s of latency)."""
    s = overlap_stream([1.0, 1.0, 1.0], [0.5, 0.5, 0.5], 0.1)
    assert s.keeps_up
    assert s.finish_s == pytest.approx(3.6)
    assert s.exposed_s == pytest.approx(0.6)
    assert s.compute_s == 3.0 and s.transfer_s == 1.5 and s.last_piece_s == 0.5


def test_stream_slower_than_the_compute_is_exposed_by_the_difference_and_more():
    """Pieces of 2 s behind layers of 1 s: starts at 1, 3, 5 s; the last lands at 7 s.
    Exposed 7 - 3 = 4 s = L x (2) - (L - 1) x 1, the transfer minus the hidden part."""
    s = overlap_stream([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
    assert not s.keeps_up
    assert s.exposed_s == pytest.approx(4.0)


def test_stream_with_one_big_piece_queues_behind_it():
    """Layers 1, 1, 1 s; pieces 0, 1.5, 0 s: the second piece (1.5 s, from t = 2) is still
    crossing when layer 3 ends at t = 3, so the port does not keep up; the last piece waits
    to t = 3.5."""
    s = overlap_stream([1.0, 1.0, 1.0], [0.0, 1.5, 0.0])
    assert not s.keeps_up
    assert s.finish_s == pytest.approx(3.5)


def test_stream_refuses_bad_pieces():
    """A negative time, a mismatched length or no layers at all are named."""
    with pytest.raises(ValueError, match=r"^transfer_s must be >= 0 s"):
        overlap_stream([1.0], [-1.0])
    with pytest.raises(ValueError, match=r"^transfer_s must have one entry per layer \(2\)"):
        overlap_stream([1.0, 1.0], [1.0])
    with pytest.raises(ValueError, match=r"^layers must be an integer"):
        overlap_stream([], [])


def test_streamed_handoff_at_the_lesson_prompt_leaves_one_attention_layer():
    """4,096 tokens, P = D = 4 over one NIC each: the last layer is attention; its piece is a
    quarter of one layer's KV, 4,096 x 4 KiB / 4 = 4 MiB = 4,194,304 B: 83.886 us at 50 GB/s,
    + 25 us of latency. The port keeps up, so that is all the stream adds."""
    h = handoff(MODEL, GPU, FAST, INTER_NODE, 4096, 4, 4)
    assert h.streamed.keeps_up
    assert h.streamed.exposed_s == pytest.approx(4_194_304 / 50e9 + 25e-6)
    # shipping after the prefill instead: 422,379,520 / 4 = 105,594,880 B per NIC
    assert h.bulk.time_s == pytest.approx(105_594_880 / 50e9 + 25e-6)
    assert h.ttft_bulk_s == pytest.approx(h.prefill.total_s + h.bulk.time_s)
    assert h.required_bandwidth == pytest.approx(105_594_880 / h.prefill.total_s)


def test_streamed_handoff_that_cannot_keep_up():
    """128 tokens through one 25 GB/s port: 128 x 64 KiB + 153,944,064 B = 162,332,672 B take
    6.49 ms, longer than the 5.87 ms prefill: exposed by at least the difference."""
    h = handoff(MODEL, GPU, FAST, NODE_ETHERNET, 128, 4, 4, shared_port=True)
    assert h.bulk.port_bytes == 128 * 65_536 + STATE == 162_332_672
    assert not h.streamed.keeps_up
    assert h.ratio > 1
    assert h.streamed.exposed_s >= h.bulk.time_s - h.prefill.total_s - 1e-12


def test_overlap_stream_by_hand():
    """Layers of 1 s; pieces of 0.5, 0.25 and 2 s; 0.25 s of latency. Layer 1 is done at 1 s,
    its piece crosses to 1.5 s; layer 2 at 2 s, its piece to 2.25 s; layer 3 at 3 s, its piece
    to 5 s; the last byte lands at 5.25 s, 2.25 s after the computation."""
    got = overlap_stream([1.0, 1.0, 1.0], [0.5, 0.25, 2.0], latency_s=0.25)
    assert (got.compute_s, got.transfer_s, got.latency_s) == (3.0, 2.75, 0.25)
    assert (got.finish_s, got.last_piece_s, got.exposed_s) == (5.25, 2.0, 2.25)
    assert got.keeps_up


def test_a_port_free_just_as_the_next_layer_ends_keeps_up():
    """Pieces exactly as long as the layers: each crosses as the next layer finishes, so the
    port is never behind (keeps up), and only the last piece, 1 s, is exposed."""
    got = overlap_stream([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert got.keeps_up and got.exposed_s == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1.0, -1.0], [0.0, 0.0]), "compute_s must be >= 0 s, got -1"),
        (([1.0], [-1.0]), "transfer_s must be >= 0 s, got -1"),
        (([1.0], [0.0], -1.0), "latency_s must be >= 0 s, got -1"),
        (([0.0] * 4097, [0.0] * 4097), "layers must be an integer from 1 to 4096, got 4097"),
    ],
)
def test_overlap_stream_refusals_name_the_argument_and_range(args, message):
    """Times of at least 0 s, in seconds; 1 to MAX_LAYERS (4,096) layers."""
    with pytest.raises(ValueError) as info:
        overlap_stream(*args)
    assert str(info.value) == message
