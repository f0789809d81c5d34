"""The decode explorer: its states are decode_step's (moe_decode_step's for MoE), its defaults the lesson's."""

from __future__ import annotations

import json
import random

import pytest
from numpy.testing import assert_allclose

from lesson_lib.explorers.latency import (
    ALGORITHM_LABELS,
    CARDS,
    CONTROLS,
    FABRICS,
    LESSON,
    MODELS,
    _axis_max_ms,
    _context_tokens,
    decode_explorer,
)
from lesson_lib.model.memory import memory_budget
from lesson_lib.model.moe import moe_decode_step
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import GB, MS
from lesson_lib.models import PRESETS


@pytest.fixture(scope="module")
def explorer():
    return decode_explorer()


def test_lesson_numbers_at_the_lesson_settings(explorer):
    """1.28 ms of latency on 2 fast GPUs, 6.4 ms on 4 slow; 1.76x from 2 to 4."""
    two = explorer.row(**LESSON)
    four = explorer.row(**{**LESSON, "n": 4})
    slow = explorer.row(**{**LESSON, "fabric": "slow", "n": 4})
    assert two["latency_ms"] == pytest.approx(1.28)
    assert slow["latency_ms"] == pytest.approx(6.4)
    assert two["total_ms"] / four["total_ms"] == pytest.approx(1.76, abs=0.005)
    assert explorer.defaults == {**LESSON, "n": 4}
    assert LESSON["model"] == MODEL.name


def test_every_state_is_lesson_lib(explorer):
    """A sample of states (every control value appears) against lesson_lib directly."""
    rng = random.Random(7)
    rows = rng.sample(explorer.rows, 400)
    for control in CONTROLS:  # both ends of every control, at least once each
        rows += [explorer.row(**{control.name: v}) for v in (control.values[0], control.values[-1])]
    priced = 0
    for row in rows:
        model, card, fabric = PRESETS[row["model"]], CARDS[row["card"]], FABRICS[row["fabric"]]
        tokens = 0 if not row["context"] else model.max_context // row["context"]
        held = memory_budget(model, card, row["n"], 0 if model.is_moe else tokens, row["batch"])
        assert row["no_fit"] == (not held.fits)
        if row["no_fit"]:
            assert row["used_gb"] == round(held.used_bytes / GB, 2)
            assert "does not fit, nothing priced" in explorer.message.render(row)
            continue
        priced += 1
        if model.is_moe:
            step = moe_decode_step(
                model, card, fabric, row["n"], parallelism="tp", batch=row["batch"]
            )
            kv_s = 0.0
        else:
            setting = {
                "batch": row["batch"],
                "context": tokens if row["context"] else None,
                "algorithm": row["algorithm"],
            }
            step = decode_step(model, card, fabric, row["n"], **setting)
            kv_s = step.kv_read_s
        assert_allclose(row["total_ms"], step.total_s / MS, atol=5e-4)
        assert_allclose(row["compute_ms"], step.compute_s / MS, atol=5e-4)
        assert_allclose(row["latency_ms"], step.latency_s / MS, atol=5e-4)
        assert_allclose(row["bandwidth_ms"], step.bandwidth_s / MS, atol=5e-4)
        assert_allclose(row["kv_ms"], kv_s / MS, atol=5e-4)
        assert row["tokens_per_s"] == round(step.tokens_per_s)
        assert row["bound"] == step.bound
    assert priced > 100


def test_the_status_says_what_it_counts_and_agrees_with_the_prose(explorer):
    """The bars include the bytes; the chapters' ratios leave them out. Both are said.

    By hand, 4 fast GPUs: one card computes 54 GB / 3.35 TB/s = 16.119 ms; four
    take 16.119 / 4 + 128 x 10 us = 5.310 ms, 3.04x (the chapter's), and with
    128 x 2 x 3/4 x 10,240 B / 450 GB/s = 0.004 ms more, 3.03x. The ceiling is
    16.119 ms / (128 x 10 us) = 12.6x, or 16.119 / (128 x (10 us + 2 x 10,240 B
    / 450 GB/s)) = 12.54x with the bytes. On 4 slow GPUs: 1.55x and 1.54x.
    """
    lines = explorer.message_for().split("\n")
    assert lines[3] == (
        "speed-up over one such card: 3.03x with the bytes, 3.04x without (as the chapters count)"
    )
    assert lines[4] == (
        "ceiling, the speed-up no N passes: 12.54x with the bytes, 12.6x without "
        "(as the chapters count)"
    )
    slow = explorer.message_for(fabric="slow")
    assert "1.54x with the bytes, 1.55x without (as the chapters count)" in slow


def test_the_algorithm_toggle_says_why_it_does_little_on_a_flat_fabric(explorer):
    """Without per-hop latency every algorithm pays the same latency; the message says so."""
    for algorithm in ("ring", "two_shot", "one_shot"):
        text = explorer.message_for(algorithm=algorithm)
        assert "pick the 'per hop' fabric to see them differ" in text
        assert explorer.row(algorithm=algorithm)["latency_ms"] == pytest.approx(1.28)
    hops = {a: explorer.row(fabric="hops", algorithm=a)["latency_ms"] for a in ("ring", "one_shot")}
    assert hops["one_shot"] < hops["ring"]
    assert "one-shot on the per-hop fit" in explorer.message_for(
        fabric="hops", algorithm="one_shot"
    )
    # No algorithm is "the lesson's": on its fixed-latency fabrics the ring and two-shot cost the
    # same (1 latency, 2(N-1)/N payloads each), and on the per-hop fit they differ.
    assert not any("lesson" in label for label in ALGORITHM_LABELS)
    ring, two_shot = (explorer.row(algorithm=a) for a in ("ring", "two_shot"))
    assert all(ring[c] == two_shot[c] for c in ("latency_ms", "bandwidth_ms", "total_ms"))
    assert "all-reduce: ring on the per-hop fit" in explorer.message_for(fabric="hops")


def test_ceiling_only_where_the_formula_holds(explorer):
    assert explorer.row()["ceiling"].startswith("ceiling, the speed-up no N passes: 12.54x")
    assert "only for a dense model" in explorer.row(batch=4)["ceiling"]
    assert "only for a dense model" in explorer.row(algorithm="one_shot")["ceiling"]
    assert "only for a dense model" in explorer.row(model="Mixtral-8x7B")["ceiling"]
    assert "peaks, then falls" in explorer.row(fabric="hops")["ceiling"]


def test_a_model_that_does_not_fit_is_not_priced(explorer):
    """Mixtral's 93.41 GB of bf16 weights on one 84.93 GB card; DeepSeek-V3's
    671.03 GB of FP8 weights over 4 cards is 167.76 GB each: neither fits."""
    mixtral = explorer.message_for(model="Mixtral-8x7B", n=1).split("\n")
    assert mixtral[0] == "Mixtral-8x7B, N = 1, batch 1: does not fit, nothing priced;"
    assert mixtral[1] == "93.41 GB per GPU of weights against 84.93 GB on the card;"
    deepseek = explorer.message_for(model="DeepSeek-V3")
    assert "167.76 GB per GPU of weights against 84.93 GB" in deepseek
    row = explorer.row(model="DeepSeek-V3")
    assert row["total_ms"] == 0 and row["no_fit"]
    # on two cards Mixtral fits, but one card cannot hold it to compare with
    two = explorer.message_for(model="Mixtral-8x7B", n=2)
    assert "speed-up over one such card: none (one card cannot hold the model)" in two
    assert "reads only the experts the batch touches" in two


def test_a_tp_degree_engines_refuse_is_flagged(explorer):
    """The specimen's 24 query heads: 24 / 16 = 1.5 heads a GPU, so TP 16 is refused; 24 / 8 = 3
    is not. The state is still priced, and the message says it is priced as if allowed."""
    sixteen = explorer.message_for(n=16)
    assert "TP = 16 does not divide the 24 query heads" in sixteen
    assert "priced as if allowed" in sixteen and explorer.row(n=16)["total_ms"] > 0
    assert "does not divide" not in explorer.message_for(n=8)
    assert "does not divide" not in explorer.message_for(model="Llama-3.1-70B", n=16)


def test_an_moe_status_says_what_it_prices(explorer):
    """Mixtral under TP prices its all-reduces (as rings) and reads no KV cache."""
    text = explorer.message_for(model="Mixtral-8x7B", n=2, context=1)
    assert "no KV cache; all-reduces as rings" in text and "not modelled" not in text
    assert explorer.row(model="Mixtral-8x7B", n=2, context=1)["kv_ms"] == 0


def test_mixtral_under_tp_by_hand(explorer):
    """Mixtral on 2 fast H100s, one sequence: 32 layers x 2 all-reduces x 10 us = 0.64 ms."""
    row = explorer.row(model="Mixtral-8x7B", n=2)
    assert row["latency_ms"] == pytest.approx(0.64)


def test_each_model_gets_its_own_contexts():
    """1/64 of the specimen's 262,144 tokens is 4,096 (the batching chapter's);
    Llama-3.1-70B reads at most 131,072, Mixtral 32,768 (1/64: 512)."""
    assert _context_tokens(MODEL.name, 64) == 4096
    assert _context_tokens("Llama-3.1-70B", 1) == 131_072
    assert _context_tokens("Mixtral-8x7B", 64) == 512
    assert _context_tokens("Mixtral-8x7B", 0) == 0
    with pytest.raises(ValueError, match="divisor must be one of"):
        _context_tokens(MODEL.name, 3)
    assert set(MODELS) == set(PRESETS)


def test_the_time_axis_is_fixed(explorer):
    """0 to 30 ms in every state: the specimen's slowest lesson setting is one A100
    reading 54 GB at 2.039 TB/s, 26.48 ms, rounded up to 10 ms."""
    assert _axis_max_ms(explorer.rows) == 30
    chart = json.dumps(explorer.chart)
    assert chart.count('"domain": [0, 30]') == 2 and '"clamp": true' in chart


def test_message_names_the_terms(explorer):
    text = explorer.message_for(fabric="slow", n=2)
    step = decode_step(MODEL, GPU, SLOW, 2)
    assert f"{round(step.total_s / MS, 3)} ms per token" in text
    assert text.count("\n") == 5
    assert "largest term: compute" in explorer.message_for(fabric="fast")
    for row in explorer.rows:
        assert max(len(line) for line in explorer.message.render(row).split("\n")) <= 100


def test_labels_come_from_the_specs(explorer):
    labels = dict(zip(CONTROLS[1].values, CONTROLS[1].labels, strict=True))
    assert f"{FAST.latency / 1e-6:g} us" in labels["fast"]
    assert f"{SLOW.latency / 1e-6:g} us" in labels["slow"]
    assert CONTROLS[0].values == tuple(PRESETS)
    assert len(explorer.rows) == 5 * 5 * 3 * 5 * 5 * 3 * 3


def test_page_weight(explorer):
    """Under the 1.5 MB page goal with room for the rest of the chapter."""
    assert len(json.dumps(explorer.spec(), separators=(",", ":"))) < 1_100_000
