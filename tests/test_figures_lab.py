"""Tests of lesson_lib.figures.lab: the measured curve against the model."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from lesson_lib.figures.lab import DECODE_BYTES, PREFILL_BYTES, compare_ranks, measured_vs_model
from lesson_lib.lab.fit import fit_measurement
from lesson_lib.lab.records import load_reference


def texts(fig: Figure) -> str:
    """All text drawn in a figure: labels, legend entries, annotations, title."""
    out = []
    for ax in fig.axes:
        out += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title(loc="left")]
        out += [t.get_text() for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
    return "\n".join(out)


def test_decode_and_prefill_sizes():
    """The marked messages are the lesson's 10 KiB and 40 MiB."""
    assert (DECODE_BYTES, PREFILL_BYTES) == (10 * 1024, 40 * 2**20)


def test_measured_vs_model_contents():
    """Both panels, log axes with units, the model, both marked messages and the pingpong line."""
    m = load_reference(2)
    fig = measured_vs_model(m, fit_measurement(m), pingpong_latency=3e-6)
    top, bottom = fig.axes
    assert top.get_xscale() == "log" and top.get_yscale() == "log"
    words = texts(fig)
    for needle in ("decode\n10 KiB", "prefill\n40 MiB", "alpha + m/B", "pingpong", "crossover"):
        assert needle in words
    assert "message size" in bottom.get_xlabel() and "measured / model" in bottom.get_ylabel()
    assert "MPICH" in top.get_title(loc="left")


def test_compare_ranks_marks_oversubscription():
    """The 4-rank reference is labelled as oversubscribed in the legend."""
    runs = [load_reference(2), load_reference(4)]
    fig = compare_ranks(runs)
    assert "4 ranks (oversubscribed: 2 cores)" in texts(fig)


def test_compare_ranks_input_checks():
    """No measurements raise ValueError."""
    with pytest.raises(ValueError, match="at least one"):
        compare_ranks([])
