"""Each built explorer page ships exactly what lesson_lib computes, and stays light.

Checked on the HTML of the build (no browser): the spec the page loads (from
the script beside it that the spec element names) must equal the explorer's
spec built in this process (a stale execution cache or a hand-edited page
would differ), the page with its data must stay under 1.5 MB, and it must load the
vendored scripts, never a CDN: ``explorers.js`` with the page, the Vega
scripts only when an explorer nears the viewport.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from lesson_lib.explorers.catalog import EXPLORERS

pytestmark = pytest.mark.slow

#: Largest an explorer page may be: its HTML with its explorers' data files.
PAGE_LIMIT_BYTES = 1_500_000

SPEC = re.compile(
    r'<script type="application/json" class="lesson-explorer-spec"(?: data-src="([^"]+)")?>'
    r"(.*?)</script>",
    re.S,
)
#: The one statement of a data file that sets the spec.
DATA = re.compile(r'^window\.lessonExplorerSpecs\["([^"]+)"\] = (.*);$', re.M)


def _by_rows(part):  # type: ignore[no-untyped-def]
    """A data file's part with its column-stored tables as CSV text again, as explorers.js does."""
    if isinstance(part, list):
        return [_by_rows(item) for item in part]
    if not isinstance(part, dict):
        return part
    part = {key: _by_rows(value) for key, value in part.items()}
    if "lessonColumns" in part:
        header, columns = part.pop("lessonColumns")
        columns = [c.split(",") if isinstance(c, str) else c for c in columns]
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([header, *zip(*columns, strict=True)])
        part["values"] = buf.getvalue()
    return part


def specs_in(page_html: str, folder: Path | None = None) -> list[dict]:
    """The explorer specs of a page: inline, or in the data file (in ``folder``) named."""
    specs = []
    for src, text in SPEC.findall(page_html):
        if src:
            key, text = DATA.search((folder / src).read_text()).groups()
            assert key == src, f"{src} sets the spec of {key}"
        specs.append(_by_rows(json.loads(text.replace("<\\/", "</"))))
    return specs


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.builder.rpartition(":")[2])
def test_page_ships_lesson_lib_spec(built_book, entry):
    path = built_book.html_dir / f"{entry.doc}.html"
    explorer = entry.build()
    shipped = [
        s for s in specs_in(path.read_text(), path.parent) if s["title"]["text"] == explorer.title
    ]
    assert len(shipped) == 1, f"{entry.doc}: explorer {explorer.title!r} not on the page once"
    assert shipped[0] == json.loads(json.dumps(explorer.spec()))


@pytest.mark.parametrize("doc", sorted({e.doc for e in EXPLORERS}))
def test_explorer_page_weight_and_scripts(built_book, doc):
    path = built_book.html_dir / f"{doc}.html"
    data = path.parent.glob(f"{path.stem}.explorer-*.js")
    assert path.stat().st_size + sum(p.stat().st_size for p in data) <= PAGE_LIMIT_BYTES
    page = path.read_text()
    scripts = re.findall(r'<script[^>]* src="([^"]+)"', page)
    assert any(src.split("?")[0].endswith("_static/lesson/explorers.js") for src in scripts)
    assert not [s for s in scripts if "vega" in s], "Vega is loaded before an explorer is near"
    assert not [s for s in scripts if s.startswith(("http:", "https:", "//"))]
    vega = built_book.html_dir / "_static" / "vega"
    for name in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"):
        assert (vega / name).is_file(), name
    assert SPEC.findall(page), "no explorer on the page"
    assert all(src and not text for src, text in SPEC.findall(page)), "data inline in the page"


def test_pages_without_explorers_do_not_load_vega(built_book):
    page = (built_book.html_dir / "book" / "glossary.html").read_text()
    assert "vega" not in page and "lesson-explorer" not in page


def test_specs_in_reads_escaped_scripts():
    html = (
        '<script type="application/json" class="lesson-explorer-spec">{"a": "<\\/script>"}</script>'
    )
    assert specs_in(html) == [{"a": "</script>"}]


def test_specs_in_reads_a_data_file(tmp_path):
    (tmp_path / "p.explorer-1.js").write_text(
        "window.lessonExplorerSpecs = window.lessonExplorerSpecs || {};\n"
        'window.lessonExplorerSpecs["p.explorer-1.js"] = {"a": "<\\/script>"};\n'
    )
    html = '<script type="application/json" class="lesson-explorer-spec" data-src="p.explorer-1.js"></script>'
    assert specs_in(html, tmp_path) == [{"a": "</script>"}]
