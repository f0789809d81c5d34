"""Tests of lesson_lib.model.experts: TP against EP of the experts chapter's example."""

from __future__ import annotations

import pytest

from lesson_lib.model.experts import comparison


def test_tp_and_ep_of_the_example():
    """TP copies the latent cache: 28 sequences; EP holds 8 x 22 = 176 (see the page's
    exercise); one sequence's latencies are 122 x 10 us and 116 x 10 us."""
    layouts = comparison()
    assert layouts["tp"].sequences == 28 and layouts["ep"].sequences == 176
    assert layouts["tp"].one.latency_s == pytest.approx(122 * 10e-6)
    assert layouts["ep"].one.latency_s == pytest.approx(116 * 10e-6)
    assert layouts["ep"].full.tokens_per_s > layouts["tp"].full.tokens_per_s
    assert layouts["tp"].one.total_s < layouts["ep"].one.total_s
