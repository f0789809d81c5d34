"""HTML tables of lesson_lib's numbers, every cell escaped (a ``<`` in a note shows as text)."""

from __future__ import annotations

import html
from collections.abc import Sequence


def html_table(
    header: Sequence[object], rows: Sequence[Sequence[object]], caption: str | None = None
) -> str:
    """An accessible HTML table with every cell escaped.

    Parameters
    ----------
    header : sequence
        Column titles (at least one); each becomes a ``<th scope="col">``.
    rows : sequence of sequences
        Body rows, each as long as ``header``; cells are converted with ``str`` and escaped.
    caption : str, optional
        Shown above the table (escaped).

    Returns
    -------
    str
        A ``<table class="table lesson-table">`` (book theme) with ``<thead>`` and ``<tbody>``.
    """
    if len(header) == 0:
        raise ValueError("header must name at least one column")
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(
                f"rows[{i}] must have {len(header)} cells (one per header column), got {len(row)}"
            )

    def cells(tag: str, values: Sequence[object], attrs: str = "") -> str:
        return "".join(f"<{tag}{attrs}>{html.escape(str(v))}</{tag}>" for v in values)

    parts = ['<table class="table lesson-table">']
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    head = cells("th", header, ' scope="col"')
    parts += [f"<thead><tr>{head}</tr></thead>", "<tbody>"]
    parts += [f"<tr>{cells('td', row)}</tr>" for row in rows]
    return "\n".join([*parts, "</tbody>", "</table>"])
