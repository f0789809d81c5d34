"""The sizing explorer: its states are memory_budget's, its defaults the chapter's first bar."""

from __future__ import annotations

import json
import random

import pytest

from lesson_lib.explorers.sizing import (
    AXIS_MAX_GB,
    BIG_CARD_BYTES,
    CARDS,
    CONTEXT_DIVISORS,
    CONTROLS,
    LESSON_CARD,
    MODELS,
    SEQUENCE_VALUES,
    TP_VALUES,
    _context_tokens,
    sizing_explorer,
)
from lesson_lib.model.memory import kv_share, max_sequences, memory_budget
from lesson_lib.model.sizing import fits_by_degree
from lesson_lib.model.specimen import GPU, GPU_LABEL, MODEL
from lesson_lib.model.units import GB
from lesson_lib.models import PRESETS


@pytest.fixture(scope="module")
def explorer():
    return sizing_explorer()


def test_defaults_are_one_full_sequence_on_the_lesson_card(explorer):
    """84.93 GB (79.1 GiB) - 54 (weights) - 17.18 (KV) - 0.15 (state) = 13.6 GB free."""
    assert explorer.defaults == {
        "model": MODEL.name,
        "context": 1,
        "sequences": 1,
        "n": 1,
        "card": LESSON_CARD,
    }
    assert CARDS[LESSON_CARD] is GPU
    lines = explorer.message_for().split("\n")
    assert lines[0] == f"{MODEL.name}: 262,144 tokens per sequence (its longest)"
    assert lines[1] == "Fits: 13.6 GB free per GPU."
    assert lines[2] == (
        "Per GPU: 54 GB weights + 17.18 GB KV cache + 0.15 GB DeltaNet state = 71.33 GB of 84.93 GB"
    )
    assert lines[3].startswith("Sequences of this length that fit: 1,")


@pytest.mark.parametrize(("n", "most", "weights"), [(1, 1, 54), (2, 6, 27), (4, 16, 13.5)])
def test_the_chapter_counts_fit_and_one_more_does_not(explorer, n, most, weights):
    """1, 6 and 16 full-length sequences at TP = 1, 2, 4 (the chapter's figure); one more fails."""
    fits = explorer.row(n=n, sequences=most)
    assert fits["fit"] == "Fits" and fits["most"] == most and fits["weights_gb"] == weights
    over = explorer.row(n=n, sequences=most + 1)
    assert over["fit"] == "Does not fit" and over["margin_word"] == "short"
    assert over["margin_gb"] > 0


def test_every_state_is_memory_budget(explorer):
    """A sample of states (both ends of every control included) against memory_budget."""
    rng = random.Random(11)
    rows = rng.sample(explorer.rows, 300)
    for control in CONTROLS:
        rows += [explorer.row(**{control.name: v}) for v in (control.values[0], control.values[-1])]
    for row in rows:
        accel, model = CARDS[row["card"]], PRESETS[row["model"]]
        context = model.max_context // row["context"]
        sequences, n = row["sequences"], row["n"]
        budget = memory_budget(model, accel, n, context, sequences)
        assert row["weights_gb"] == round(budget.weights_bytes / GB, 2)
        assert row["kv_gb"] == round(budget.kv_bytes / GB, 2)
        assert row["state_gb"] == round(budget.state_bytes / GB, 2)
        assert row["used_gb"] == round(budget.used_bytes / GB, 2)
        assert row["card"] == round(budget.capacity_bytes / GB, 2)
        assert row["fit"] == ("Fits" if budget.fits else "Does not fit")
        margin = budget.free_bytes if budget.fits else budget.shortfall_bytes
        assert row["margin_gb"] == round(margin / GB, 2)
        assert row["most"] == max_sequences(model, accel, n, context)
        one = memory_budget(model, accel, n, context, 1)
        empty = memory_budget(model, accel, n, context, 0)
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
    model, context, _, _, card = CONTROLS
    assert model.values == tuple(PRESETS) and model.default == MODEL.name
    assert context.values[0] == 1 and context.default == 1 and context.label_of(1) == "full"
    assert "(32,768 tokens for the specimen)" in context.label_of(8)
    # short enough for a phone's select (390 px shows about 40 characters): 84.93 GB = 79.1 GiB
    assert card.label_of(LESSON_CARD) == f"84.93 GB (lesson, sold as {GPU_LABEL})"
    assert card.label_of(round(BIG_CARD_BYTES / GB, 2)) == "150.32 GB (sold as 141 GB)"
    assert max(len(label) for label in card.labels) <= 32
    assert round(BIG_CARD_BYTES / GB, 2) in CARDS


def test_message_lines_fit_the_chart(explorer):
    """Four lines in every state, none wider than the chart holds, never a missing value."""
    for row in explorer.rows:
        lines = explorer.message.render(row).split("\n")
        assert len(lines) == 4
        # 101 characters at 13 px is about 620 px, the chart and its padding
        assert max(len(line) for line in lines) <= 101, lines
        assert "None" not in lines and all(row[f] != "" for f in explorer.message.fields)


def test_spec_is_small(explorer):
    shape = (len(MODELS), len(CONTEXT_DIVISORS), len(SEQUENCE_VALUES), len(TP_VALUES), len(CARDS))
    assert shape == (5, 4, 14, 4, 5)
    assert len(explorer.rows) == 5 * 4 * 14 * 4 * 5
    assert len(json.dumps(explorer.spec())) < 350_000


def test_each_model_gets_its_own_contexts_never_longer_than_it_reads():
    """Shares of each model's own longest context, by hand from the configs.

    Llama-3.1-70B reads 131,072 tokens (half the specimen's 262,144), Mixtral
    32,768 (1/32 of it is 1,024), DeepSeek-V3 163,840 (1/8 is 20,480).
    """
    assert _context_tokens("Llama-3.1-70B", 1) == 131_072
    assert _context_tokens("Mixtral-8x7B", 32) == 1_024
    assert _context_tokens("DeepSeek-V3", 8) == 20_480
    assert _context_tokens(MODEL.name, 2) == 131_072
    for name, model in PRESETS.items():
        assert _context_tokens(name, CONTEXT_DIVISORS[0]) == model.max_context
    with pytest.raises(ValueError, match="divisor must be one of"):
        _context_tokens("Mixtral-8x7B", 3)
    with pytest.raises(ValueError, match="model must be one of"):
        _context_tokens("GPT-2", 1)


def test_llama_at_tp4_by_hand(explorer):
    """Llama-3.1-70B, 2 full sequences, TP 4, the specimen's card.

    Weights 141.11 GB / 4 = 35.28 GB. KV per token 2 x 80 layers x 8 heads x
    128 x 2 B = 327,680 B; x 131,072 tokens = 42.95 GB a sequence, 1/4 of it
    per GPU (8 KV heads over 4) = 10.74 GB, twice = 21.47 GB. Used 56.75 GB of
    84.93 GB: 28.18 GB free; (84.93 - 35.28) / 10.74 = 4.6, so 4 fit.
    """
    lines = explorer.message_for(model="Llama-3.1-70B", n=4, sequences=2).split("\n")
    assert lines[0] == "Llama-3.1-70B: 131,072 tokens per sequence (its longest)"
    assert lines[1] == "Fits: 28.18 GB free per GPU."
    assert lines[2] == (
        "Per GPU: 35.28 GB weights + 21.47 GB KV cache + 0 GB state (no DeltaNet)"
        " = 56.75 GB of 84.93 GB"
    )
    assert lines[3] == "Sequences of this length that fit: 4, each 10.74 GB per GPU"


def test_a_model_too_big_for_the_cards_does_not_fit(explorer):
    """DeepSeek-V3's 671.0264 GB of FP8 weights on one 84.9347 GB card: 586.09 GB short."""
    text = explorer.message_for(model="DeepSeek-V3", sequences=0)
    assert (
        "Does not fit: 586.09 GB short per GPU; the weights alone are larger than the card." in text
    )
    assert "fit: 0," in text
    mla = explorer.message_for(model="DeepSeek-V3", n=8, card=max(CARDS))
    assert "one attention latent per token, copied to all 8 GPUs" in mla


def test_the_memory_axis_is_fixed(explorer):
    """One domain for every state, 0 to 200 GB (the 192 GB card rounded up to 50 GB)."""
    assert AXIS_MAX_GB == 200
    spec = json.dumps(explorer.chart)
    assert spec.count('"domain": [0, 200]') >= 3 and '"clamp": true' in spec
