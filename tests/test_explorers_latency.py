"""The decode explorer: its states are decode_step's, its defaults the lesson's."""

from __future__ import annotations

import random

import pytest
from numpy.testing import assert_allclose

from lesson_lib.explorers.latency import (
    CARDS,
    CONTROLS,
    FABRICS,
    LESSON,
    decode_explorer,
)
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import MS


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


def test_every_state_is_decode_step(explorer):
    """A sample of states (every control value appears) against decode_step directly."""
    rng = random.Random(7)
    rows = rng.sample(explorer.rows, 150)
    for control in CONTROLS:  # both ends of every control, at least once each
        rows += [explorer.row(**{control.name: v}) for v in (control.values[0], control.values[-1])]
    for row in rows:
        setting = {
            "batch": row["batch"],
            "context": row["context"] or None,
            "algorithm": row["algorithm"],
        }
        card, fabric = CARDS[row["card"]], FABRICS[row["fabric"]]
        step = decode_step(MODEL, card, fabric, row["n"], **setting)
        one = decode_step(MODEL, card, fabric, 1, **setting)
        assert_allclose(row["total_ms"], step.total_s / MS, atol=5e-4)
        assert_allclose(row["compute_ms"], step.compute_s / MS, atol=5e-4)
        assert_allclose(row["latency_ms"], step.latency_s / MS, atol=5e-4)
        assert_allclose(row["bandwidth_ms"], step.bandwidth_s / MS, atol=5e-4)
        assert_allclose(row["kv_ms"], step.kv_read_s / MS, atol=5e-4)
        assert row["tokens_per_s"] == round(step.tokens_per_s)
        assert row["bound"] == step.bound
        assert_allclose(row["speedup"], one.total_s / step.total_s, atol=5e-3)


def test_ceiling_only_where_the_formula_holds(explorer):
    assert explorer.row()["ceiling"].endswith("x")
    assert explorer.row(batch=4)["ceiling"] == "n/a"
    assert explorer.row(algorithm="one_shot")["ceiling"] == "n/a"
    assert "peaks" in explorer.row(fabric="hops")["ceiling"]


def test_message_names_the_terms(explorer):
    text = explorer.message_for(fabric="slow", n=2)
    step = decode_step(MODEL, GPU, SLOW, 2)
    assert f"{round(step.total_s / MS, 3)} ms per token" in text
    assert text.count("\n") == 3
    assert "largest term: compute" in explorer.message_for(fabric="fast")


def test_labels_come_from_the_specs():
    labels = dict(zip(CONTROLS[0].values, CONTROLS[0].labels, strict=True))
    assert f"{FAST.latency / 1e-6:g} us" in labels["fast"]
    assert f"{SLOW.latency / 1e-6:g} us" in labels["slow"]
    assert len(decode_explorer().rows) == 5 * 3 * 5 * 5 * 4 * 3
