"""Figures of the KV-transfer chapter: their lines and bars are the model's numbers."""

from __future__ import annotations

import pytest

from lesson_lib.figures.kv_transfer import handoff_timeline_figure, handoff_vs_context_figure


def test_handoff_vs_context_lines():
    """Prefill, three links and the streamed shared port; at full context the NIC line is
    25 us + 4,333,453,312 B / 50e9 B/s = 86.69 ms and the shared port's 50 us +
    17,333,813,248 B / 25e9 B/s = 693.4 ms."""
    fig = handoff_vs_context_figure()
    (ax,) = fig.axes
    lines = ax.get_lines()
    labels = [line.get_label() for line in lines]
    assert labels[0] == "prefill on 4 GPUs"
    assert len(lines) == 5 and lines[-1].get_linestyle() == "--"
    assert lines[0].get_xdata()[0] == 128 and lines[0].get_xdata()[-1] == 262_144
    nic = lines[labels.index("shipped after it: a NIC per GPU, compute fabric")]
    assert nic.get_ydata()[-1] == pytest.approx(25e-6 + 4_333_453_312 / 50e9)
    shared = lines[labels.index("shipped after it: the node's shared Ethernet port")]
    assert shared.get_ydata()[-1] == pytest.approx(50e-6 + 17_333_813_248 / 25e9)
    # the shared port outlasts the prefill at 128 tokens (6.54 ms against 5.87 ms)
    assert shared.get_ydata()[0] > lines[0].get_ydata()[0]


def test_timeline_bars_at_the_defaults():
    """Prefill 0 to 75.92 ms; shipped after it from there for 25 us + 105,594,880 B / 50e9;
    streamed from 0 to the prefill plus the last 4 MiB piece and 25 us."""
    fig = handoff_timeline_figure()
    (ax,) = fig.axes
    prefill, shipped, streamed = ax.patches
    assert prefill.get_x() == 0 and prefill.get_width() == pytest.approx(75.92, abs=0.005)
    assert shipped.get_x() == pytest.approx(prefill.get_width())
    assert shipped.get_width() == pytest.approx((25e-6 + 105_594_880 / 50e9) * 1e3)
    end = prefill.get_width() + (4_194_304 / 50e9 + 25e-6) * 1e3
    assert streamed.get_width() == pytest.approx(end)
