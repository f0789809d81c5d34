"""The worked example stays within its length targets, counted on the built site."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import word_count


def _page(tmp_path: Path, article: str) -> Path:
    (tmp_path / "x.html").write_text(
        f'<html><body><nav>menu words here</nav><article class="bd-article">{article}</article></body></html>'
    )
    return tmp_path


def test_counts_prose_and_leaves_out_code_tables_math_and_exercises(tmp_path):
    """Three prose words survive; the code, table, math, exercise and solution do not."""
    html_dir = _page(
        tmp_path,
        "<section><h1>Title</h1><p>one two <span class='math'>x = y</span></p>"
        "<div class='cell_input'><pre>code words</pre></div><table><tr><td>a b</td></tr></table>"
        "<div class='exercise'>do this</div><div class='solution'>the answer</div></section>",
    )
    assert word_count.words("x", html_dir) == 3  # "Title", "one", "two"
    assert word_count.section_words("x", html_dir) == [("Title", 3)]


def test_a_page_without_an_article_is_refused(tmp_path):
    """An emptied or broken page is an error, not zero words."""
    (tmp_path / "x.html").write_text("<html><body><p>no article</p></body></html>")
    with pytest.raises(ValueError, match=r"x\.html has no article"):
        word_count.words("x", tmp_path)


@pytest.mark.slow
def test_worked_example_and_latency_chapter_meet_their_targets(built_book):
    """Latency at most 1,800 words, Overview to Summary at most 10,000."""
    html_dir = built_book.html_dir / "book"
    counts = {doc: word_count.words(doc, html_dir) for doc in word_count.WORKED_EXAMPLE}
    assert all(count > 300 for count in counts.values()), counts  # every chapter has prose
    assert counts["latency"] <= word_count.TARGETS["latency"]
    assert sum(counts.values()) <= word_count.TARGETS["worked example"]
