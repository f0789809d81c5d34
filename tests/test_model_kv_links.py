"""Tests of lesson_lib.model.kv_links: the hand-off links, the colocated stall and DCP's latency."""

from __future__ import annotations

import pytest

from lesson_lib.model.kv_links import (
    LINKS_BY_KEY,
    colocated_stall_per_token,
    link_handoff,
)


def test_colocated_stall_by_hand():
    """64 sequences, each 256 tokens long, behind a 75.92 ms prefill: 64 x 75.92 / 256 ms."""
    assert colocated_stall_per_token(75.92e-3, 64, 256) == pytest.approx(18.98e-3)
    assert colocated_stall_per_token(0.0, 64, 256) == 0.0


def test_link_handoff_refuses_a_fabric_for_a_link():
    """A Fabric is not a Link (it lacks the shared-port flag): TypeError naming the parameter."""
    with pytest.raises(TypeError, match=r"^link must be a Link, got Fabric$"):
        link_handoff(LINKS_BY_KEY["nic"].fabric, 4096)
