"""The experts explorer: messages at chosen states against moe_decode_step, worked by hand."""

from __future__ import annotations

import pytest

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.explorers.experts import CONTROLS, _axis_ms, experts_explorer
from lesson_lib.model.moe import moe_decode_step
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import GPU, INTER_NODE


@pytest.fixture(scope="module")
def explorer():
    return experts_explorer()


def test_the_default_is_the_chapter_example(explorer):
    """DeepSeek-V3, EP 8, fast fabric, H200-class, one sequence of 32,768 tokens.

    Weights 4.1 ms, then attention over the sequence's latent: 61 layers x 32,768 pairs x
    278,528 FLOPs / 989e12 = 0.563 ms, more than reading its 2.30 GB at 4.8 TB/s (0.48 ms):
    4.66 ms; 116 all-to-alls 1.16 ms and 0.02 ms of bytes: 5.84 ms.
    """
    message = explorer.message_for()
    glued = chapter_numbers("experts")  # the chapter's prose rounds the same numbers the same way
    assert message.startswith(f"EP 8 + DP attention, batch 1: {glued['ep_one_ms']} per token")
    assert glued["ep_one_ms"] == "5.84 ms" and glued["tp_one_ms"] == "2.68 ms"
    assert "weights and cache 4.66 ms + 116 all-to-alls" in message
    assert f"116 all-to-alls per token: latency {glued['ep_latency_ms']}" in message
    assert "98.9 GB per GPU (fits the cards)" in message
    assert message.endswith(f"the other layout: {glued['tp_one_ms']} per token (the grey bar)")
    # the bytes in the chapter's unit: 8.33 MiB, not 8,526 KiB
    assert f"\n{glued['ep_token_mib']} on the wire per decoded token" in message
    assert glued["ep_token_mib"] == "8.33 MiB"


def test_mixtral_tp_on_the_network_by_hand(explorer):
    """Mixtral TP 4 across the assumed network (25 us): 64 all-reduces x 25 us = 1.6 ms."""
    row = explorer.row(model="Mixtral-8x7B", parallelism="tp", n=4, fabric="network", card="h100")
    assert row["latency_ms"] == 1.6
    assert row["collectives"] == 64 and row["kind"] == "all-reduces"
    step = moe_decode_step(
        PRESETS["Mixtral-8x7B"], GPU, INTER_NODE, 4, parallelism="tp", context=32_768
    )
    assert row["total_ms"] == round(step.total_s * 1e3, 3)


def test_a_layout_that_does_not_fit_is_not_priced(explorer):
    """98.9 GB of DeepSeek-V3's weights per GPU under EP 8 exceed the 84.9 GB an H100-class card
    exposes; Qwen3-235B at TP 1 holds 470 GB on one card: neither draws a bar or a price."""
    message = explorer.message_for(card="h100")
    assert "not priced" in message and "98.9 GB per GPU" in message
    assert "(0 sequences of this length fit)" in message
    row = explorer.row(model="Qwen3-235B-A22B", parallelism="tp", n=1)
    assert row["unpriced"] and row["total_ms"] == row["compute_ms"] == 0.0
    assert "470.2 GB per GPU" in explorer.message_for(
        model="Qwen3-235B-A22B", parallelism="tp", n=1
    )
    assert "all-reduces per token" not in explorer.message_for(model="Qwen3-235B-A22B", n=1)


def test_the_replicated_cache_limits_tp_at_long_context(explorer):
    """TP 8 copies DeepSeek-V3's one latent to every GPU: 28 sequences of 32,768 tokens fit
    (28 x 2.30 GB = 64.5 GB beside 83.9 GB of weights on a 150 GB card), so 256 do not,
    while EP 8 keeps each sequence on one GPU and holds 176."""
    message = explorer.message_for(parallelism="tp", batch=256)
    assert "not priced" in message and "(28 sequences of this length fit)" in message
    assert not explorer.row(parallelism="ep", batch=64)["unpriced"]


def test_states_cover_every_control(explorer):
    """One row per combination: 3 models x 2 layouts x 4 degrees x 2 fabrics x 2 cards x 4 batches
    x 2 contexts."""
    assert len(explorer.rows) == 3 * 2 * 4 * 2 * 2 * 4 * 2
    assert [c.name for c in CONTROLS] == [
        "model", "parallelism", "n", "fabric", "card", "batch", "context"
    ]  # fmt: skip


def test_sampled_states_are_moe_decode_step(explorer):
    """Every twentieth priced state's numbers are moe_decode_step's (FP8 dispatch under EP)."""
    from lesson_lib.explorers.experts import CARDS, FABRICS

    priced = [row for row in explorer.rows if not row["unpriced"]]
    assert len(priced) > 100
    for row in priced[::20]:
        dispatch = {"dispatch_bytes": 1} if row["parallelism"] == "ep" else {}
        step = moe_decode_step(
            PRESETS[row["model"]],
            CARDS[row["card"]],
            FABRICS[row["fabric"]],
            row["n"],
            parallelism=row["parallelism"],
            batch=row["batch"],
            context=row["context"],
            **dispatch,
        )
        assert row["total_ms"] == round(step.total_s * 1e3, 3)
        assert row["wire_kib"] == round(step.wire_bytes_per_token / 1024, 1)
        assert row["collectives"] == step.collectives


def test_the_layout_control_changes_the_chart_and_the_axis_stays(explorer):
    """The chosen layout is drawn by its terms, the other as one grey bar of its total, in the
    legend; the axis is fixed per model and batch.

    By hand for DeepSeek-V3 at batch 1: only EP 8 and TP 8 on H200-class cards fit, and the
    longest of those bars is EP 8 across the network at 32,768 tokens: 4.66 ms of weights and
    attention (as at the defaults) + 116 all-to-alls x 25 us = 2.9 ms + 0.18 ms of bytes =
    7.74 ms, so the axis ends at 8 ms whatever the GPUs, fabric, card, layout or context.
    """
    spec = explorer.spec()
    chart = spec["vconcat"][1]
    assert "opacity" not in chart["encoding"]
    color = chart["encoding"]["color"]["scale"]
    assert color["domain"][-1] == "the other layout, its total"
    assert color["range"][-1] not in color["range"][:-1]  # a grey no term of the bar uses
    assert {"filter": "(datum.parallelism == parallelism) == (datum._term != 'total_ms')"} in (
        chart["transform"]
    )
    scale = chart["encoding"]["x"]["scale"]
    assert scale["domainMin"] == 0 and "[model + '|' + batch]" in scale["domainMax"]["expr"]
    axis = _axis_ms(explorer.rows)
    assert axis[("DeepSeek-V3", 1)] == 8.0
    assert "'DeepSeek-V3|1': 8" in scale["domainMax"]["expr"]
    for row in explorer.rows:
        assert max(row["total_ms"], row["other_ms"]) <= axis[(row["model"], row["batch"])]
