"""No table is silently clipped: at 1280 and 390 px every table fits or says it scrolls.

A table wider than the text column scrolls sideways inside its box; a reader
who does not know that misses columns. ``tools/site/tables.js`` puts a visible
cue above each table that does not fit. On every page, at a desktop and a
phone width, each table must either fit inside the article or sit in a box
that scrolls sideways, can take keyboard focus, and has the visible cue.
"""

from __future__ import annotations

import re

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
    found = _every_page(browser, site, docs, 390)
    bad, seen = [], 0
    for doc in docs:
        tables = found[doc]["tables"]
        seen += len(tables)
        bad += tables_neither_fitting_nor_cued(doc, tables)
    assert seen > 0
    assert bad == []


def _channels(css: str) -> tuple[float, float, float]:
    """``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` as three 0..255 numbers."""
    numbers = [float(x) for x in re.findall(r"[\d.]+", css)[:3]]
    return numbers[0], numbers[1], numbers[2]


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two CSS colours: (L1 + 0.05) / (L2 + 0.05).

    Relative luminance is 0.2126 R + 0.7152 G + 0.0722 B of the linearised
    sRGB channels (c / 12.92 up to 0.04045, else ((c + 0.055) / 1.055)^2.4).
    """

    def luminance(css: str) -> float:
        lin = [
            c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
            for c in (v / 255 for v in _channels(css))
        ]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_contrast_ratio_by_hand():
    """Black on white is 21:1; #767676 on white 4.54:1, the lightest grey passing AA.

    #767676: 118/255 = 0.4627, ((0.4627 + 0.055) / 1.055)^2.4 = 0.1812, so
    (1 + 0.05) / (0.1812 + 0.05) = 4.54; #777777 (119) gives 4.48, failing.
    """
    assert contrast_ratio("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21)
    assert contrast_ratio("rgb(118, 118, 118)", "rgb(255, 255, 255)") == pytest.approx(
        4.54, abs=0.01
    )
    assert contrast_ratio("rgb(119, 119, 119)", "rgba(255, 255, 255, 1)") < 4.5


#: What each width's visit reads, in this order, after the page has loaded:
#: ``(key, script, theme)``. At 1280 px the tests read the site test's visit
#: of each page (the ``report`` fixture), which reads these tables too.
READINGS: dict[int, tuple[tuple[str, str, str], ...]] = {
    390: (("tables", TABLES, "light"),),
}

#: ``(width, doc)`` -> what :data:`READINGS` read there, one load per page and width.
_visits: dict[tuple[int, str], dict[str, list[dict]]] = {}


def _every_page(browser, site, docs, width: int) -> dict[str, dict[str, list[dict]]]:
    """:data:`READINGS` of ``width`` on each page of ``docs``, each page loaded once per run.

    A page a test of this module already loaded at ``width`` is not loaded again.
    """
    missing = [doc for doc in docs if (width, doc) not in _visits]
    if missing:
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        page = context.new_page()
        try:
            for doc in missing:
                page.goto(f"{site}{doc}.html", wait_until="load")
                page.wait_for_load_state("networkidle")
                read = {}
                for key, script, theme in READINGS[width]:
                    if theme != "light":
                        page.evaluate(
                            f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}"
                        )
                    read[key] = page.evaluate(script)
                _visits[width, doc] = read
        finally:
            context.close()
    return {doc: _visits[width, doc] for doc in docs}


def test_no_table_is_wider_than_the_article_at_1280(report, built_book):
    """At 1280 px every table, and its box, fits the article's width.

    The seven-column tables of the latency and measured chapters were 719 and
    899 px in a 688 px column; tools/site/tables.css wraps their cells, so none
    scrolls sideways. On a phone a table keeps its words whole and may scroll
    in its box, with the cue (test_browser_phone.py checks the words).
    """
    docs = pages_with_tables(built_book.html_dir)
    found = {doc: report(doc).table_widths for doc in docs}
    assert sum(len(t) for t in found.values()) > 10
    wide = [
        f"{doc}: {t}"
        for doc, tables in found.items()
        for t in tables
        if max(t["table"], t["box"]) > t["inner"] + 1
    ]
    assert wide == []


def test_no_table_breaks_a_word_at_1280(report, built_book):
    """At 1280 px a table wraps its cells at spaces: the experts chapter's headers and
    cells broke "collecti/ve" and "weig/hts" when wide tables' cells could break anywhere."""
    docs = pages_with_tables(built_book.html_dir)
    split = [f"{doc}: {word}" for doc in docs for word in report(doc).split_words]
    assert split == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_captions_meet_wcag_aa_contrast(report, theme):
    """Every figure and table caption is at least 4.5:1 against its background."""
    found = {doc: report(doc).captions[theme] for doc in toc_files()}
    captions = [(doc, c) for doc, cs in found.items() for c in cs]
    assert len(captions) > 15
    low = [
        f"{doc}: {c['text']!r} {c['color']} on {c['background']} = "
        f"{contrast_ratio(c['color'], c['background']):.2f}"
        for doc, c in captions
        if contrast_ratio(c["color"], c["background"]) < 4.5
    ]
    assert low == []
