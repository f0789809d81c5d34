"""Tests of lesson_lib.model.tables: the escaped HTML table builder."""

from __future__ import annotations

import re

import pytest

from lesson_lib.model.tables import html_table


def body_rows(table: str) -> list[str]:
    """The <tr> elements inside <tbody>."""
    body = table.split("<tbody>", 1)[1]
    return re.findall(r"<tr>.*?</tr>", body, flags=re.S)


def test_html_table_escapes_every_cell_and_caption():
    """Markup in header, cells and caption shows as text, never as HTML."""
    out = html_table(["<b>a</b>"], [["x < y & z"]], caption='say "<hi>"')
    assert "<b>" not in out
    assert "&lt;b&gt;a&lt;/b&gt;" in out
    assert "x &lt; y &amp; z" in out
    assert "<caption>say &quot;&lt;hi&gt;&quot;</caption>" in out


def test_html_table_structure():
    """One header row of scoped th, one tr per row, cells in order."""
    out = html_table(["a", "b"], [[1, 2], [3, 4]])
    assert out.count('<th scope="col">') == 2
    assert len(body_rows(out)) == 2
    assert "<td>3</td><td>4</td>" in out
    assert "<caption>" not in out


def test_html_table_rejects_ragged_rows_and_empty_header():
    """A row of the wrong length or an empty header raises ValueError naming it."""
    with pytest.raises(ValueError, match=r"rows\[1\] must have 2 cells"):
        html_table(["a", "b"], [[1, 2], [3]])
    with pytest.raises(ValueError, match="header"):
        html_table([], [])
