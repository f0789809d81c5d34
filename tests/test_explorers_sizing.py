"""The sizing explorer: its states are memory_budget's, its defaults the chapter's first bar."""

from __future__ import annotations

import json
import random

import pytest

from lesson_lib.chapters.sizing import fits_by_degree
from lesson_lib.explorers.sizing import (
    BIG_CARD_BYTES,
    CARDS,
    CONTEXT_VALUES,
    CONTROLS,
    LESSON_CARD,
    SEQUENCE_VALUES,
    TP_VALUES,
    sizing_explorer,
)
from lesson_lib.model.memory import kv_share, max_sequences, memory_budget
from lesson_lib.model.specimen import GPU, GPU_LABEL, MODEL
from lesson_lib.model.units import GB, format_bytes


@pytest.fixture(scope="module")
def explorer():
    return sizing_explorer()


def test_defaults_are_one_full_sequence_on_the_lesson_card(explorer):
    """84.93 GB (79.1 GiB) - 54 (weights) - 17.18 (KV) - 0.15 (state) = 13.6 GB free."""
    assert explorer.defaults == {
        "context": MODEL.max_context,
        "sequences": 1,
        "n": 1,
        "card": LESSON_CARD,
    }
    assert CARDS[LESSON_CARD] is GPU
    lines = explorer.message_for().split("\n")
    assert lines[0] == "Fits: 13.6 GB free per GPU."
    assert lines[1] == (
        "Per GPU: 54 GB weights + 17.18 GB KV cache + 0.15 GB DeltaNet state = 71.33 GB of 84.93 GB"
    )
    assert lines[2].startswith("Sequences of this length that fit: 1,")


@pytest.mark.parametrize(("n", "most", "weights"), [(1, 1, 54), (2, 6, 27), (4, 16, 13.5)])
def test_the_chapter_counts_fit_and_one_more_does_not(explorer, n, most, weights):
    """1, 6 and 16 full-length sequences at TP = 1, 2, 4 (the chapter's figure); one more fails."""
    fits = explorer.row(n=n, sequences=most)
    assert fits["fit"] == "Fits" and fits["most"] == most and fits["weights_gb"] == weights
    over = explorer.row(n=n, sequences=most + 1)
    assert over["fit"] == "Does not fit" and over["margin_word"] == "short"
    assert over["over_gb"] > 0 and over["free_gb"] == 0


def test_every_state_is_memory_budget(explorer):
    """A sample of states (both ends of every control included) against memory_budget."""
    rng = random.Random(11)
    rows = rng.sample(explorer.rows, 300)
    for control in CONTROLS:
        rows += [explorer.row(**{control.name: v}) for v in (control.values[0], control.values[-1])]
    for row in rows:
        accel = CARDS[row["card"]]
        context, sequences, n = row["context"], row["sequences"], row["n"]
        budget = memory_budget(MODEL, accel, n, context, sequences)
        assert row["weights_gb"] == round(budget.weights_bytes / GB, 2)
        assert row["kv_gb"] == round(budget.kv_bytes / GB, 2)
        assert row["state_gb"] == round(budget.state_bytes / GB, 2)
        assert row["used_gb"] == round(budget.used_bytes / GB, 2)
        assert row["free_gb"] == round(max(budget.free_bytes, 0) / GB, 2)
        assert row["over_gb"] == round(budget.shortfall_bytes / GB, 2)
        assert row["card"] == round(budget.capacity_bytes / GB, 2)
        assert row["fit"] == ("Fits" if budget.fits else "Does not fit")
        margin = budget.free_bytes if budget.fits else budget.shortfall_bytes
        assert row["margin_gb"] == round(margin / GB, 2)
        assert row["most"] == max_sequences(MODEL, accel, n, context)
        one = memory_budget(MODEL, accel, n, context, 1)
        empty = memory_budget(MODEL, accel, n, context, 0)
        assert row["per_sequence_gb"] == round((one.used_bytes - empty.used_bytes) / GB, 2)


def test_the_reason_is_given_where_it_matters(explorer):
    """Weights larger than the card, or more GPUs than KV heads, are said in words."""
    small = min(CARDS)
    assert "weights alone are larger than the card" in explorer.message_for(card=small)
    assert "weights alone" not in explorer.message_for(card=small, n=4)
    for n in TP_VALUES:
        text = explorer.message_for(n=n)
        assert ("KV heads" in text) == (kv_share(MODEL, n) * n > 1), n
    assert f"8 GPUs > {MODEL.num_kv_heads} KV heads" in explorer.message_for(n=8)


def test_values_and_labels_come_from_lesson_lib():
    """The sequences include the chapter's counts and one more; labels come from the specs."""
    for fit in fits_by_degree(degrees=TP_VALUES):
        assert {fit.sequences, fit.sequences + 1} <= set(SEQUENCE_VALUES)
    context, _, _, card = CONTROLS
    assert context.values[-1] == MODEL.max_context and context.default == MODEL.max_context
    assert context.label_of(MODEL.max_context).startswith(f"{MODEL.max_context:,}")
    lesson = card.label_of(LESSON_CARD)
    assert GPU_LABEL in lesson and format_bytes(GPU.memory_bytes, "GiB", decimals=1) in lesson
    assert round(BIG_CARD_BYTES / GB, 2) in CARDS


def test_message_lines_fit_the_chart(explorer):
    """Three lines in every state, none wider than the chart holds, never a missing value."""
    for row in explorer.rows:
        lines = explorer.message.render(row).split("\n")
        assert len(lines) == 3
        assert max(len(line) for line in lines) <= 100, lines
        assert "None" not in lines and all(row[f] != "" for f in explorer.message.fields)


def test_spec_is_small(explorer):
    assert len(explorer.rows) == len(CONTEXT_VALUES) * len(SEQUENCE_VALUES) * len(TP_VALUES) * len(
        CARDS
    )
    assert len(json.dumps(explorer.spec())) < 350_000
