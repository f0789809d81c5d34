"""No table is silently clipped: at 1280 and 390 px every table fits or says it scrolls.

A table wider than the text column scrolls sideways inside its box; a reader
who does not know that misses columns. ``tools/site/tables.js`` puts a visible
cue above each table that does not fit. On every page, at a desktop and a
phone width, each table must either fit inside the article or sit in a box
that scrolls sideways, can take keyboard focus, and has the visible cue.
"""

from __future__ import annotations

import pytest
from build_site import toc_files
from probe import ACTION_TIMEOUT_MS, TABLES

pytestmark = pytest.mark.slow


def tables_neither_fitting_nor_cued(doc: str, tables: list[dict]) -> list[str]:
    """Tables of ``doc`` that neither fit nor scroll in a focusable box with a cue.

    ``tables`` is what ``probe.TABLES`` returned; each offender is one line
    naming the page and the table's measures.
    """
    bad = []
    for t in tables:
        if t["fits"] and not t["scrolls"]:
            continue
        if not (t["scrolls"] and t["focusable"] and t["cue"]):
            bad.append(f"{doc}: {t}")
    return bad


def test_tables_fit_or_scroll_with_a_cue_at_1280(report):
    """At a desktop width, from the site test's visit of each page (same viewport)."""
    bad, seen = [], 0
    for doc in toc_files():
        tables = report(doc).tables
        seen += len(tables)
        bad += tables_neither_fitting_nor_cued(doc, tables)
    assert seen > 0
    assert bad == []


def pages_with_tables(html_dir) -> list[str]:
    """Pages whose built HTML has a table (no script on the site makes one)."""
    return [doc for doc in toc_files() if "<table" in (html_dir / f"{doc}.html").read_text()]


def test_tables_fit_or_scroll_with_a_cue_at_390(browser, site, built_book):
    """At a phone width, each page that has a table."""
    docs = pages_with_tables(built_book.html_dir)
    assert "book/sizing" in docs and "book/glossary" not in docs
    context = browser.new_context(viewport={"width": 390, "height": 900})
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    bad, seen = [], 0
    try:
        for doc in docs:
            page.goto(f"{site}{doc}.html", wait_until="load")
            page.wait_for_load_state("networkidle")
            tables = page.evaluate(TABLES)
            seen += len(tables)
            bad += tables_neither_fitting_nor_cued(doc, tables)
    finally:
        context.close()
    assert seen > 0
    assert bad == []
