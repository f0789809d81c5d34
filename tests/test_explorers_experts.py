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
    """DeepSeek-V3, EP 8, fast fabric, H200-class, one sequence: 116 all-to-alls, 1.16 ms."""
    message = explorer.message_for()
    glued = chapter_numbers("experts")  # the chapter's prose rounds the same numbers the same way
    assert message.startswith(f"EP 8 + DP attention, batch 1: {glued['ep_one_ms']} per token")
    assert glued["ep_one_ms"] == "5.28 ms" and glued["tp_one_ms"] == "2.2 ms"
    assert f"weights {glued['ep_one_weights_ms']} + 116 all-to-alls" in message
    assert f"116 all-to-alls per token: latency {glued['ep_latency_ms']}" in message
    assert "98.9 GB per GPU (fits the card)" in message
    assert message.endswith(f"the other layout: {glued['tp_one_ms']} per token (the faded bar)")


def test_mixtral_tp_on_the_network_by_hand(explorer):
    """Mixtral TP 4 across the assumed network (25 us): 64 all-reduces x 25 us = 1.6 ms."""
    row = explorer.row(model="Mixtral-8x7B", parallelism="tp", n=4, fabric="network", card="h100")
    assert row["latency_ms"] == 1.6
    assert row["collectives"] == 64 and row["kind"] == "all-reduces"
    step = moe_decode_step(PRESETS["Mixtral-8x7B"], GPU, INTER_NODE, 4, parallelism="tp")
    assert row["total_ms"] == round(step.total_s * 1e3, 3)


def test_deepseek_ep_does_not_fit_the_h100(explorer):
    """98.9 GB per GPU under EP 8 is more than the 84.9 GB an H100-class card exposes."""
    assert "does not fit the card" in explorer.message_for(card="h100")


def test_states_cover_every_control(explorer):
    """One row per combination: 3 models x 2 layouts x 4 degrees x 2 fabrics x 2 cards x 4 batches."""
    assert len(explorer.rows) == 3 * 2 * 4 * 2 * 2 * 4
    assert [c.name for c in CONTROLS] == ["model", "parallelism", "n", "fabric", "card", "batch"]


def test_sampled_states_are_moe_decode_step(explorer):
    """Every twentieth state's numbers are moe_decode_step's for that state (FP8 dispatch under EP)."""
    from lesson_lib.explorers.experts import CARDS, FABRICS

    for row in explorer.rows[::20]:
        dispatch = {"dispatch_bytes": 1} if row["parallelism"] == "ep" else {}
        step = moe_decode_step(
            PRESETS[row["model"]],
            CARDS[row["card"]],
            FABRICS[row["fabric"]],
            row["n"],
            parallelism=row["parallelism"],
            batch=row["batch"],
            **dispatch,
        )
        assert row["total_ms"] == round(step.total_s * 1e3, 3)
        assert row["wire_kib"] == round(step.wire_bytes_per_token / 1024, 1)
        assert row["collectives"] == step.collectives


def test_the_layout_control_changes_the_chart_and_the_axis_stays(explorer):
    """Both layouts are drawn, the chosen one solid; the axis is fixed per model and batch.

    By hand for DeepSeek-V3 at batch 1: the longest bar offered is one H100-class
    GPU reading its ~37 billion active parameters of one byte each, 37 GB / 3.35 TB/s
    = 11.0 ms and a little more, so the axis ends at 12 ms whatever the GPUs, fabric,
    card or layout.
    """
    spec = explorer.spec()
    chart = spec["vconcat"][1]
    opacity = chart["encoding"]["opacity"]
    assert opacity["condition"]["test"] == "datum.parallelism == parallelism"
    scale = chart["encoding"]["x"]["scale"]
    assert scale["domainMin"] == 0 and "[model + '|' + batch]" in scale["domainMax"]["expr"]
    axis = _axis_ms(explorer.rows)
    assert axis[("DeepSeek-V3", 1)] == 12.0
    assert "'DeepSeek-V3|1': 12" in scale["domainMax"]["expr"]
    for row in explorer.rows:
        assert max(row["total_ms"], row["other_ms"]) <= axis[(row["model"], row["batch"])]
