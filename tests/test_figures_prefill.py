"""Figures of the prefill chapter: curves, asymptotes, crossover and breakdown bars."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib import MS, allreduce_time, crossover_bytes
from lesson_lib.figures.prefill import (
    PAYLOAD_RANGE,
    alpha_beta_figure,
    prefill_breakdown_figure,
)
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW
from lesson_lib.model.step_time import decode_step, prefill_step


def _lines(ax, label):
    return [line for line in ax.get_lines() if line.get_label() == label]


def test_alpha_beta_curves_follow_allreduce_time():
    """Each fabric's curve is allreduce_time over the payload range, on log-log axes."""
    fig = alpha_beta_figure()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    for fabric in (FAST, SLOW):
        (curve,) = _lines(ax, fabric.name)
        x, y = curve.get_data()
        assert_allclose(x[[0, -1]], PAYLOAD_RANGE)
        assert_allclose(y, [allreduce_time(float(m), 2, fabric) for m in x])
    assert "bytes" in ax.get_xlabel() and "time" in ax.get_ylabel()


def test_crossover_marked_where_terms_are_equal():
    """A diamond sits at (alpha x B, 2 alpha) for each fabric."""
    ax = alpha_beta_figure().axes[0]
    diamonds = [
        line for line in ax.get_lines() if line.get_marker() == "D" and len(line.get_xdata())
    ]
    points = sorted((float(d.get_xdata()[0]), float(d.get_ydata()[0])) for d in diamonds)
    expected = sorted((crossover_bytes(f, 2), 2 * f.latency) for f in (FAST, SLOW))
    assert_allclose(points, expected)


def test_decode_and_prefill_messages_marked():
    """Vertical lines at one hidden vector and at the prompt's vectors."""
    ax = alpha_beta_figure().axes[0]
    verticals = {
        float(line.get_xdata()[0])
        for line in ax.get_lines()
        if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]
    }
    assert MODEL.hidden_vector_bytes in verticals
    assert PROMPT_TOKENS * MODEL.hidden_vector_bytes in verticals


def test_no_labelled_tick_sits_beside_a_message():
    """Labelled at 64 B and 1 KiB, 1 MiB, 1 GiB only: 10 KiB and 40 MiB are 3.3 and 5.3 octaves
    past the nearest (log2(10) = 3.3, log2(40) = 5.3), not read as a tick's size."""
    ax = alpha_beta_figure().axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["64 B", "1 KiB", "1 MiB", "1 GiB"]
    assert_allclose(ax.get_xticks(), [64, 1024, 1024**2, 1024**3])


def test_breakdown_bars_match_step_time():
    """Stacked bars: compute, latency, bandwidth in ms, decode above and prefill below."""
    fig = prefill_breakdown_figure()
    ax_decode, ax_prefill = fig.axes[:2]
    assert ax_decode.get_position().y0 > ax_prefill.get_position().y1
    for ax, steps in (
        (ax_decode, [decode_step(MODEL, GPU, f, 4) for f in (FAST, SLOW)]),
        (ax_prefill, [prefill_step(MODEL, GPU, f, 4, PROMPT_TOKENS) for f in (FAST, SLOW)]),
    ):
        widths = np.array([[p.get_width() for p in c.patches] for c in ax.containers])
        expected = np.array([[s.compute_s, s.latency_s, s.bandwidth_s] for s in steps]).T / MS
        assert_allclose(widths, expected)
        assert ax.get_xlabel() == "time (ms)"


def test_slow_prefill_bandwidth_exceeds_arithmetic():
    """On PCIe-class bandwidth the prefill's wire time beats its compute (the bars say so)."""
    ax_prefill = prefill_breakdown_figure().axes[1]
    compute, _latency, bandwidth = (c.patches[1].get_width() for c in ax_prefill.containers)
    assert bandwidth > compute


@pytest.mark.parametrize("builder", [alpha_beta_figure, prefill_breakdown_figure])
def test_empty_fabric_list_is_refused(builder):
    """No fabric, no figure: the error names the parameter."""
    with pytest.raises(ValueError, match="fabrics"):
        builder(fabrics=())


def test_bad_ring_size_names_the_parameter():
    """A ring of one has no curve to draw."""
    with pytest.raises(ValueError, match="n must"):
        alpha_beta_figure(n=1)


def test_breakdown_decode_title_says_its_bars_include_the_bytes():
    """Its 4-GPU slow total, 10.46 ms, counts the bytes; the latency chapter's 10.43 ms does not."""
    decode_axes = prefill_breakdown_figure().axes[0]
    assert decode_axes.get_title() == "decode: one token, bytes included"
    assert "10.46 ms" in [t.get_text() for t in decode_axes.texts]
