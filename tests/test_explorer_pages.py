"""Each built explorer page ships exactly what lesson_lib computes, and stays light.

Checked on the HTML of the build (no browser): the spec inside the page must
equal the explorer's spec built in this process (a stale execution cache or
a hand-edited page would differ), the page with its explorers' data must stay
under 1.5 MB (the shared Vega scripts are not counted), and the page must
load the vendored scripts, never a CDN.
"""

from __future__ import annotations

import json
import re

import pytest

from lesson_lib.explorers.catalog import EXPLORERS

pytestmark = pytest.mark.slow

#: Largest an explorer page may be: its HTML with the explorers' inline data.
PAGE_LIMIT_BYTES = 1_500_000

SPEC = re.compile(
    r'<script type="application/json" class="lesson-explorer-spec">(.*?)</script>', re.S
)


def specs_in(page_html: str) -> list[dict]:
    """The explorer specs written into a page."""
    return [json.loads(m.replace("<\\/", "</")) for m in SPEC.findall(page_html)]


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.builder.rpartition(":")[2])
def test_page_ships_lesson_lib_spec(built_book, entry):
    page = (built_book.html_dir / f"{entry.doc}.html").read_text()
    explorer = entry.build()
    shipped = [s for s in specs_in(page) if s["title"]["text"] == explorer.title]
    assert len(shipped) == 1, f"{entry.doc}: explorer {explorer.title!r} not on the page once"
    assert shipped[0] == json.loads(json.dumps(explorer.spec()))


@pytest.mark.parametrize("doc", sorted({e.doc for e in EXPLORERS}))
def test_explorer_page_weight_and_scripts(built_book, doc):
    path = built_book.html_dir / f"{doc}.html"
    assert path.stat().st_size <= PAGE_LIMIT_BYTES
    page = path.read_text()
    scripts = re.findall(r'<script[^>]* src="([^"]+)"', page)
    for name in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "explorers.js"):
        assert any(
            src.split("?")[0].endswith(
                f"_static/{'lesson' if name == 'explorers.js' else 'vega'}/{name}"
            )
            for src in scripts
        ), name
    assert not [s for s in scripts if s.startswith(("http:", "https:", "//"))]


def test_pages_without_explorers_do_not_load_vega(built_book):
    page = (built_book.html_dir / "book" / "glossary.html").read_text()
    assert "vega" not in page and "lesson-explorer" not in page


def test_specs_in_reads_escaped_scripts():
    html = (
        '<script type="application/json" class="lesson-explorer-spec">{"a": "<\\/script>"}</script>'
    )
    assert specs_in(html) == [{"a": "</script>"}]
