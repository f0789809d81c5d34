"""Tests of lesson_lib.chapters.allreduce: the all-reduce chapter's glued numbers."""

from lesson_lib.chapters.allreduce import allreduce_numbers


def test_chapter_numbers():
    """The chapter's extra glue strings, pinned."""
    got = allreduce_numbers()
    assert got["ar_num_layers"] == "64"
    assert got["ar_per_layer"] == "2"
    assert got["ar_hidden_size"] == "5,120"
    assert (got["ar_attention_layers"], got["ar_deltanet_layers"]) == ("16", "48")
    assert got["ar_steps_4"] == "6"
    assert got["ar_chunk_4"] == "2.5 KiB"
    assert got["ar_sent_4"] == "15 KiB"
    assert got["ar_sent_4_bytes"] == "15,360"
    assert got["ar_factor_16"] == "1.875"
    assert got["ar_limit"] == "20 KiB"
