"""The prefill explorer: its states are place_on_curve's and per_token's, its defaults the lesson's."""

from __future__ import annotations

import json
import random
import re

import pytest

from lesson_lib.chapters.prefill import prefill_numbers
from lesson_lib.explorers.prefill import (
    CONTROLS,
    CROSSOVER_PROMPT,
    FABRIC_LABELS,
    FABRICS,
    N_VALUES,
    PROMPT_VALUES,
    _curves,
    prefill_explorer,
)
from lesson_lib.model.collectives import allreduce_time, crossover_tokens
from lesson_lib.model.prefill import per_token, place_on_curve, prefill_message_bytes
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW
from lesson_lib.model.units import US, format_bytes, format_rate, format_seconds


@pytest.fixture(scope="module")
def explorer():
    return prefill_explorer()


def test_defaults_are_the_lesson_prompt_on_four_fast_gpus(explorer):
    """4,096 tokens x 5,120 x 2 B = 40 MiB, bandwidth-bound; decode's 10 KiB latency-bound."""
    assert explorer.defaults == {"prompt": PROMPT_TOKENS, "n": 4, "fabric": "fast"}
    glued = prefill_numbers()  # what the chapter prints at the same setting
    lines = explorer.message_for().split("\n")
    # the crossover of four GPUs, 3 MB, not the chapter's two-GPU 4.5 MB: the message names which
    assert lines[0] == (
        f"4,096 vectors = 40 MiB per message, 14x over the 4-GPU crossover "
        f"({glued['crossover_fast_4']}): bandwidth-bound"
    )
    assert "(decode's 10 KiB: latency-bound)" in lines[1]
    assert lines[2] == (
        f"Per token: decode {glued['decode_per_token_fast_4']}, prefill "
        f"{glued['prefill_per_token_fast_4']} ({glued['prefill_cheaper_fast_4']} cheaper). "
        f"Prompt: {glued['prefill_total_fast_4']}, "
        f"{format_seconds(per_token(MODEL, GPU, FAST, 4, PROMPT_TOKENS).prefill.bandwidth_s)}"
        " on the wire"
    )


def test_slow_ring_of_four_and_short_prompts(explorer):
    """50 us x 64 GB/s / 1.5 = 2.13 MB on the slow ring of 4; a 256-token prompt is latency-bound."""
    assert explorer.row(fabric="slow")["crossover"] == "2.13 MB"
    short = explorer.row(prompt=256)
    assert short["bound"] == "latency" and short["where"].endswith("below")
    at = explorer.row(prompt=CROSSOVER_PROMPT, n=2)
    assert at["where"] == "at" and at["bound_text"] == "the two terms equal"
    assert "at the 2-GPU crossover (4.5 MB)" in explorer.message_for(prompt=CROSSOVER_PROMPT, n=2)
    # one vector is decode's own message: no cheaper, never "1x cheaper"
    assert "(no cheaper)" in explorer.message_for(prompt=1)
    alone = re.compile(r"(?<![\d.])1(\.0)?x")  # "1x", not "122.1x"
    assert not any(alone.search(explorer.message.render(r)) for r in explorer.rows)


def test_every_state_is_lesson_libs(explorer):
    """A sample of states (both ends of every control included) against lesson_lib directly."""
    rng = random.Random(5)
    rows = rng.sample(explorer.rows, 80)
    for control in CONTROLS:
        rows += [explorer.row(**{control.name: v}) for v in (control.values[0], control.values[-1])]
    for row in rows:
        fabric, n, prompt = FABRICS[row["fabric"]], row["n"], row["prompt"]
        payload = prefill_message_bytes(MODEL, prompt)
        point = place_on_curve(payload, n, fabric)
        decode = place_on_curve(MODEL.hidden_vector_bytes, n, fabric)
        pair = per_token(MODEL, GPU, fabric, n, prompt)
        assert row["payload_b"] == payload
        assert row["payload"] == format_bytes(payload, system="binary")
        assert row["bound"] == point.bound and row["decode_bound"] == decode.bound
        assert row["crossover_b"] == round(point.crossover_bytes)
        assert row["crossover_us"] == pytest.approx(2 * point.latency_s / US, rel=1e-3)
        assert row["prefill_us"] == pytest.approx(point.total_s / US, rel=1e-3)
        assert row["decode_us"] == pytest.approx(decode.total_s / US, rel=1e-3)
        assert row["latency"] == format_seconds(point.latency_s)
        assert row["bytes"] == format_seconds(point.bandwidth_s)
        assert row["decode_s"] == format_seconds(pair.decode_s)
        assert row["prefill_s"] == format_seconds(pair.prefill_s, decimals=1)
        assert row["total"] == format_seconds(pair.prefill.total_s)
        assert row["wire"] == format_seconds(pair.prefill.bandwidth_s)
        # each bar is one token's time: its terms add up to lesson_lib's time per token
        for step_name, per_token_s in (("decode", pair.decode_s), ("prefill", pair.prefill_s)):
            total = sum(row[f"{step_name}_{t}_ms"] for t in ("compute", "latency", "bandwidth"))
            assert total == pytest.approx(per_token_s * 1e3, rel=1e-3)


def test_curves_are_allreduce_time():
    """Every point of every curve and asymptote is lesson_lib's, for every fabric and degree."""
    curves = _curves()
    assert {(r["fabric"], r["n"]) for r in curves} == {(f, n) for f in FABRICS for n in N_VALUES}
    for r in curves:
        fabric = FABRICS[r["fabric"]]
        point = place_on_curve(r["b"], r["n"], fabric)
        want = {
            "all-reduce time": allreduce_time(r["b"], r["n"], fabric),
            "latency term alone": point.latency_s,
            "bytes term alone": point.bandwidth_s,
        }[r["series"]]
        assert r["us"] == pytest.approx(want / US, rel=1e-3)
    largest = max(prefill_message_bytes(MODEL, p) for p in PROMPT_VALUES)
    assert max(r["b"] for r in curves) >= largest  # the longest prompt stays on the axis


def test_values_and_labels_come_from_lesson_lib():
    assert CROSSOVER_PROMPT == round(crossover_tokens(MODEL, FAST, 2))
    assert {1, PROMPT_TOKENS, CROSSOVER_PROMPT, MODEL.max_context} <= set(PROMPT_VALUES)
    for key, fabric in (("fast", FAST), ("slow", SLOW)):
        assert f"{fabric.latency / US:g} us" in FABRIC_LABELS[key]
        assert format_rate(fabric.bandwidth) in FABRIC_LABELS[key]


def test_message_lines_fit_the_chart(explorer):
    """Three lines in every state, none wider than the chart holds, never a missing value."""
    for row in explorer.rows:
        lines = explorer.message.render(row).split("\n")
        assert len(lines) == 3
        assert max(len(line) for line in lines) <= 100, lines
        assert all(row[f] != "" for f in explorer.message.fields)
    assert explorer.message_for(prompt=1).startswith("1 vector = ")


def test_spec_is_small(explorer):
    assert len(explorer.rows) == len(PROMPT_VALUES) * len(N_VALUES) * len(FABRICS)
    assert len(json.dumps(explorer.spec())) < 350_000


def _scales(node, found):
    """Every (field, scale) pair of a spec's quantitative encodings."""
    if isinstance(node, dict):
        if node.get("type") == "quantitative" and "scale" in node:
            found.append((node.get("field"), node["scale"]))
        for value in node.values():
            _scales(value, found)
    elif isinstance(node, list):
        for value in node:
            _scales(value, found)
    return found


def test_the_default_bars_are_one_token_each_by_hand(explorer):
    """The lesson's prompt on four fast GPUs, per prompt token, from the chapter's totals:
    compute 55.91 ms / 4,096 = 13.65 us, bytes 17.9 ms / 4,096 = 4.37 us, latency
    1.28 ms / 4,096 = 0.31 us, together 18.3 us; decode's token 4.03 ms of weights +
    1.28 ms of latency = 5.31 ms."""
    row = explorer.row()
    assert row["prefill_compute_ms"] == pytest.approx(55.91 / 4096, rel=2e-3)
    assert row["prefill_bandwidth_ms"] == pytest.approx(17.9 / 4096, rel=2e-3)
    assert row["prefill_latency_ms"] == pytest.approx(1.28 / 4096, rel=2e-3)
    assert row["decode_compute_ms"] == pytest.approx(4.03, rel=2e-3)
    assert row["decode_latency_ms"] == pytest.approx(1.28, rel=2e-3)
    prefill = sum(row[f"prefill_{t}_ms"] for t in ("compute", "latency", "bandwidth"))
    assert prefill == pytest.approx(0.0183, abs=5e-5)


def test_axes_are_fixed_and_the_bars_absolute(explorer):
    """Every axis has a fixed domain; the bars are milliseconds on a linear axis to 15 ms.

    By hand, the longest decoded token offered: 2 GPUs on the slow fabric,
    54 GB / 2 / 3.35 TB/s = 8.06 ms of weights + 128 x 50 us = 6.4 ms of latency
    + bytes, about 14.5 ms, so the axis ends at the next whole ms, 15 ms. The
    lesson's 5.31 ms decode and 18.3 us prompt token are then 35 % and 0.1 % of it.
    """
    scales = _scales(explorer.spec(), [])
    assert scales and all("domain" in scale for _, scale in scales)
    bars = [scale for field, scale in scales if field == "_ms"]
    assert bars == [{"domain": [0, 15.0], "nice": False}]
    # the latency-alone line of the fastest fabric sits a decade above the axis's foot
    y = next(scale for field, scale in scales if field == "us")
    assert y["type"] == "log" and y["domain"][0] == 1.0
