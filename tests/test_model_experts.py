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


def test_every_layout_reads_its_cache():
    """At 32,768 tokens a sequence's latent is 70,272 x 32,768 = 2,302,672,896 B. TP 8 reads 28
    of them on every rank, 64.47 GB; EP 8 its own 22, 50.66 GB; TP 8 + DCP 8 an eighth of 230,
    66.20 GB. DCP holds 230: 66,445,554,816 B free / 287,834,112 B = 230.8."""
    layouts = comparison()
    assert layouts["tp"].full.kv_read_bytes == 28 * 2_302_672_896
    assert layouts["ep"].full.kv_read_bytes == 22 * 2_302_672_896
    assert layouts["dcp"].sequences == 230 and layouts["dcp"].dcp == 8
    assert layouts["dcp"].full.kv_read_bytes == 230 * 2_302_672_896 / 8
