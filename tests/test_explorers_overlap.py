"""The overlap explorer: messages at chosen states against values worked out by hand."""

from __future__ import annotations

import pytest

from lesson_lib.explorers.overlap import TOKEN_VALUES, overlap_explorer


@pytest.fixture(scope="module")
def explorer():
    return overlap_explorer()


def test_defaults_are_a_decoded_token_on_four_fast_gpus(explorer):
    """4.03 ms of weights + 128 x 0.5 us = 0.064 ms + 128 x 10 us = 1.28 ms: 5.38 ms."""
    assert explorer.defaults == {"tokens": 1, "fabric": "fast", "technique": "none"}
    first = explorer.message_for().split("\n")[0]
    assert first == "A decoded token, 4 GPUs, fast fabric, none: 5.38 ms"


def test_chunking_hides_a_prompt_and_lengthens_a_token(explorer):
    """Prompt: 128 x 44.95 us = 5.75 ms exposed, 17.26 ms hidden; token: 6.2 ms, +0.82 ms."""
    prompt = explorer.message_for(tokens=4096, technique="chunked")
    assert "exposed all-reduces 5.75 ms" in prompt and "hidden 17.26 ms" in prompt
    token = explorer.message_for(technique="chunked")
    assert token.split("\n")[0].endswith("6.2 ms") and "against no technique +0.82 ms" in token


def test_fp8_weights_on_the_slow_fabric(explorer):
    """2.01 ms of weights + 0.064 ms + 128 x 50 us = 6.4 ms of latency (+ 4.4 us of bytes)."""
    row = explorer.row(fabric="slow", technique="fp8_weights")
    assert (row["compute"], row["latency"], row["total"]) == ("2.01 ms", "6.4 ms", "8.51 ms")
    assert len(explorer.rows) == len(TOKEN_VALUES) * 2 * 5
