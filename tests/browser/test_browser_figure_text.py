"""The page the figure-text test assumes: column width, figure scaling, smallest body text.

``tests/test_figures_text_size.py`` checks each figure's smallest text
against two constants of ``lesson_lib.figures._style``: the article column
a figure is scaled down to (``COLUMN_PX``) and the smallest body text of the
site (``TEXT_FLOOR_PX``). Here both are measured on the built site at a
1280 px viewport: the column a figure's image can fill (its ``<figure>``'s
content box, the article's text width less the figure's padding) must be at
least ``COLUMN_PX`` wide, every figure must be shown at its natural width or
scaled down to that column, and
the smallest visible body text (paragraphs, list items, table cells,
captions) must not be larger than ``TEXT_FLOOR_PX``, or the floor would let
a figure's text be smaller than everything around it.
"""

from __future__ import annotations

import pytest
from build_site import toc_files

from lesson_lib.figures._style import COLUMN_PX, TEXT_FLOOR_PX

pytestmark = pytest.mark.slow


def test_the_page_matches_the_figure_text_constants(report):
    """At 1280 px: figure column >= COLUMN_PX, figures shown at min(natural, column), text floor.

    Read from the site test's visit of each page (``probe.FIGURE_TEXT``, 1280 px).
    """
    columns, smallest, badly_scaled = [], None, []
    for doc in toc_files():
        got = report(doc).figure_text
        for s in got["sizes"]:
            if smallest is None or s["size"] < smallest[0]:
                smallest = (s["size"], doc, s["tag"], s["text"])
        for img in got["images"]:
            columns.append((img["column"], doc, img["src"]))
            if abs(img["shown"] - min(img["natural"], img["column"])) > 1:
                badly_scaled.append(f"{doc}: {img}")
    assert len(columns) >= 15, "the figures of the chapters were not found"
    narrow = [c for c in columns if c[0] < COLUMN_PX - 0.5]
    assert not narrow, f"figure column narrower than COLUMN_PX = {COLUMN_PX}: {narrow}"
    assert badly_scaled == []
    assert smallest is not None
    assert smallest[0] <= TEXT_FLOOR_PX + 0.05, (
        f"the smallest body text is {smallest[0]} px ({smallest[1:]}), larger than "
        f"TEXT_FLOOR_PX = {TEXT_FLOOR_PX}: raise the floor"
    )
