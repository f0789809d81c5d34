"""The KV-transfer explorer: its states are lesson_lib's hand-offs, its defaults the chapter's."""

from __future__ import annotations

import json

import pytest

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.explorers.kv_transfer import (
    BARS,
    CONTROLS,
    PROMPT_VALUES,
    _axis_ms,
    kv_transfer_explorer,
)
from lesson_lib.model.kv_links import LINKS_BY_KEY, link_handoff
from lesson_lib.model.units import format_seconds


@pytest.fixture(scope="module")
def explorer():
    return kv_transfer_explorer()


def test_defaults_are_the_lesson_prompt_over_a_nic_per_gpu(explorer):
    """4,096 tokens: 256 MiB of KV + 146.8 MiB of state = 402.8 MiB; a quarter, 100.7 MiB, per
    NIC; the chapter's glued prefill and hand-off times."""
    glued = chapter_numbers("kv_transfer")
    assert explorer.defaults == {"prompt": 4096, "link": "nic", "prefill_gpus": 4, "decode_gpus": 4}
    first, second, third, fourth = explorer.message_for().split("\n")
    assert first == (
        "402.8 MiB per request (256 MiB of KV + 146.8 MiB of state); busiest port 100.7 MiB"
    )
    assert (
        second
        == f"Prefill {glued['prefill_prompt']}; shipped after it + 2.14 ms (2.8 % of the prefill)"
    )
    # the chapter's own rounding of the same time (ms, three places)
    assert third == f"Streamed by layer + {glued['stream_prompt_nic']}, the port keeps up"
    assert glued["stream_prompt_nic"] == "0.109 ms"
    # 1 / (25 us + 105,594,880 B / 50e9 B/s) = 468 hand-overs per second
    assert fourth.startswith("468 requests/s through these ports")


def test_full_context_from_one_gpu_to_one_over_one_nic(explorer):
    """One GPU each side: all 16 GiB + 146.8 MiB = 16.14 GiB through one NIC in 0.347 s."""
    message = explorer.message_for(prompt=262_144, prefill_gpus=1, decode_gpus=1)
    assert "busiest port 16.1 GiB" in message
    assert "shipped after it + 346.7 ms" in message


def test_short_prompt_on_the_shared_port_falls_behind(explorer):
    """128 tokens: 8 MiB of KV + 146.8 MiB of state through one 25 GB/s port, 6.54 ms,
    longer than the 5.87 ms prefill."""
    message = explorer.message_for(prompt=128, link="ethernet")
    assert message.startswith("154.8 MiB per request (8 MiB of KV + 146.8 MiB of state)")
    assert "Prefill 5.87 ms; shipped after it + 6.54 ms" in message
    assert "the port falls behind" in message


@pytest.mark.parametrize("prompt", [PROMPT_VALUES[0], 4096, PROMPT_VALUES[-1]])
@pytest.mark.parametrize("link", list(LINKS_BY_KEY))
def test_states_are_link_handoff(explorer, prompt, link):
    """Every state's numbers are link_handoff's, in the bars and the message alike."""
    for prefill_gpus, decode_gpus in ((1, 8), (8, 1), (2, 4)):
        h = link_handoff(LINKS_BY_KEY[link], prompt, prefill_gpus, decode_gpus)
        state = {"prompt": prompt, "link": link, "prefill_gpus": prefill_gpus,
                 "decode_gpus": decode_gpus}  # fmt: skip
        row = explorer.row(**state)
        assert row["bulk"] == format_seconds(h.bulk.time_s)
        assert row["prefill"] == format_seconds(h.prefill.total_s)
        bars = [d for d in explorer.details if all(d[k] == v for k, v in state.items())]
        assert [b["bar"] for b in bars] == list(BARS)
        assert bars[0]["end_ms"] == pytest.approx(h.prefill.total_s * 1e3, rel=1e-5)
        assert bars[1]["end_ms"] == pytest.approx(h.ttft_bulk_s * 1e3, rel=1e-5)
        assert bars[2]["end_ms"] == pytest.approx(h.ttft_streamed_s * 1e3, rel=1e-5)


def test_every_state_has_its_three_bars_and_the_spec_ships_them(explorer):
    """12 prompts x 3 links x 4 x 4 GPU counts = 576 states, 3 bars each, all in the spec."""
    assert len(explorer.rows) == 12 * 3 * 4 * 4 == 576
    assert len(explorer.details) == 3 * 576
    spec = json.dumps(explorer.spec())
    assert len(spec) < 1_500_000
    assert [c.name for c in CONTROLS] == ["prompt", "link", "prefill_gpus", "decode_gpus"]


def test_the_time_axis_stays_put_for_each_prompt(explorer):
    """For each prompt the axis ends past every bar of every link and GPU count.

    By hand for the lesson's prompt: one prefill GPU is the slowest prefill, about four
    times the four GPUs' 75.92 ms (weights and FLOPs on one card, no all-reduces),
    roughly 250 ms plus the slowest link's copy; the axis ends at the next round step,
    300 ms, for every link and GPU count at 4,096 tokens.
    """
    axis = _axis_ms(explorer.details)
    assert set(axis) == set(PROMPT_VALUES)
    assert axis[4096] == 300.0
    for d in explorer.details:
        assert d["end_ms"] <= axis[d["prompt"]]
    x = explorer.spec()["vconcat"][1]["layer"][0]["encoding"]["x"]
    assert x["scale"]["domainMin"] == 0 and x["scale"]["domainMax"]["expr"].endswith("[prompt]")
    assert "'4096': 300" in x["scale"]["domainMax"]["expr"]
