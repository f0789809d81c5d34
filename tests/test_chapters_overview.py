"""The worked example's contract: every number the lesson states, pinned.

Each test recomputes a number from ``lesson_lib`` primitives and checks it
against the lesson, and checks the string the book glues.
"""

import re
from pathlib import Path

import pytest
from numpy.testing import assert_allclose

from lesson_lib import (
    GB,
    MS,
    GiB,
    KiB,
    MiB,
    allreduce_wire_bytes,
    decode_step,
    max_sequences,
    prefill_step,
    speedup,
)
from lesson_lib.chapters.glue import CHAPTERS, chapter_numbers
from lesson_lib.chapters.overview import CORE_PATH, prose_words, reading_numbers
from lesson_lib.model.specimen import (
    FAST,
    FAST_RING,
    GPU,
    MODEL,
    SLOW,
    TOKENS_PER_S,
)

BOOK = Path(__file__).resolve().parents[1] / "book"
TOKEN_PAYLOAD = MODEL.allreduces_per_token * MODEL.hidden_vector_bytes


@pytest.fixture(scope="module")
def glued():
    return chapter_numbers("overview")


def test_the_three_lines_are_glued_without_and_with_the_bytes(glued):
    """9.34 / 5.31 / 10.43 ms in the lesson's arithmetic; the slow line 10.46 ms with the bytes."""
    assert [glued["line_2_fast"], glued["line_4_fast"], glued["line_4_slow"]] == [
        "9.34 ms",
        "5.31 ms",
        "10.43 ms",
    ]
    assert glued["line_bw_4_slow"] == "10.46 ms"


def test_weights_are_54_gb(glued):
    """27e9 bf16 parameters are 54 GB (decimal), about 50.3 GiB."""
    assert MODEL.weight_bytes == 54 * GB
    assert glued["weights_gb"] == "54 GB"
    assert glued["weights_gib"] == "50.29 GiB"


def test_kv_cache_64_kib_per_token_16_gib_full(glued):
    """16 attention layers x 4 KV heads x 256 x 2 (K, V) x 2 B; x 262,144 tokens."""
    assert MODEL.kv_bytes_per_token == 64 * KiB
    assert MODEL.kv_bytes(MODEL.max_context) == 16 * GiB
    assert (glued["kv_per_token"], glued["kv_full_gib"]) == ("64 KiB", "16 GiB")


def test_deltanet_state_is_about_147_mib():
    """48 DeltaNet layers keep a fixed fp32 state, independent of context."""
    assert_allclose(MODEL.state_bytes / MiB, 146.8125)


def test_128_allreduces_per_token(glued):
    """Two reconciliation points per layer, 64 layers."""
    assert MODEL.allreduces_per_token == 128
    assert glued["allreduces_per_token"] == "128"


def test_hidden_vector_is_10_kib(glued):
    """5120 bf16 values."""
    assert MODEL.hidden_vector_bytes == 10 * KiB
    assert glued["hidden_vector"] == "10 KiB"


def test_ring_payload_per_token(glued):
    """1.25 MiB per rank per token on 2 GPUs, 1.875 MiB on 4."""
    assert allreduce_wire_bytes(TOKEN_PAYLOAD, 2) == 1.25 * MiB
    assert allreduce_wire_bytes(TOKEN_PAYLOAD, 4) == 1.875 * MiB
    assert (glued["wire_2"], glued["wire_4"]) == ("1.25 MiB", "1.875 MiB")


def test_under_100_mib_per_second_at_50_tokens(glued):
    """At an interactive 50 tokens/s the wire carries under 100 MiB/s per rank."""
    for n in (2, 4):
        assert allreduce_wire_bytes(TOKEN_PAYLOAD, n) * TOKENS_PER_S < 100 * MiB
    assert (glued["rate_2"], glued["rate_4"]) == ("62.5 MiB/s", "93.75 MiB/s")


def test_latency_totals_1_28_and_6_4_ms(glued):
    """128 serial all-reduces at 10 us and 50 us."""
    assert_allclose(decode_step(MODEL, GPU, FAST, 2).latency_s, 1.28 * MS)
    assert_allclose(decode_step(MODEL, GPU, SLOW, 4).latency_s, 6.4 * MS)
    assert (glued["latency_fast_total"], glued["latency_slow_total"]) == ("1.28 ms", "6.4 ms")


def test_doubling_on_fast_fabric_gives_1_76x(glued):
    """2 -> 4 GPUs halves the compute term but not the latency."""
    two = decode_step(MODEL, GPU, FAST, 2, include_bandwidth=False)
    four = decode_step(MODEL, GPU, FAST, 4, include_bandwidth=False)
    assert_allclose(speedup(two, four), 1.76, atol=0.005)
    assert glued["speedup_2_to_4"] == "1.76x"


def test_four_slow_gpus_lose_to_two_fast():
    """In both views, the interconnect decides, not the GPU count."""
    for include in (False, True):
        two_fast = decode_step(MODEL, GPU, FAST, 2, include_bandwidth=include)
        four_slow = decode_step(MODEL, GPU, SLOW, 4, include_bandwidth=include)
        assert four_slow.total_s > two_fast.total_s


def test_prefill_collective_carries_40_mib(glued):
    """A 4,096-token prompt: each all-reduce carries 4,096 hidden vectors."""
    assert 4096 * MODEL.hidden_vector_bytes == 40 * MiB
    assert glued["prefill_payload"] == "40 MiB"
    assert glued["prefill_payload_total"] == "5 GiB"


def test_prefill_is_bandwidth_bound_on_the_wire():
    """On 4 GPUs the wire time dwarfs the latency; on PCIe it outlasts the arithmetic."""
    fast = prefill_step(MODEL, GPU, FAST, 4, 4096)
    slow = prefill_step(MODEL, GPU, SLOW, 4, 4096)
    assert_allclose(fast.bandwidth_s / MS, 17.9, atol=0.05)
    assert fast.communication_bound == "bandwidth"
    assert slow.bandwidth_s > slow.flops_s
    assert slow.bound == "bandwidth"


def test_full_length_sequences_that_fit(glued):
    """1 / 6 / 16 full-length sequences fit at TP = 1 / 2 / 4 (79.1 GiB visible, no reserve)."""
    fits = [max_sequences(MODEL, GPU, n, MODEL.max_context) for n in (1, 2, 4)]
    assert fits == [1, 6, 16]
    assert [glued[f"sequences_{n}"] for n in (1, 2, 4)] == ["1", "6", "16"]


def test_hop_latency_ring_drops_speedup_to_about_1_5(glued):
    """With 10 us on 2 GPUs growing to 16.9 us on 4, the 2 -> 4 speed-up is about 1.51x."""
    two = decode_step(MODEL, GPU, FAST_RING, 2, include_bandwidth=False)
    four = decode_step(MODEL, GPU, FAST_RING, 4, include_bandwidth=False)
    assert_allclose(two.latency_s, 1.28 * MS)
    assert_allclose(speedup(two, four), 1.51, atol=0.005)
    assert glued["ring_latency_4"] == "16.9 us"


def test_prose_words_counts_what_a_reader_reads():
    """Counted by hand: 'Alpha beta' (2), the linked 'ring all-reduce' (2), a glued number (1),
    the link's text '[gamma' (1), the caption 'Two words.' (2) and the table's 'a' and 'b' (2);
    the front matter, the code cell, the link's target, the table's rules and the exercises
    are left out."""
    page = (
        "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\nAlpha beta"
        " {term}`ring all-reduce <ring all-reduce>` {glue:text}`line_2_fast`"
        " [gamma](https://example.org)\n\n"
        "```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    caption: Two\n      words.\n"
        "---\nprint('not read')\n```\n\n| a | b |\n|---|---|\n\n## Exercises\n\nDo this.\n"
    )
    assert prose_words(page) == 10


def test_reading_times_round_each_page_and_add_the_core_path(tmp_path):
    """400 words at 200 a minute are 2 min, 50 words round up to 1, 700 to 4 (3.5 to even);
    the core path adds its pages' rounded minutes."""
    for page in CHAPTERS:
        (tmp_path / f"{page}.md").write_text("word " * 50)
    (tmp_path / "latency.md").write_text("word " * 400)
    (tmp_path / "measured.md").write_text("word " * 700)
    times = reading_numbers(tmp_path)
    assert (times["read_latency"], times["read_sizing"], times["read_measured"]) == (
        "2 min",
        "1 min",
        "4 min",
    )
    # the eight core chapters the overview lists: latency 2 + seven at 1 = 9 (the overview's own
    # minute is not in it); eight others: measured 4 + seven at 1 = 11
    assert (times["read_core"], times["read_further"]) == ("9 min", "11 min")
    assert times["reading_wpm"] == "200"
    assert "read_index" not in times and "read_instructor" not in times


def _prerequisite_pages() -> dict[str, list[str]]:
    """Each page's prerequisites, as the pages their {ref} links lead to."""
    labels = {}
    for path in BOOK.glob("*.md"):
        for label in re.findall(r"^\(([\w-]+)\)=\s*$", path.read_text(), flags=re.M):
            labels[label] = path.stem
    out = {}
    for path in BOOK.glob("*.md"):
        text = path.read_text()
        if "\n## Prerequisites" not in text:
            continue
        section = text.split("\n## Prerequisites", 1)[1].split("\n## ", 1)[0]
        refs = re.findall(r"\{ref\}`(?:[^`<]*<)?([\w-]+)>?`", section)
        out[path.stem] = [labels[ref] for ref in refs]
    return out


def _reading_order() -> list[str]:
    toc = (BOOK.parent / "_toc.yml").read_text()
    return ["index", *re.findall(r"file: book/(\w+)\s*$", toc, flags=re.M)]


def test_prerequisites_point_only_backwards_in_reading_order():
    """No chapter asks for a page the table of contents puts after it (its own sections may)."""
    order = _reading_order()
    forward = {
        page: [ref for ref in refs if order.index(ref) > order.index(page)]
        for page, refs in _prerequisite_pages().items()
    }
    assert {page: refs for page, refs in forward.items() if refs} == {}
    assert "kv_transfer" in _prerequisite_pages() and "lab" in _prerequisite_pages()


def test_the_core_path_needs_only_itself_and_follows_the_book():
    """A reader of the core path meets every prerequisite of it on the path, in the book's order."""
    order = _reading_order()
    prerequisites = _prerequisite_pages()
    outside = {
        page: [ref for ref in prerequisites.get(page, []) if ref not in CORE_PATH]
        for page in CORE_PATH
    }
    assert {page: refs for page, refs in outside.items() if refs} == {}
    assert sorted(CORE_PATH, key=order.index) == list(CORE_PATH)


def test_the_table_of_contents_part_the_core_path_is_core_path():
    """The sidebar's "The core path" part lists CORE_PATH, in its order, and nothing else."""
    toc = (BOOK.parent / "_toc.yml").read_text()
    part = toc.split("- caption: The core path\n", 1)[1].split("- caption:", 1)[0]
    assert tuple(re.findall(r"file: book/(\w+)\s*$", part, flags=re.M)) == CORE_PATH


def test_overview_lists_every_chapter_with_its_reading_time():
    """Every chapter page but the landing page and the overview is in the chapter list, timed."""
    text = (BOOK / "overview.md").read_text().split("## The chapters", 1)[1]
    listed = re.findall(r"\{ref\}`(\w+)` \(\{glue:text\}`read_(\w+)`\)", text)
    assert all(ref == timed for ref, timed in listed)
    pages = [page for page in CHAPTERS if page not in ("index", "overview", "instructor")]
    assert sorted(ref for ref, _ in listed) == sorted(pages)
