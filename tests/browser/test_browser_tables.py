"""No table is silently clipped: at 1280 and 390 px every table fits or says it scrolls.

A table wider than the text column scrolls sideways inside its box; a reader
who does not know that misses columns. ``tools/site/tables.js`` puts a visible
cue above each table that does not fit. On every page, at a desktop and a
phone width, each table must either fit inside the article or sit in a box
that scrolls sideways, can take keyboard focus, and has the visible cue.
"""

from __future__ import annotations

import pytest
from probe import ACTION_TIMEOUT_MS

from lesson_lib.site import toc_files

pytestmark = pytest.mark.slow

TABLES = """() => {
  const article = document.querySelector('article').getBoundingClientRect();
  return Array.from(document.querySelectorAll('article table')).map(t => {
    let box = null;
    for (let el = t.parentElement; el && el.tagName !== 'ARTICLE'; el = el.parentElement) {
      const o = getComputedStyle(el).overflowX;
      if (o === 'auto' || o === 'scroll') { box = el; break; }
    }
    const r = t.getBoundingClientRect();
    const hint = box && box.previousElementSibling;
    return {
      head: t.innerText.slice(0, 50),
      fits: r.left >= article.left - 1 && r.right <= article.right + 1,
      scrolls: !!box && box.scrollWidth > box.clientWidth + 1,
      focusable: !!box && box.tabIndex >= 0,
      cue: !!hint && hint.classList.contains('lesson-scroll-hint') && hint.offsetHeight > 0,
    };
  });
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_tables_fit_or_scroll_with_a_cue(browser, site, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    bad, seen = [], 0
    try:
        for doc in toc_files():
            page.goto(f"{site}{doc}.html", wait_until="load")
            page.wait_for_load_state("networkidle")
            for t in page.evaluate(TABLES):
                seen += 1
                if t["fits"] and not t["scrolls"]:
                    continue
                if not (t["scrolls"] and t["focusable"] and t["cue"]):
                    bad.append(f"{doc}: {t}")
    finally:
        context.close()
    assert seen > 0
    assert bad == []
