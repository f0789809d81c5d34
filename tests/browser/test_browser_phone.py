"""The site on a 390 px phone: readable explorer text, equations and tables that fit, rotation.

At 390 px (an iPhone 12-15 held upright, in CSS pixels):

- every explorer is drawn for the column, its text at no less than the
  figures' phone floor (``PHONE_TEXT_FLOOR_PX``), never scaled down whole,
  its message in its lines above the controls; the cluster explorer in the
  states a reader meets first, its list of problems and flags as page text;
- no display equation makes the page wider than the article: a long one
  scrolls sideways inside its own box (pydata-sphinx-theme's rule for
  ``div.math mjx-container``), which a keyboard can focus (MathJax's menu
  gives each equation ``tabindex="0"``) and whose edge shows there is more;
- no page is wider than the phone, no inline literal runs out of its box,
  and no table breaks a word over lines (it scrolls instead); every page
  says it is in English (``<html lang="en">``), which CSS hyphenation needs;
- turning the phone (a resize to 844 x 390 and back) draws every explorer
  again for the new width, in the state its controls were left in.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from build_site import toc_files
from probe import ACTION_TIMEOUT_MS, SPLIT_WORDS, WAIT_FOR_MATHJAX

from lesson_lib.explorers.catalog import EXPLORERS
from lesson_lib.explorers.cluster import _note_paragraphs, cluster_explorer
from lesson_lib.figures._style import PHONE_TEXT_FLOOR_PX

pytestmark = pytest.mark.slow

#: A phone held upright, and turned sideways.
UPRIGHT = {"width": 390, "height": 844}
SIDEWAYS = {"width": 844, "height": 390}

#: Each visible text of an explorer's SVG: its rendered size in CSS px (the
#: font size times the SVG's scale on the screen) and its text.
SVG_TEXT_SIZES = """(box) => {
  const out = [];
  box.querySelectorAll('svg text').forEach(t => {
    if (!t.textContent.trim() || !t.getClientRects().length) { return; }
    const m = t.getScreenCTM();
    out.push({size: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b),
              text: t.textContent.slice(0, 40)});
  });
  return out;
}"""

#: The page's width against the viewport's, and the chart's against its column.
WIDTHS = """(box) => ({
  page: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth,
  svg: box.querySelector('svg').getBoundingClientRect().width,
  column: box.querySelector('.lesson-explorer-chart').clientWidth,
  narrow: box.classList.contains('lesson-explorer-narrow'),
  scaled: box.classList.contains('lesson-explorer-scaled'),
  drawnFor: Number(box.dataset.drawnWidth || -1),
})"""


#: How an explorer is laid out on the page: the chart's scale on the screen
#: (1 unless it was scaled down whole), and the message's box, its text (as
#: the reader sees it, line breaks kept) and lines, against the controls'.
LAYOUT = """(box) => {
  const svg = box.querySelector('.lesson-explorer-chart svg');
  const status = box.querySelector('.lesson-explorer-status');
  const text = document.createRange();
  text.selectNodeContents(status);
  return {scale: svg.getBoundingClientRect().width / svg.width.baseVal.value,
          message: status.innerText,
          lines: new Set(Array.from(text.getClientRects()).map(r => Math.round(r.top))).size,
          above: status.getBoundingClientRect().bottom <=
                 box.querySelector('.vega-bindings').getBoundingClientRect().top + 0.5,
          scrolls: box.scrollWidth > box.clientWidth};
}"""


def check_phone_layout(page: Any, box: Any, message: str) -> None:
    """The explorer drawn for a phone: text at the floor or larger, not scaled, nothing scrolls.

    Its message is lesson_lib's, in its lines (as many at least as it has),
    between the chart and the controls.
    """
    texts = page.evaluate(SVG_TEXT_SIZES, box.element_handle())
    small = [t for t in texts if t["size"] < PHONE_TEXT_FLOOR_PX - 0.01]
    assert texts and small == [], small[:5]
    layout = page.evaluate(LAYOUT, box.element_handle())
    assert abs(layout["scale"] - 1) < 0.01 and not layout["scrolls"], layout
    assert layout["message"] == message, layout
    assert layout["above"] and layout["lines"] >= message.count("\n") + 1, layout


#: Every choice of the explorer's selects wider than its select shows it (the text less the
#: select's padding and about 20 px of arrow), measured in the select's own font.
CUT_CHOICES = """(box) => {
  const ctx = document.createElement('canvas').getContext('2d');
  return [...box.querySelectorAll('select')].flatMap(s => {
    const st = getComputedStyle(s);
    ctx.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
    const room = s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 20;
    return [...s.options].filter(o => ctx.measureText(o.text).width > room)
      .map(o => `${s.name}: ${o.text}`);
  });
}"""


def check_phone_choices(page: Any, box: Any) -> None:
    """Each choice of each select reads whole at 390 px: a closed select cannot wrap its text.

    The sizing explorer's card showed "84.93 GB usable (lesson: sold as 80 GB, 79.…", the
    decode explorer's context "1/64 of the model's longest (4,096 tok…".
    """
    assert page.evaluate(CUT_CHOICES, box.element_handle()) == []


def _open(
    browser: Any, site: str, doc: str, viewport: dict[str, int], **options: Any
) -> tuple[Any, Any]:
    context = browser.new_context(viewport=viewport, **options)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    page.goto(f"{site}{doc}.html", wait_until="load")
    return context, page


def _wait_drawn(page: Any, box: Any) -> None:
    """Until the explorer is drawn for its column's present width."""
    box.scroll_into_view_if_needed()  # it loads as it nears the viewport
    page.wait_for_function(
        """(b) => { const s = getComputedStyle(b);
             const room = e => e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
             return b.classList.contains('lesson-explorer-ready') &&
             Math.abs(Number(b.dataset.drawnWidth) - room(b)) < 1; }""",
        arg=box.element_handle(),
    )


#: States of the cluster explorer checked on the phone: the lesson's layout,
#: one GPU, the largest cluster (32 GPUs, TP 8 x PP 4), an MoE across nodes,
#: one EP group of 32 GPUs on 4 nodes, and a layout that cannot exist (its list of problems).
CLUSTER_STATES = [
    {},
    {"gpus_per_node": 1, "nodes": 1, "group": 1, "pp": 1},
    {"gpus_per_node": 8, "nodes": 4, "group": 8, "pp": 4},
    {"model": "qwen3_235b", "gpus_per_node": 8, "nodes": 2, "group": 16, "pp": 1},
    {"nodes": 4, "group": 32},
    {"model": "specimen", "gpus_per_node": 4, "nodes": 2},
    {"group": 3, "pp": 3},
]


def test_cluster_explorer_text_is_readable_on_a_phone(browser, site):
    """At 390 px no text of the cluster explorer is under PHONE_TEXT_FLOOR_PX, in seven states.

    Scaled down whole into the 340 px column, the chart (709 px with the
    longest line of its list) drew its smallest text ("idle", 8 px) at
    3.8 px; on a phone it is drawn again 320 px wide, its text at its own
    size, and what does not fit a GPU's square at 9 px is left out. The lesson's layout keeps its GPU
    labels (TP0 to TP3), EP 32 on 4 x 8 its ranks (0 to 31), and the problems and flags are
    listed as page text, one item each, as lesson_lib lists them.
    """
    explorer = cluster_explorer()
    context, page = _open(browser, site, "book/cluster", UPRIGHT)
    try:
        box = page.locator(f'div.lesson-explorer[aria-label="{explorer.title}"]')
        _wait_drawn(page, box)
        widths = page.evaluate(WIDTHS, box.element_handle())
        assert widths["page"] <= widths["viewport"], widths
        assert widths["narrow"] and not widths["scaled"], widths
        assert widths["svg"] <= widths["column"] + 0.5, widths
        state = explorer.defaults
        for change in CLUSTER_STATES:
            for name, value in change.items():
                if state[name] == value:
                    continue
                before = int(box.get_attribute("data-state-serial") or 0)
                box.locator(f'input[type="radio"][name="{name}"][value="{value}"]').check()
                page.wait_for_function(
                    "([el, n]) => Number(el.dataset.stateSerial || 0) > n",
                    arg=[box.element_handle(), before],
                )
                state[name] = value
            check_phone_layout(page, box, explorer.message_for(**state))
            texts = page.evaluate(SVG_TEXT_SIZES, box.element_handle())
            items = box.locator("ul.lesson-explorer-notes li").all_inner_texts()
            want = [" ".join(lines) for _, lines in _note_paragraphs(state)]
            assert items == want, state
            labels = {t["text"] for t in texts}
            if change == {}:
                assert {"TP0", "TP3"} <= {label[:3] for label in labels}, labels
            if change.get("group") == 32:  # squares too small for "EP17": each shows its rank, "17"
                assert {str(rank) for rank in range(32)} <= labels, labels
            widths = page.evaluate(WIDTHS, box.element_handle())
            assert widths["page"] <= widths["viewport"], (state, widths)
            assert widths["svg"] <= widths["column"] + 0.5, (state, widths)
    finally:
        context.close()


#: Each typeset display equation of the article: its box against the article's
#: text column, whether it scrolls inside its box, whether a keyboard can
#: focus that box, and whether its edges have the shadows that say it scrolls.
DISPLAY_MATH = """() => {
  const art = document.querySelector('article.bd-article');
  const a = art.getBoundingClientRect();
  const s = getComputedStyle(art);
  const left = a.left + parseFloat(s.paddingLeft), right = a.right - parseFloat(s.paddingRight);
  return Array.from(art.querySelectorAll('mjx-container[display="true"]')).map(m => {
    const r = m.getBoundingClientRect();
    return {tex: (m.closest('.math') || m).textContent.slice(0, 50),
            fits: r.left >= left - 1 && r.right <= right + 1,
            scrolls: m.scrollWidth > m.clientWidth + 1,
            overflow: getComputedStyle(m).overflowX,
            focusable: m.tabIndex >= 0, width: m.scrollWidth, column: right - left,
            cue: getComputedStyle(m).backgroundImage.includes('gradient')};
  });
}"""


def pages_with_display_math(html_dir) -> list[str]:
    """Pages whose built HTML holds a display equation (Sphinx's ``div.math``)."""
    found = []
    for doc in toc_files():
        if re.search(r'<div class="math[ "]', (html_dir / f"{doc}.html").read_text()):
            found.append(doc)
    return found


def test_no_display_equation_widens_the_page_on_a_phone(browser, site, built_book):
    """At 390 px every display equation fits the article or scrolls in its own focusable box.

    The latency chapter's t_token(N) equation (463 px of MathJax in a 358 px
    column) and the sizing and all-reduce chapters' byte counts (583 px) are
    wider than a phone's column; the theme makes each scroll inside its box.
    Were that rule lost (``overflow: visible``), the pages would be wider than
    the phone. Its edge shows a shadow where more of it is hidden (without,
    the equation looked cut off). S(N) (479 px on one line) is set on two.
    """
    docs = pages_with_display_math(built_book.html_dir)
    assert "book/latency" in docs
    context = browser.new_context(viewport=UPRIGHT)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    bad, seen, scrolling = [], 0, []
    try:
        for doc in docs:
            page.goto(f"{site}{doc}.html", wait_until="load")
            assert page.evaluate(WAIT_FOR_MATHJAX) == "typeset", doc
            page_width = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if page_width[0] > page_width[1]:
                bad.append(f"{doc}: the page is {page_width[0]} px wide in {page_width[1]}")
            for m in page.evaluate(DISPLAY_MATH):
                seen += 1
                if m["scrolls"]:
                    scrolling.append(f"{doc}: {m['tex']!r} {m['width']} px")
                if not m["fits"] or (m["scrolls"] and not (m["focusable"] and m["cue"])):
                    bad.append(f"{doc}: {m}")
    finally:
        context.close()
    assert seen >= 5
    assert bad == []
    # The long ones scroll (they are still wider than the column), not shrink.
    assert any(s.startswith("book/sizing: ") for s in scrolling), scrolling
    assert not any("S(N)" in s for s in scrolling), scrolling


#: A probe of the browser's hyphenation: a long English word in a box far
#: narrower than it, hyphens auto, no other way to break. With a dictionary the
#: word breaks over lines; without one it stays on one line and overflows.
HYPHENATES = """() => {
  const p = document.createElement('p');
  p.lang = 'en';
  p.style.cssText = 'width: 4em; hyphens: auto; overflow-wrap: normal; word-break: normal;' +
                    'position: absolute; visibility: hidden; font-size: 16px';
  p.textContent = 'characteristically';
  document.body.appendChild(p);
  const lines = p.getClientRects().length && Math.round(p.offsetHeight /
                parseFloat(getComputedStyle(p).lineHeight || 20));
  const wide = p.scrollWidth > p.clientWidth + 1;
  p.remove();
  return {lines: lines, overflows: wide};
}"""

#: The page's width against the viewport's, each inline literal outside a
#: table that runs out of its box (its exercise's or other admonition's, else
#: the article's text column), and each table caption that runs off the screen
#: (a caption is as wide as its table, which may scroll).
PAGE_FITS = """() => {
  const art = document.querySelector('article.bd-article');
  const s = getComputedStyle(art), a = art.getBoundingClientRect();
  const column = {left: a.left + parseFloat(s.paddingLeft), right: a.right - parseFloat(s.paddingRight)};
  const out = [];
  art.querySelectorAll('code.literal').forEach(code => {
    if (code.closest('table')) { return; }
    const adm = code.closest('.admonition');
    const box = adm ? adm.getBoundingClientRect() : column;
    if (Array.from(code.getClientRects()).some(r => r.right > box.right + 0.5 || r.left < box.left - 0.5)) {
      out.push(code.textContent.slice(0, 60));
    }
  });
  art.querySelectorAll('table caption').forEach(caption => {
    const text = document.createRange();
    text.selectNodeContents(caption);
    if (Array.from(text.getClientRects()).some(r => r.right > window.innerWidth)) {
      out.push('caption: ' + caption.textContent.slice(0, 40));
    }
  });
  art.querySelectorAll('div.cell_output pre').forEach(pre => {
    if (pre.scrollWidth > pre.clientWidth + 1) { out.push('output: ' + pre.textContent.slice(0, 40)); }
  });
  return {page: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth,
          literals: out};
}"""


def test_pages_fit_a_phone_and_tables_keep_their_words(browser, site, built_book):
    """At 390 px no page is wider than the phone, no literal or printed output leaves its box, and
    no table splits a word.

    The instructor page's file names (463 px), the API pages' signatures
    (up to 741 px) and the dotted names in the sizing, latency and algorithms
    exercises ran out of the page or their box. The measured chapter's table
    broke "GPUs" letter by letter to fit; a table keeps its words whole and
    scrolls in its own box instead. Every page is ``<html lang="en">``:
    ``hyphens: auto`` needs it and a dictionary, which Debian's Chromium
    here lacks (Chromium on Linux gets them from its component updater, off
    in a test: the probe word stays on one line); where the browser
    hyphenates, a split word is a hyphenated one, allowed.
    """
    for doc in toc_files():
        head = (built_book.html_dir / f"{doc}.html").read_text()[:400]
        assert re.search(r'<html[^>]* lang="en"', head), doc
    context = browser.new_context(viewport=UPRIGHT)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    wide, split, tables = [], [], 0
    try:
        page.goto(f"{site}{toc_files()[0]}.html", wait_until="load")
        hyphenates = page.evaluate(HYPHENATES)
        for doc in toc_files():
            page.goto(f"{site}{doc}.html", wait_until="load")
            fits = page.evaluate(PAGE_FITS)
            if fits["page"] > fits["viewport"] or fits["literals"]:
                wide.append(f"{doc}: {fits}")
            if "<table" in (built_book.html_dir / f"{doc}.html").read_text():
                tables += 1
                split += [f"{doc}: {word}" for word in page.evaluate(SPLIT_WORDS)]
    finally:
        context.close()
    print(f"hyphenation probe: {hyphenates}; split: {split}")
    assert wide == []
    assert tables > 10
    if hyphenates["lines"] > 1 and not hyphenates["overflows"]:
        return  # the browser hyphenates: a split word is a hyphenated one
    assert split == []


def _second_value(control: Any) -> Any:
    """A value of the control other than its default (the last one)."""
    return next(v for v in reversed(control.values) if v != control.default)


def _set(page: Any, box: Any, control: Any, value: Any) -> None:
    before = int(box.get_attribute("data-state-serial") or 0)
    if control.input == "radio":
        box.locator(f'input[type="radio"][name="{control.name}"][value="{value}"]').check()
    elif control.input == "select":
        box.locator(f'select[name="{control.name}"]').select_option(str(value))
    else:
        box.locator(f'input[type="range"][name="{control.name}"]').fill(str(value))
    page.wait_for_function(
        "([el, n]) => Number(el.dataset.stateSerial || 0) > n", arg=[box.element_handle(), before]
    )


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.builder.rpartition(":")[2])
def test_explorer_fits_the_phone_and_redraws_when_it_is_turned(browser, site, entry):
    """Drawn for 390 px, then 390 -> 844 px wide and back: each width's layout, the state kept.

    Upright the chart is drawn for the column (:func:`check_phone_layout`):
    in its first state and with its first control at another value (the
    ring stepper's eight ranks). Scaled down whole, the ring stepper and
    prefill explorers drew their text at about 5 px; each message lost its
    lines and sat under the controls. Sideways its column (about 790 px)
    holds the chart at its own width, so it is drawn wide again; upright
    once more it is narrow and fits. After each turn the message is
    lesson_lib's for the state the reader left, and nothing scrolls sideways.
    """
    explorer = entry.build()
    context, page = _open(browser, site, entry.doc, UPRIGHT)
    try:
        box = page.locator(f'div.lesson-explorer[aria-label="{explorer.title}"]')
        _wait_drawn(page, box)
        check_phone_layout(page, box, explorer.message_for())
        check_phone_choices(page, box)
        control = explorer.controls[0]
        value = _second_value(control)
        _set(page, box, control, value)
        state = {**explorer.defaults, control.name: value}
        check_phone_layout(page, box, explorer.message_for(**state))
        seen = []
        for viewport in (SIDEWAYS, UPRIGHT):
            page.set_viewport_size(viewport)
            _wait_drawn(page, box)
            widths = page.evaluate(WIDTHS, box.element_handle())
            seen.append(widths)
            assert widths["page"] <= widths["viewport"], (viewport, widths)
            assert widths["svg"] <= widths["column"] + 0.5, (viewport, widths)
            status = box.locator(".lesson-explorer-status").inner_text()
            assert status == explorer.message_for(**state), viewport
            checked = box.locator(f'[name="{control.name}"]:checked, select[name="{control.name}"]')
            if control.input == "radio":
                assert checked.first.get_attribute("value") == str(value)
        sideways, upright = seen
        assert sideways["drawnFor"] > 600 and not sideways["narrow"], sideways
        assert upright["drawnFor"] < 400 and upright["narrow"], upright
        check_phone_layout(page, box, explorer.message_for(**state))
    finally:
        context.close()


#: Each figure caption's text colour against the first opaque background behind it, as WCAG 2
#: contrast ratios (relative luminance of sRGB), and its font weight.
CAPTION_CONTRAST = """() => {
  const rgb = c => c.match(/[\\d.]+/g).map(Number);
  const lum = c => rgb(c).slice(0, 3).map(v => v / 255)
    .map(v => v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  return [...document.querySelectorAll('figcaption')].map(f => {
    let e = f, bg = 'rgba(0, 0, 0, 0)';
    while (e && (rgb(bg)[3] ?? 1) === 0) { bg = getComputedStyle(e).backgroundColor; e = e.parentElement; }
    if ((rgb(bg)[3] ?? 1) === 0) { bg = 'rgb(255, 255, 255)'; }
    const [a, b] = [lum(getComputedStyle(f).color), lum(bg)].sort((x, y) => y - x);
    return {ratio: (a + 0.05) / (b + 0.05), weight: Number(getComputedStyle(f).fontWeight),
            text: f.textContent.trim().slice(0, 30)};
  });
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_figure_captions_are_legible_on_a_phone(browser, site, scheme):
    """Every caption of the latency chapter at WCAG AA contrast (4.5:1) or more, at normal weight.

    The theme drew captions in its muted grey at a light weight, which read as faint on a phone.
    """
    context, page = _open(browser, site, "book/latency", UPRIGHT, color_scheme=scheme)
    try:
        captions = page.evaluate(CAPTION_CONTRAST)
    finally:
        context.close()
    assert len(captions) >= 3
    assert [c for c in captions if c["ratio"] < 4.5 or c["weight"] < 400] == []
