"""The built site in a real browser, with the network off.

Every page of ``_toc.yml`` is loaded once from a local HTTP server in
Chromium (only 127.0.0.1 resolves) and checked: no console errors or failed
requests, math typeset, figures loaded with alt text, solutions collapsed
until clicked, every explorer drawn, internal links resolving, and no
serious or critical axe-core violation in the page's content. Screenshots of
every page land in ``_build/browser-screenshots/``.
"""

from __future__ import annotations

import json
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest
from build_site import ROOT, toc_files
from probe import ACTION_TIMEOUT_MS, axe_scans, raw_tex

from lesson_lib.explorers.catalog import EXPLORERS

pytestmark = pytest.mark.slow

DOCS = toc_files()


def figure_names(doc: str) -> list[str]:
    """Names of the figures the chapter's source declares (``fig-...``).

    Parameters
    ----------
    doc : str
        Docname, e.g. ``book/sizing``.

    Returns
    -------
    list of str
        ``name:`` values under ``mystnb: figure:`` cell metadata and
        ``:name:`` options of ``{figure}`` directives.
    """
    text = (ROOT / f"{doc}.md").read_text()
    names = re.findall(r"^\s+name:\s*(fig-[\w-]+)\s*$", text, flags=re.M)
    names += re.findall(r"^:name:\s*(fig-[\w-]+)\s*$", text, flags=re.M)
    return names


@pytest.mark.parametrize("doc", DOCS)
def test_page_loads_without_errors(report, doc):
    """No console error, uncaught exception, failed request or off-site request."""
    r = report(doc)
    assert r.console_errors == []
    assert r.failed_requests == []


@pytest.mark.parametrize("doc", DOCS)
def test_page_shows_its_article(report, doc):
    """The article is there: its title, and prose in proportion to the source's sections."""
    r = report(doc)
    words = r.data["text"].split()
    sections = sum(
        line.startswith(("# ", "## ")) for line in (ROOT / f"{doc}.md").read_text().splitlines()
    )
    assert len(words) >= 20 * max(1, sections), f"{doc}: the article is (nearly) empty"


@pytest.mark.parametrize("doc", DOCS)
def test_math_is_typeset(report, doc):
    """Every math element holds MathJax output and no raw TeX is left in the prose."""
    r = report(doc)
    assert r.data["untypeset"] == []
    assert raw_tex(r.data["text"]) == []


def test_raw_tex_detector_can_fail():
    """The raw-TeX check flags $x$, \\( and $$ but not prices or code-like text."""
    assert raw_tex("the cost $\\alpha + m/B$ here")
    assert raw_tex("left \\(x\\) over")
    assert raw_tex("$$ t $$")
    assert raw_tex("it costs $5 and $6 per hour") == []


@pytest.mark.parametrize("doc", DOCS)
def test_figures_present_loaded_with_alt(report, doc):
    """Each declared figure is on the page with a loaded image; every image has alt text."""
    r = report(doc)
    ids = set(r.data["ids"])
    missing = [name for name in figure_names(doc) if name not in ids]
    assert missing == []
    figures = {f["id"]: f for f in r.data["figures"]}
    without_image = [n for n in figure_names(doc) if n in figures and not figures[n]["hasImage"]]
    assert without_image == []
    broken = [i["src"][:80] for i in r.data["images"] if not i["loaded"]]
    assert broken == []
    no_alt = [i["src"][:80] for i in r.data["images"] if not (i["alt"] or "").strip()]
    assert no_alt == []


@pytest.mark.parametrize("doc", DOCS)
def test_solutions_collapsed_and_open_on_click(report, doc):
    """Each exercise solution starts hidden and shows its content when clicked."""
    r = report(doc)
    assert len(r.solutions) == r.data["solutions"]
    assert [s["label"] for s in r.solutions if not s["hidden_before"]] == []
    assert [s["label"] for s in r.solutions if not s["shown_after"]] == []


@pytest.mark.parametrize("doc", DOCS)
def test_explorers_are_drawn(report, doc):
    """Each explorer the catalog puts on the page is drawn, with inputs and a message."""
    r = report(doc)
    expected = sorted(e.build().title for e in EXPLORERS if e.doc == doc)
    shown = r.data["explorers"]
    assert sorted(x["title"] for x in shown) == expected
    for x in shown:
        assert x["ready"] and not x["error"], x
        assert x["width"] > 200 and x["height"] > 100, x
        assert x["inputs"] >= 1 and x["status"].strip(), x


@pytest.mark.parametrize("doc", [doc for doc in DOCS if axe_scans(doc)])
def test_no_serious_accessibility_violations(report, doc):
    """axe-core finds no serious or critical violation in the page's content."""
    assert report(doc).axe == []


def test_axe_scans_every_page_but_all_but_one_api_page():
    """One API page stands for the others (one autodoc template); every chapter is scanned."""
    scanned = [doc for doc in DOCS if axe_scans(doc)]
    assert [doc for doc in scanned if doc.startswith("book/api/")] == ["book/api/lab"]
    assert {"book/latency", "book/problems", "book/instructor"} <= set(scanned)


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every ``id`` and ``name`` in an HTML file."""
    parser = _Anchors()
    parser.feed(path.read_text(errors="replace"))
    return frozenset(parser.ids)


def test_internal_links_resolve(report, built_book):
    """Every link on every page to the site itself names a file that exists (and its anchor)."""
    html_dir = built_book.html_dir
    broken, checked = [], 0
    for doc in DOCS:
        r = report(doc)
        for link in r.data["links"]:
            if not link.startswith(r.site):
                continue
            checked += 1
            target, fragment = urldefrag(link)
            rel = unquote(urlsplit(target).path)[len(urlsplit(r.site).path) :]
            path = html_dir / (rel or "index.html")
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file():
                broken.append(f"{doc}: {link}")
            elif fragment and path.suffix == ".html" and unquote(fragment) not in anchors(path):
                broken.append(f"{doc}: {link} (no anchor)")
    assert checked >= 10 * len(DOCS), "too few links to the site were found to check"
    assert broken == []


def test_every_page_was_checked():
    """The parametrised tests covered every page of the table of contents."""
    assert DOCS[0] == "book/index"
    assert len(DOCS) == len(set(DOCS)) >= 2
    assert all((ROOT / f"{d}.md").is_file() for d in DOCS)


def notebook_docs() -> list[str]:
    """Pages that are notebooks (a jupytext/kernelspec header)."""
    return [d for d in DOCS if "kernelspec:" in (ROOT / f"{d}.md").read_text()[:600]]


@pytest.mark.parametrize("doc", notebook_docs())
def test_chapter_downloads_as_ipynb_and_launches(report, built_book, doc):
    """A notebook chapter offers a valid .ipynb download and a Binder launch link."""
    r = report(doc)
    ipynb = built_book.html_dir / "_sources" / f"{doc}.ipynb"
    assert ipynb.is_file()
    nb = json.loads(ipynb.read_text())
    assert nb["nbformat"] == 4 and nb["cells"]
    assert f"{r.site}_sources/{doc}.ipynb" in r.data["links"]
    binder = [u for u in r.data["links"] if u.startswith("https://mybinder.org/v2/")]
    assert binder and binder[0].endswith(f"urlpath=lab/tree/{doc}.md")


def test_search_finds_a_chapter(browser, site):
    """The search page loads its index itself (no other page does) and lists results."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{site}search.html?q=allreduce", wait_until="load")
        page.locator("#search-results li").first.wait_for(timeout=ACTION_TIMEOUT_MS)
        assert page.locator("#search-results li").count() > 0
    finally:
        context.close()


def test_explorer_draws_from_a_file(browser, built_book):
    """Opened as a file (file://), an explorer still loads its data and Vega when scrolled to."""
    entry = EXPLORERS[0]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((built_book.html_dir / f"{entry.doc}.html").as_uri(), wait_until="load")
        box = page.locator("div.lesson-explorer").first
        assert "lesson-explorer-ready" not in (box.get_attribute("class") or "")
        box.scroll_into_view_if_needed()
        box.and_(page.locator(".lesson-explorer-ready")).wait_for(timeout=ACTION_TIMEOUT_MS)
    finally:
        context.close()
    assert errors == []
