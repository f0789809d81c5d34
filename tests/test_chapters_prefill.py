"""The prefill chapter's glued numbers and its regime table."""

import pytest
from numpy.testing import assert_allclose

from lesson_lib import MS, prefill_step
from lesson_lib.chapters.prefill import prefill_numbers, regime_rows
from lesson_lib.model.collectives import crossover_tokens
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW


def test_crossover_tokens():
    """4.5 MB / 10 KiB = about 439 prompt tokens on the fast fabric, ring of 2."""
    assert_allclose(crossover_tokens(MODEL, FAST, 2), 4.5e6 / 10240)
    assert crossover_tokens(MODEL, SLOW, 2) < crossover_tokens(MODEL, FAST, 2)


def test_prefill_numbers_pinned():
    """The extra glued strings: slow crossover 3.2 MB, fast crossover in MiB, totals."""
    values = prefill_numbers()
    assert values["crossover_slow"] == "3.2 MB"
    assert (values["fast_bandwidth"], values["slow_bandwidth"]) == ("450 GB/s", "64 GB/s")
    assert values["crossover_fast_4"] == "3 MB"
    assert values["crossover_fast_mib"] == "4.29 MiB"
    assert values["crossover_tokens_fast"] == "439"
    total = prefill_step(MODEL, GPU, FAST, 4, PROMPT_TOKENS).total_s
    assert values["prefill_total_fast_4"] == f"{total / MS:.2f} ms"
    assert all(isinstance(v, str) and v for v in values.values())


def test_chip_crossover_is_the_cards_flop_rate_over_its_hbm_bandwidth():
    """2 FLOPs and 2 bytes per bf16 parameter: 989 TFLOP/s / 3.35 TB/s = 295 tokens, any N."""
    assert prefill_numbers()["chip_crossover_tokens"] == f"{989e12 / 3.35e12:.0f}" == "295"
    for n in (1, 2, 4):
        below, above = (prefill_step(MODEL, GPU, FAST, n, t) for t in (295, 296))
        assert below.weights_s > below.flops_s and above.flops_s > above.weights_s


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


def test_ridge_point_counts_as_memory_bound():
    """A card with 1e12 bytes/s and 1e12 FLOP/s: one decoded token streams 54e9 bytes and does
    2 x 27e9 FLOPs, equal times, which the table calls memory-bound."""
    from lesson_lib import Accelerator

    ridge = Accelerator("ridge", 1e12, hbm_bandwidth=1e12, peak_flops=1e12)
    decode, prefill = regime_rows(MODEL, ridge, FAST, 2, 4096)
    assert decode[1] == "memory-bound: weights 27 ms, arithmetic 27 ms"
    assert prefill[1].startswith("compute-bound")


def test_embedding_and_head_share_by_hand():
    """Embedding and untied head, 248,320 x 5,120 each: 2 x 1,271,398,400 / 27e9 = 9.4 %."""
    from lesson_lib.chapters.prefill import _embedding_and_head_numbers

    assert (
        _embedding_and_head_numbers()["embedding_and_head_share"]
        == (f"{100 * 2 * 248_320 * 5_120 / 27e9:.1f}%")
        == "9.4%"
    )
