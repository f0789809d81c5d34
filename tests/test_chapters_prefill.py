"""Prefill against decode: messages on the alpha-beta curve and time per token."""

import pytest
from numpy.testing import assert_allclose

from lesson_lib import GB, MB, MS, US, Fabric, KiB, MiB, decode_step, prefill_step
from lesson_lib.chapters.prefill import crossover_tokens, prefill_numbers, regime_rows
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


def test_crossover_tokens():
    """4.5 MB / 10 KiB = about 439 prompt tokens on the fast fabric, ring of 2."""
    assert_allclose(crossover_tokens(MODEL, FAST, 2), 4.5e6 / 10240)
    assert crossover_tokens(MODEL, SLOW, 2) < crossover_tokens(MODEL, FAST, 2)


def test_per_token_matches_step_time():
    """Per-token decode is one decode step; per-token prefill is the prompt's total / tokens."""
    pair = per_token(MODEL, GPU, FAST, 4, PROMPT_TOKENS)
    assert pair.decode_s == decode_step(MODEL, GPU, FAST, 4).total_s
    total = prefill_step(MODEL, GPU, FAST, 4, PROMPT_TOKENS).total_s
    assert_allclose(pair.prefill_s, total / PROMPT_TOKENS)
    assert_allclose(pair.ratio, pair.decode_s / pair.prefill_s)
    assert 200 < pair.ratio < 400


def test_prefill_numbers_pinned():
    """The extra glued strings: slow crossover 3.2 MB, fast crossover in MiB, totals."""
    values = prefill_numbers()
    assert values["crossover_slow"] == "3.2 MB"
    assert (values["fast_bandwidth"], values["slow_bandwidth"]) == ("450 GB/s", "64 GB/s")
    assert values["crossover_fast_4"] == "3 MB"
    assert values["crossover_fast_mib"] == "4.29 MiB"
    assert values["crossover_tokens_fast"] == "439"
    assert values["prefill_weights_4"] == "4.03 ms"
    total = prefill_step(MODEL, GPU, FAST, 4, PROMPT_TOKENS).total_s
    assert values["prefill_total_fast_4"] == f"{total / MS:.2f} ms"
    assert all(isinstance(v, str) and v for v in values.values())


def test_chip_crossover_is_the_cards_flop_rate_over_its_hbm_bandwidth():
    """2 FLOPs and 2 bytes per bf16 parameter: 989 TFLOP/s / 3.35 TB/s = 295 tokens, any N."""
    assert prefill_numbers()["chip_crossover_tokens"] == f"{989e12 / 3.35e12:.0f}" == "295"
    for n in (1, 2, 4):
        below, above = (prefill_step(MODEL, GPU, FAST, n, t) for t in (295, 296))
        assert below.weights_s > below.flops_s and above.flops_s > above.weights_s


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


def test_regime_rows_mirror_lesson_7_3():
    """Decode: memory-bound and latency-bound; prefill: compute-bound and bandwidth-bound."""
    decode, prefill = regime_rows(MODEL, GPU, FAST, 4, PROMPT_TOKENS)
    assert decode[1].startswith("memory-bound") and decode[2].startswith("latency-bound")
    assert prefill[1].startswith("compute-bound") and prefill[2].startswith("bandwidth-bound")
    assert "17.9 ms" in prefill[2] and "1.28 ms" in prefill[2]


def test_regime_rows_follow_the_prompt():
    """A one-token 'prompt' is decode again: memory- and latency-bound."""
    (_d, one) = regime_rows(MODEL, GPU, FAST, 2, 1)
    assert one[1].startswith("memory-bound") and one[2].startswith("latency-bound")
    with pytest.raises(ValueError, match="n must"):
        regime_rows(MODEL, GPU, FAST, 1, 10)


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


def test_ridge_point_counts_as_memory_bound():
    """A card with 1e12 bytes/s and 1e12 FLOP/s: one decoded token streams 54e9 bytes and does
    2 x 27e9 FLOPs, equal times, which the table calls memory-bound."""
    from lesson_lib import Accelerator

    ridge = Accelerator("ridge", 1e12, hbm_bandwidth=1e12, peak_flops=1e12)
    decode, prefill = regime_rows(MODEL, ridge, FAST, 2, 4096)
    assert decode[1] == "memory-bound: weights 27 ms, arithmetic 27 ms"
    assert prefill[1].startswith("compute-bound")
