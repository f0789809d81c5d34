"""Tests of lesson_lib.chapters.tables: the stated inputs, the key numbers and the budget tables."""

import html
import re
from pathlib import Path

import pytest

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.chapters.tables import (
    CHAPTER_TITLES,
    KEY_NUMBERS,
    assumptions_table,
    budget_table,
    key_numbers_table,
)
from lesson_lib.model.sizing import fits_by_degree
from lesson_lib.model.specimen import ASSUMPTIONS, Assumption


def body_rows(table: str) -> list[str]:
    """The <tr> elements inside <tbody>."""
    body = table.split("<tbody>", 1)[1]
    return re.findall(r"<tr>.*?</tr>", body, flags=re.S)


def test_assumptions_table_lists_every_assumption():
    """Each assumption's name, shown value and source appears, in order."""
    out = assumptions_table()
    rows = body_rows(out)
    assert len(rows) == len(ASSUMPTIONS)
    for row, a in zip(rows, ASSUMPTIONS, strict=True):
        for text in (a.name, a.shown, a.source):
            assert f"<td>{html.escape(text)}</td>" in row
    assert '<th scope="col">quantity</th>' in out


def test_assumptions_table_escapes_custom_rows():
    """A custom assumption with markup is escaped."""
    out = assumptions_table([Assumption("a<b", 1.0, "count", "1 & 2", "src")])
    assert "a&lt;b" in out and "1 &amp; 2" in out


def test_key_numbers_table_reads_numbers():
    """Every key number is a real glue key, shown with the worked example's value."""
    values = chapter_numbers("overview")
    out = key_numbers_table()
    rows = body_rows(out)
    assert len(rows) == len(KEY_NUMBERS)
    for row, (key, _, _) in zip(rows, KEY_NUMBERS, strict=True):
        assert f"<td>{html.escape(values[key])}</td>" in row
    assert "<td>9.34 ms</td>" in out and "<td>1.76x</td>" in out


def test_key_numbers_table_names_chapters_by_their_titles():
    """The chapter column shows each page's own title, never its file name; 1.76x is latency's."""
    book = Path(__file__).resolve().parents[1] / "book"
    for slug, title in CHAPTER_TITLES.items():
        assert f"# {title}\n" in (book / f"{slug}.md").read_text(encoding="utf-8"), slug
    rows = body_rows(key_numbers_table())
    for row, (_, _, slug) in zip(rows, KEY_NUMBERS, strict=True):
        assert re.search(f"<td>{re.escape(html.escape(CHAPTER_TITLES[slug]))}</td>\\s*</tr>", row)
    doubling = next(row for row in rows if "<td>1.76x</td>" in row)
    assert "<td>The latency assumption</td>" in doubling
    assert not any("Measured" in row for row in rows)  # the core path's numbers only


def test_key_numbers_table_missing_key():
    """A values mapping without a key number raises KeyError naming it."""
    with pytest.raises(KeyError, match="weights_gb"):
        key_numbers_table({})


def test_budget_table_rows():
    """One row per degree with the sequences that fit (1, 6, 16)."""
    out = budget_table()
    rows = body_rows(out)
    assert len(rows) == 3
    assert "<td>2</td><td>6</td><td>27 GB</td><td>51.54 GB (48 GiB)</td>" in rows[1]
    assert "<td>16</td>" in rows[2]
    # every column in GB, so a row adds up to the card: 27 + 51.54 + 0.46 + 5.93
    assert "<td>0.46 GB</td><td>5.93 GB</td><td>84.93 GB</td>" in rows[1]
    assert len(body_rows(budget_table(fits_by_degree(degrees=(8,))))) == 1
