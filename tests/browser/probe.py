"""Visit one page of the built site in Chromium and record what a reader gets.

:func:`visit` loads the page once (network off: only 127.0.0.1 answers),
waits for MathJax and the explorers, and returns a :class:`PageReport`
with console errors, failed requests, math, figures, explorers, solutions,
links and the axe-core violations of the page's content. Tests assert on it.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

#: Inline scripts the page runs after load to wait for its renderers.
WAIT_FOR_MATHJAX = """async () => {
  const mj = window.MathJax;
  if (!document.querySelector('.math')) { return 'no math'; }
  // rendered when the site was built (lesson_site.static_math)
  if (!document.querySelector('.math:not(:has(mjx-container))')) { return 'typeset'; }
  for (let i = 0; i < 200 && !(window.MathJax && window.MathJax.startup
       && window.MathJax.startup.promise); i++) {
    await new Promise(r => setTimeout(r, 50));
  }
  if (!(window.MathJax && window.MathJax.startup)) { return 'MathJax did not load'; }
  await window.MathJax.startup.promise;
  return 'typeset';
}"""

#: Explorers and images load as they near the viewport: scroll each explorer
#: into view until it is drawn, load every image now, and go back to the top.
WAIT_FOR_EXPLORERS = """async () => {
  document.querySelectorAll('img[loading="lazy"]').forEach(img => { img.loading = 'eager'; });
  const boxes = Array.from(document.querySelectorAll('div.lesson-explorer'));
  const done = b => b.classList.contains('lesson-explorer-ready')
    || b.querySelector('.lesson-explorer-error');
  for (const b of boxes) {
    b.scrollIntoView();
    for (let i = 0; i < 600 && !done(b); i++) { await new Promise(r => setTimeout(r, 50)); }
  }
  window.scrollTo(0, 0);
  return boxes.length;
}"""

COLLECT = r"""() => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const visible = el => !!(el && el.getClientRects().length) &&
    getComputedStyle(el).visibility !== 'hidden';
  // --- math
  const maths = Array.from(article.querySelectorAll('.math'));
  const untypeset = maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80));
  // text outside code, scripts and typeset math, to look for raw TeX
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {
    acceptNode: n => n.parentElement.closest('pre, code, script, style, mjx-container, .highlight, textarea')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  let text = '';
  while (walker.nextNode()) { text += walker.currentNode.textContent; }
  // --- figures: every <img> in the content, and every figure with an id
  const images = Array.from(article.querySelectorAll('img')).map(img => ({
    src: img.getAttribute('src') || '', alt: img.getAttribute('alt'),
    loaded: img.complete && img.naturalWidth > 0,
  }));
  const figures = Array.from(article.querySelectorAll('figure')).map(f => ({
    id: f.id || (f.querySelector('[id]') || {}).id || '',
    hasImage: !!f.querySelector('img, svg'),
    caption: (f.querySelector('figcaption') || {textContent: ''}).textContent.trim(),
  }));
  const ids = Array.from(document.querySelectorAll('[id]')).map(e => e.id);
  // --- explorers
  const explorers = Array.from(document.querySelectorAll('div.lesson-explorer')).map(b => {
    const svg = b.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    return {title: b.getAttribute('aria-label'), ready: b.classList.contains('lesson-explorer-ready'),
            error: (b.querySelector('.lesson-explorer-error') || {textContent: ''}).textContent,
            width: box.width, height: box.height,
            inputs: b.querySelectorAll('.vega-bindings input, .vega-bindings select').length,
            status: (b.querySelector('.lesson-explorer-status') || {textContent: ''}).textContent};
  });
  // --- links (whole page: navigation too)
  const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
  return {title: document.title, untypeset, mathCount: maths.length, text, images, figures, ids,
          explorers, links,
          solutions: document.querySelectorAll('.solution').length};
}"""


#: Per-action limit: generous, so a busy machine slows the tests down instead of failing them.
ACTION_TIMEOUT_MS = 180_000

#: The one API page axe scans. Every API page is the same autodoc markup in the same theme, and
#: the two largest take axe 7 s each on a quiet machine even without the contrast rule (measured
#: in Debian's Chromium), a minute of a loaded run's ten for the six; the others are not scanned.
AXE_API_PAGE = "book/api/lab"


def axe_scans(doc: str) -> bool:
    """Whether the site test runs axe-core on ``doc``: every page but the API pages other than
    :data:`AXE_API_PAGE`."""
    return not doc.startswith("book/api/") or doc == AXE_API_PAGE


#: A screenshot covers at most this many screens from the top of the page: what a
#: reader sees first, and a bounded amount of work however long the page is.
SCREENS = 4


def screenshot(page: Any, path: Path) -> None:
    """Save the top :data:`SCREENS` viewport heights of the page (less if it is shorter).

    Parameters
    ----------
    page : playwright.sync_api.Page
        The loaded page.
    path : pathlib.Path
        Where the PNG goes.
    """
    viewport = page.viewport_size
    height = page.evaluate("() => document.documentElement.scrollHeight")
    clip = {
        "x": 0,
        "y": 0,
        "width": viewport["width"],
        "height": min(height, SCREENS * viewport["height"]),
    }
    page.screenshot(
        path=str(path), full_page=True, clip=clip, animations="disabled", timeout=ACTION_TIMEOUT_MS
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Every table of the article: whether it fits the article, or sits in a box
#: that scrolls sideways, takes keyboard focus and has the visible cue above.
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

#: The body text sizes of the article, and each figure image's natural,
#: shown and available (column) widths.
FIGURE_TEXT = """() => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const inner = el => {
    const s = getComputedStyle(el);
    return el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  };
  const visible = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const sizes = Array.from(article.querySelectorAll('p, li, td, th, figcaption'))
    .filter(el => visible(el) && el.textContent.trim())
    .map(el => ({tag: el.tagName, size: parseFloat(getComputedStyle(el).fontSize),
                 text: el.textContent.trim().slice(0, 40)}));
  const images = Array.from(article.querySelectorAll('figure img'))
    .filter(img => img.complete && img.naturalWidth > 0)
    .map(img => ({src: img.getAttribute('src').split('/').pop().slice(0, 12),
                  natural: img.naturalWidth, shown: img.clientWidth,
                  column: inner(img.closest('figure'))}));
  return {sizes, images};
}"""


@dataclass
class PageReport:
    """What one page showed in the browser.

    Attributes
    ----------
    doc : str
        The page's docname, e.g. ``book/sizing``.
    url : str
        Where it was loaded from.
    console_errors : list of str
        Console messages of type error, and uncaught page errors.
    failed_requests : list of str
        Requests that failed, answered >= 400, or left 127.0.0.1.
    data : dict
        What :data:`COLLECT` returned.
    solutions : list of dict
        Per solution: hidden before the click, shown after.
    axe : list of dict
        axe-core violations of impact serious or critical in the content.
    screenshot : pathlib.Path or None
        The full-page screenshot.
    tables : list of dict
        What :data:`TABLES` returned at the 1280 px viewport.
    figure_text : dict
        What :data:`FIGURE_TEXT` returned at the 1280 px viewport.
    table_widths : list of dict
        What :data:`TABLE_WIDTHS` returned at the 1280 px viewport.
    split_words : list of str
        What :data:`SPLIT_WORDS` returned at the 1280 px viewport.
    captions : dict
        What :data:`CAPTION_COLOURS` returned at the 1280 px viewport, by theme
        (``light``, ``dark``).
    """

    doc: str
    url: str
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    solutions: list[dict[str, Any]] = field(default_factory=list)
    axe: list[dict[str, Any]] = field(default_factory=list)
    screenshot: Path | None = None
    tables: list[dict[str, Any]] = field(default_factory=list)
    figure_text: dict[str, Any] = field(default_factory=dict)
    table_widths: list[dict[str, Any]] = field(default_factory=list)
    split_words: list[str] = field(default_factory=list)
    captions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def site(self) -> str:
        """The site root the page was loaded from, ending in ``/``.

        Links in :attr:`data` start with it. Under pytest-xdist a report may
        come from another worker's server (another port), so tests compare
        links with this, not with their own ``site`` fixture.
        """
        return self.url.removesuffix(f"{self.doc}.html")


#: A $...$ pair or \( \[ left in prose means MathJax did not run on it.
RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|\$[^\s$][^$\n]{0,200}?[^\s$\\]\$")


def raw_tex(text: str) -> list[str]:
    """Return snippets of ``text`` that look like untypeset TeX.

    Parameters
    ----------
    text : str
        Page text outside code blocks and typeset math.

    Returns
    -------
    list of str
        Up to five matches with a little context.
    """
    hits = []
    for m in RAW_TEX.finditer(text):
        hits.append(text[max(0, m.start() - 30) : m.end() + 30])
        if len(hits) == 5:
            break
    return hits


def _check_solutions(page: Any) -> list[dict[str, Any]]:
    """Click every exercise solution open; report hidden-before / shown-after."""
    results = []
    solutions = page.locator(".solution")
    for i in range(solutions.count()):
        sol = solutions.nth(i)
        body = sol.locator(":scope > :not(.admonition-title)").first
        title = sol.locator(":scope > .admonition-title").first
        hidden_before = body.count() > 0 and not body.is_visible()
        label = title.inner_text().strip().splitlines()[0] if title.count() else f"#{i}"
        shown_after = False
        # Readers click the "Click to show" toggle; the title's middle is often
        # the link back to the exercise, which navigates instead.
        button = sol.locator(":scope > .admonition-title button.toggle-button").first
        target = button if button.count() else title
        if title.count():
            target.scroll_into_view_if_needed()
            target.click()
            try:
                body.wait_for(state="visible", timeout=30000)
                shown_after = True
            except PlaywrightTimeout:
                shown_after = False
        results.append({"label": label, "hidden_before": hidden_before, "shown_after": shown_after})
    return results


def visit(browser: Any, base_url: str, doc: str, axe_js: Path, shots: Path | None) -> PageReport:
    """Load ``doc`` from the local site and record everything the tests check.

    Parameters
    ----------
    browser : playwright.sync_api.Browser
        The session's Chromium.
    base_url : str
        Site root, ending in ``/``.
    doc : str
        Docname from ``_toc.yml``.
    axe_js : pathlib.Path
        axe-core's ``axe.min.js``.
    shots : pathlib.Path or None
        Folder for the screenshot (None: none is taken).

    Returns
    -------
    PageReport
        The record.
    """
    url = f"{base_url}{doc}.html"
    report = PageReport(doc=doc, url=url)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()

    def on_console(msg: Any) -> None:
        if msg.type == "error":
            where = msg.location.get("url", "") if msg.location else ""
            report.console_errors.append(f"{msg.text} ({where})")

    def on_response(resp: Any) -> None:
        if resp.status >= 400:
            report.failed_requests.append(f"{resp.status} {resp.url}")

    def on_route(route: Any) -> None:
        if route.request.url.startswith(base_url) or route.request.url.startswith(
            ("data:", "blob:")
        ):
            route.continue_()
        else:
            report.failed_requests.append(f"left the site: {route.request.url}")
            route.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda exc: report.console_errors.append(f"uncaught: {exc}"))
    page.on("requestfailed", lambda r: report.failed_requests.append(f"{r.failure} {r.url}"))
    page.on("response", on_response)
    page.route("**/*", on_route)
    try:
        page.goto(url, wait_until="load", timeout=ACTION_TIMEOUT_MS)
        page.evaluate(WAIT_FOR_MATHJAX)
        page.evaluate(WAIT_FOR_EXPLORERS)
        page.wait_for_load_state("networkidle", timeout=ACTION_TIMEOUT_MS)
        report.data = page.evaluate(COLLECT)
        # measured before the solutions are opened, which changes the layout
        report.tables = page.evaluate(TABLES)
        report.figure_text = page.evaluate(FIGURE_TEXT)
        report.table_widths = page.evaluate(TABLE_WIDTHS)
        report.split_words = page.evaluate(SPLIT_WORDS)
        report.captions["light"] = page.evaluate(CAPTION_COLOURS)
        if shots is not None:
            report.screenshot = shots / (doc.replace("/", "__") + ".png")
            screenshot(page, report.screenshot)
        if axe_scans(doc):
            page.add_script_tag(path=str(axe_js))
            report.axe = page.evaluate(
                """async () => {
                  const r = await axe.run(document.querySelector('article.bd-article') || document,
                                          {resultTypes: ['violations']});
                  return r.violations.filter(v => ['serious', 'critical'].includes(v.impact))
                    .map(v => ({id: v.id, impact: v.impact, help: v.help,
                                nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
                }"""
            )
        report.solutions = _check_solutions(page)
        # last: the dark theme, as a reader's toggle sets it (colours do not follow layout)
        page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
        report.captions["dark"] = page.evaluate(CAPTION_COLOURS)
    finally:
        context.close()
    return report


#: Each table of the article against the article's text width (its content
#: box): the table's own scrollWidth and its wrapper's, in CSS px.
TABLE_WIDTHS = """() => {
  const art = document.querySelector('article.bd-article');
  const s = getComputedStyle(art);
  const inner = art.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  return Array.from(art.querySelectorAll('table')).map(t => ({
    head: t.innerText.slice(0, 40).replace(/\\s+/g, ' '),
    table: t.scrollWidth, box: t.parentElement.scrollWidth, inner: inner,
  }));
}"""

#: The text colour of every figure and table caption and the first opaque
#: background behind it, as the browser computes them.
CAPTION_COLOURS = """() => Array.from(document.querySelectorAll(
    'article figcaption, article table caption')).map(c => {
  const text = c.querySelector('.caption-text') || c;
  let bg = 'rgba(0, 0, 0, 0)';
  for (let e = c; e && /rgba\\(.*, 0\\)|transparent/.test(bg); e = e.parentElement) {
    bg = getComputedStyle(e).backgroundColor;
  }
  if (/rgba\\(.*, 0\\)|transparent/.test(bg)) { bg = getComputedStyle(document.body).backgroundColor; }
  return {text: c.innerText.slice(0, 40), color: getComputedStyle(text).color, background: bg};
})"""


#: Each word (letters only, 4 or more) of a table cell, outside code and
#: math, that the browser drew over more than one line ("G P U s").
SPLIT_WORDS = """() => Array.from(document.querySelectorAll('article table')).flatMap(table => {
  const out = [];
  table.querySelectorAll('td, th').forEach(cell => {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT, {
      acceptNode: n => n.parentElement.closest('code, mjx-container')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
    while (walker.nextNode()) {
      const node = walker.currentNode;
      for (const m of node.textContent.matchAll(/[A-Za-z]{4,}/g)) {
        const r = document.createRange();
        r.setStart(node, m.index);
        r.setEnd(node, m.index + m[0].length);
        const tops = new Set(Array.from(r.getClientRects()).map(q => Math.round(q.top)));
        if (tops.size > 1) { out.push(table.innerText.slice(0, 20) + ': ' + m[0]); }
      }
    }
  });
  return out;
})"""
