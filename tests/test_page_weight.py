"""Every built page's first load stays light; the known heavy scripts stay off it.

Checked on the HTML of the build (no browser, about a second): what a page
names (scripts, stylesheets, preloads, images not marked lazy) and the icon
font its header draws with, compressed with gzip -6, must stay under the
first-load budget.
``benchmarks/pages.py`` measures the same in Chromium, page by page.
"""

from __future__ import annotations

import gzip
import re
from functools import cache
from pathlib import Path

import pytest

#: A page's first load, compressed (``FIRST_LOAD_BUDGET`` in ``benchmarks/pages.py``).
FIRST_LOAD_BUDGET = 400_000

#: The icon font every page's header draws with (``lesson/icons.css``).
ICON_FONT = "_static/lesson/fa-solid-900.woff"

#: A math element whose TeX was not rendered when the site was built.
UNRENDERED = re.compile(
    r'class="math notranslate[^"]*"[^>]*>\s*(?:<span class="eqno">.*?</span>\s*)?\\[(\[]', re.S
)
TAGS = re.compile(r"<(script|link|img)\b([^>]*)>")


@cache
def gzipped(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=6))


def pages(html_dir: Path) -> list[Path]:
    """Every HTML page of the site."""
    return [
        p
        for p in sorted(html_dir.rglob("*.html"))
        if p.relative_to(html_dir).parts[0] not in ("_static", "_sources", "_images")
    ]


def first_load(page: Path, html_dir: Path) -> dict[str, Path]:
    """The local files the page loads before any interaction, by their name in the site."""
    files = {page.relative_to(html_dir).as_posix(): page}
    for tag, attrs in TAGS.findall(page.read_text()):
        if tag == "img" and 'loading="lazy"' in attrs:
            continue
        if tag == "link" and not re.search(r'rel="(stylesheet|preload)"', attrs):
            continue
        found = re.search(r'\b(?:src|href)="([^"#?]+)', attrs)
        if found and not found.group(1).startswith(("http:", "https:", "data:", "//")):
            path = (page.parent / found.group(1)).resolve()
            if path.is_file():
                files[path.relative_to(html_dir.resolve()).as_posix()] = path
    files[ICON_FONT] = html_dir / ICON_FONT
    return files


@pytest.mark.slow
def test_known_heavy_scripts_stay_off_the_pages(built_book):
    """No Font Awesome script, no search index but on the search page, no MathJax (the math is
    SVG already), no Vega and no explorer data in the page."""
    html_dir = built_book.html_dir
    found = []
    for page in pages(html_dir):
        text = page.read_text()
        name = page.relative_to(html_dir).as_posix()
        scripts = re.findall(r'<script[^>]* src="([^"]+)"', text)
        if any("fontawesome" in s for s in scripts):
            found.append(f"{name}: fontawesome.js")
        if name != "search.html" and any("searchindex" in s for s in scripts):
            found.append(f"{name}: searchindex.js")
        if any("mathjax" in s for s in scripts) or UNRENDERED.search(text):
            found.append(f"{name}: MathJax, or math left for it")
        if any("vega" in s for s in scripts):
            found.append(f"{name}: Vega before an explorer is near")
        if re.search(r'class="lesson-explorer-spec">.', text):
            found.append(f"{name}: explorer data inline")
    assert found == []
    assert (html_dir / ICON_FONT).stat().st_size < 20_000, "the icon font is not cut"
    assert (html_dir / "_static" / "lesson" / "math.css").stat().st_size > 500, "no math styles"


@pytest.mark.slow
def test_every_page_first_load_within_budget(built_book):
    """Each page with what it loads first, compressed, is at most FIRST_LOAD_BUDGET."""
    html_dir = built_book.html_dir
    weights = {
        page.relative_to(html_dir).as_posix(): sum(
            gzipped(p) for p in first_load(page, html_dir).values()
        )
        for page in pages(html_dir)
    }
    assert len(weights) > 20
    over = {name: round(w / 1e3) for name, w in weights.items() if w > FIRST_LOAD_BUDGET}
    assert over == {}, f"KB compressed, budget {FIRST_LOAD_BUDGET / 1e3:g}"


def test_helpers_find_formulas_icons_and_images(tmp_path):
    """The extension's helpers: TeX found (and unescaped) in math elements only, icon names
    mapped to code points through the theme's CSS, images but the first marked lazy."""
    from types import SimpleNamespace

    from lesson_site.static_math import formulas
    from lesson_site.weight import lazy_images, used_icons

    page = (
        '<p>\\(not math\\)</p><span class="math notranslate nohighlight">\\(a &lt; b\\)</span>'
        '<div class="math notranslate nohighlight">\n\\[x^2\\]</div>'
    )
    assert formulas(page) == [("a < b", False), ("x^2", True)]
    (tmp_path / "a.html").write_text('<i class="fa-solid fa-sun"></i>')
    (tmp_path / "_static").mkdir()
    css = '.fa-sun:before{content:"\\f185"}.fa-moon:before{content:"\\f186"}x{--i:"\uf05a"}'
    assert used_icons(tmp_path, css) == {0xF185, 0xF05A}
    context = {"body": '<img src="a.png"><img src="b.png"><img loading="eager" src="c.png">'}
    lazy_images(SimpleNamespace(), "p", "page.html", context, None)
    assert context["body"] == (
        '<img src="a.png"><img loading="lazy" src="b.png"><img loading="eager" src="c.png">'
    )


def test_explorer_tables_are_stored_by_columns_and_read_back_whole():
    """A CSV table in a spec becomes its header and columns; every field, quoted ones too, returns."""
    from lesson_site.weight import by_columns

    table = 'a,b\n1,"x, ""y"""\n2,"two\nlines"\n'
    spec = {"layer": [{"data": {"values": table, "format": {"type": "csv"}}}], "title": "t"}
    stored = by_columns(spec)
    data = stored["layer"][0]["data"]
    assert "values" not in data
    assert data["lessonColumns"] == [["a", "b"], ["1,2", ['x, "y"', "two\nlines"]]]
    assert stored["title"] == "t" and data["format"] == {"type": "csv"}
    assert by_columns({"values": [1, 2]}) == {"values": [1, 2]}  # not CSV text: left alone


def test_explorer_data_files_hold_no_row_tables(built_book):
    """Each explorer's data file stores its tables by columns (a third of the gzipped bytes)."""
    files = sorted(built_book.html_dir.rglob("*.explorer-*.js"))
    assert files, "no explorer data files"
    for path in files:
        text = path.read_text()
        assert '"lessonColumns"' in text and '"values":"' not in text, path.name
