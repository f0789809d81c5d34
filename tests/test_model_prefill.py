"""Tests of lesson_lib.model.prefill: messages on the alpha-beta curve, decode and prefill per token."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from lesson_lib import GB, MB, US, Fabric, KiB, MiB, decode_step, prefill_step
from lesson_lib.model.prefill import per_token, place_on_curve, prefill_message_bytes
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW


def test_prefill_message_is_40_mib():
    """4,096 hidden vectors of 10 KiB each."""
    assert prefill_message_bytes(MODEL, PROMPT_TOKENS) == 40 * MiB
    assert prefill_message_bytes(MODEL, 1) == 10 * KiB


def test_decode_message_is_latency_bound_prefill_bandwidth_bound():
    """10 KiB sits far below the 4.5 MB crossover, 40 MiB far above it."""
    decode = place_on_curve(MODEL.hidden_vector_bytes, 2, FAST)
    prefill = place_on_curve(40 * MiB, 2, FAST)
    assert_allclose(decode.crossover_bytes, 4.5 * MB)
    assert decode.bound == "latency" and decode.ratio_to_crossover < 0.01
    assert prefill.bound == "bandwidth" and prefill.ratio_to_crossover > 9
    assert_allclose(prefill.total_s, 10 * US + 40 * MiB / (450 * GB))


def test_at_the_crossover_the_terms_are_equal():
    """At m = alpha x B the latency and bandwidth terms cost the same, for any ring size."""
    for n in (2, 4, 8):
        for fabric in (FAST, SLOW):
            point = place_on_curve(place_on_curve(1.0, n, fabric).crossover_bytes, n, fabric)
            assert_allclose(point.latency_s, point.bandwidth_s)


def test_per_token_matches_step_time():
    """Per-token decode is one decode step; per-token prefill is the prompt's total / tokens."""
    pair = per_token(MODEL, GPU, FAST, 4, PROMPT_TOKENS)
    assert pair.decode_s == decode_step(MODEL, GPU, FAST, 4).total_s
    total = prefill_step(MODEL, GPU, FAST, 4, PROMPT_TOKENS).total_s
    assert_allclose(pair.prefill_s, total / PROMPT_TOKENS)
    assert_allclose(pair.ratio, pair.decode_s / pair.prefill_s)
    assert 200 < pair.ratio < 400


@pytest.mark.parametrize(
    ("kwargs", "name", "error"),
    [
        ({"payload_bytes": 0.0}, "payload_bytes", ValueError),
        ({"payload_bytes": -1.0}, "payload_bytes", ValueError),
        ({"n": 1}, "n", ValueError),
        ({"n": 2.5}, "n", TypeError),
        ({"fabric": "fast"}, "fabric", TypeError),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name, error):
    """Each bad argument raises with its own name in the message."""
    args = {"payload_bytes": 1.0, "n": 2, "fabric": FAST} | kwargs
    with pytest.raises(error, match=name):
        place_on_curve(**args)


def test_bad_prompt_length_names_the_parameter():
    """Prompts of 0 tokens or longer than the context are refused by name."""
    for tokens in (0, MODEL.max_context + 1):
        with pytest.raises(ValueError, match="prompt_tokens"):
            prefill_message_bytes(MODEL, tokens)


def test_custom_fabric_moves_the_crossover():
    """A 10x slower wire (same latency) moves the crossover 10x down."""
    slow_wire = Fabric("slow wire", latency=FAST.latency, bandwidth=FAST.bandwidth / 10)
    assert_allclose(
        place_on_curve(1.0, 2, slow_wire).crossover_bytes,
        place_on_curve(1.0, 2, FAST).crossover_bytes / 10,
    )


def test_zero_latency_fabric_is_always_bandwidth_bound():
    """Without latency the crossover is 0 bytes and the ratio is infinite, not a crash."""
    point = place_on_curve(10 * KiB, 2, Fabric("ideal", latency=0.0, bandwidth=450 * GB))
    assert point.crossover_bytes == 0
    assert point.ratio_to_crossover == float("inf")
    assert point.bound == "bandwidth"


def test_point_keeps_its_ring_and_fabric():
    """The point records what it was placed with."""
    point = place_on_curve(1.0, 4, SLOW)
    assert point.n == 4 and point.fabric is SLOW


def test_bad_rank_counts_and_fabric_by_hand():
    """0 ranks and a string fabric: the messages, written out."""
    with pytest.raises(ValueError) as info:
        place_on_curve(1.0, 0, FAST)
    assert str(info.value) == "n must be an integer from 2 to 4096, got 0"
    with pytest.raises(TypeError) as info:
        place_on_curve(1.0, 2, "fast")
    assert str(info.value) == "fabric must be a Fabric, got str"
