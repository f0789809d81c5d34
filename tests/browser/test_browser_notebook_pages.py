"""Every chapter read as a notebook in a real JupyterLab, as ``make lab`` and Binder show it.

JupyterLab starts on the chapters the way ``make lab`` writes them
(``lab_support.start_lab``): numbers filled in from each page's glue table,
cross-references as links, rendered by jupyterlab-myst. For every notebook
page of the table of contents the test runs all cells and then reads what a
reader sees: no raw MyST (``{glue``, ``{term}``, ``{ref}``, ``{numref}``, a
directive fence), no error output, and the page's own glued numbers in its
prose. On a chapter with live explorers it then moves every control of each
explorer, drawn by JupyterLab's own Vega-Lite renderer, and checks that the
message in the chart equals what ``lesson_lib`` gives for that state
(:meth:`Explorer.message_for`) and that the chart changed. One student-edition
notebook is opened the same way.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from build_site import ROOT, toc_files
from lab_support import LabPage, run_all, start_lab
from probe import ACTION_TIMEOUT_MS

from lesson_lib.chapters.notebook import page_numbers
from lesson_lib.explorers._base import Control, Explorer
from lesson_lib.explorers.catalog import EXPLORERS

pytestmark = pytest.mark.slow

#: Longest a page may take to render its markdown after Run All, seconds.
RENDER_WAIT_S = 30

#: What MyST looks like when nothing rendered it.
RAW_MYST = re.compile(r"\{(?:glue(?::\w+)?|term|ref|numref|doc|eval)\}`|```\{|:::\{")

#: The text of every rendered Markdown cell and every output of the open notebook.
VISIBLE_TEXT = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const parts = [];
  w.content.widgets.forEach(c => {
    if (c.model.type === 'markdown') {
      // the rendered text, collapsed dropdowns included; the source if it did not render
      const shown = c.node.querySelector('.jp-InputArea > .myst, .jp-MarkdownOutput');
      parts.push(shown ? shown.textContent : c.model.sharedModel.getSource());
    }
    else if (c.model.type === 'code') {
      const out = c.node.querySelector('.jp-OutputArea');
      parts.push(out ? out.innerText : '');
    }
  });
  return parts.join('\\n');
}"""


def notebook_pages() -> list[str]:
    """The table of contents' pages with code cells: the ones JupyterLab opens as notebooks."""
    pages = []
    for doc in toc_files(ROOT):
        path = ROOT / f"{doc}.md"
        if path.exists() and "{code-cell}" in path.read_text(encoding="utf-8"):
            pages.append(doc)
    return pages


PAGES = notebook_pages()
#: The chapters with a live explorer, and the explorers each shows.
EXPLORER_DOCS = list(dict.fromkeys(entry.doc for entry in EXPLORERS))


def other_value(control: Control) -> Any:
    """A value of ``control`` other than its default: the far end of its range."""
    far = control.values[-1]
    return control.values[0] if far == control.default else far


def test_other_value_can_fail():
    """The helper moves away from the default, to the far end."""
    assert other_value(Control("n", "N", (1, 2, 3), 1)) == 3
    assert other_value(Control("n", "N", (1, 2, 3), 3)) == 1


#: The message drawn in the chart, lines joined by spaces (as on the site).
MESSAGE_TEXT = """(out) => {
  const lines = [];
  out.querySelectorAll('g.message_marks text').forEach(t => {
    const spans = t.querySelectorAll('tspan');
    if (spans.length) { spans.forEach(s => lines.push(s.textContent)); }
    else { lines.push(t.textContent); }
  });
  return lines.join(' ');
}"""


def set_control(out: Any, control: Control, value: Any) -> None:
    """Set one bound input of a Vega-Lite output the way a reader would."""
    if control.input == "radio":
        out.locator(f'input[type="radio"][name="{control.name}"][value="{value}"]').check()
    elif control.input == "select":
        out.locator(f'select[name="{control.name}"]').select_option(str(value))
    else:
        out.locator(f'input[type="range"][name="{control.name}"]').fill(str(value))


def drive(page: Any, doc: str, explorer: Explorer) -> None:
    """Move every control of one explorer in JupyterLab and check the message."""
    out = (
        page.locator(".jp-Notebook:visible .jp-OutputArea-output")
        .filter(has=page.locator("g.message_marks"))
        .filter(has_text=explorer.title)
        .first
    )
    out.wait_for(state="visible", timeout=ACTION_TIMEOUT_MS)
    state = explorer.defaults

    def shown() -> str:
        return page.evaluate(MESSAGE_TEXT, out.element_handle())

    assert shown() == explorer.message_for(**state).replace("\n", " ")
    for control in explorer.controls:
        if len(control.values) < 2:
            continue
        value = other_value(control)
        before_text = shown()
        before_svg = out.locator("svg").first.inner_html()
        set_control(out, control, value)
        state[control.name] = value
        expected = explorer.message_for(**state).replace("\n", " ")
        deadline = time.monotonic() + 60
        while shown() != expected and time.monotonic() < deadline:
            time.sleep(0.1)
        assert shown() == expected, f"{doc}: {control.name} -> {value!r}"
        if expected != before_text:
            assert out.locator("svg").first.inner_html() != before_svg, control.name


def test_raw_myst_pattern_can_fail():
    """The pattern finds each raw form and passes rendered text."""
    for raw in ("{glue:text}`x`", "{term}`TP`", "{ref}`latency`", "```{note}", ":::{dropdown}"):
        assert RAW_MYST.search(raw), raw
    assert not RAW_MYST.search("Four GPUs get 1.55x; see The latency assumption.")


def test_every_chapter_is_a_notebook_page():
    """The parametrisation is not empty, and holds the chapters with the most numbers."""
    assert {"book/latency", "book/kv_transfer", "book/lab"} <= set(PAGES)
    assert "book/latency" in EXPLORER_DOCS and set(EXPLORER_DOCS) <= set(PAGES)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium_path) -> Iterator[dict[str, Any]]:
    """JupyterLab as ``make lab`` starts it, on the chapters it writes."""
    with start_lab(tmp_path_factory.mktemp("notebook-pages")) as server:
        yield server


@pytest.fixture(scope="module")
def lab_page(lab, browser) -> Iterator[LabPage]:
    """One JupyterLab page for every chapter: each test opens its chapter in it."""
    page = LabPage(browser, lab)
    yield page
    page.quit()


def check_reads_like_the_site(page, doc: str, values: list[str], errors: list[str]) -> None:
    """Run every cell of the open notebook and check what a reader sees."""
    state = run_all(page)
    assert state["errors"] == [], f"{doc}: cells raised {state['errors']}"
    # jupyterlab-myst renders markdown cells after the last cell has run, later on a busy
    # machine: read the page until no raw markup is left or RENDER_WAIT_S has passed
    deadline = time.monotonic() + RENDER_WAIT_S
    page.wait_for_timeout(500)
    shown = page.evaluate(VISIBLE_TEXT)
    while RAW_MYST.search(shown) and time.monotonic() < deadline:
        page.wait_for_timeout(500)
        shown = page.evaluate(VISIBLE_TEXT)
    raw = [shown[max(0, m.start() - 60) : m.end() + 60] for m in RAW_MYST.finditer(shown)]
    assert raw == [], f"{doc}: raw MyST on the page: {raw[:5]}"
    if values:
        missing = [v for v in values if v not in shown]
        assert len(missing) < len(values), f"{doc}: none of its glued numbers shows"
        assert missing == [], f"{doc}: glued numbers not shown: {missing[:5]}"
    assert errors == [], f"{doc}: page errors {errors}"


def glued_values(doc: str) -> list[str]:
    """The page's glued values that its prose shows and that are long enough to be telling."""
    text = (ROOT / f"{doc}.md").read_text(encoding="utf-8")
    values = page_numbers(doc.rpartition("/")[2])
    return [v for k, v in values.items() if f"`{k}`" in text and len(v) >= 5 and "\n" not in v]


@pytest.mark.parametrize("doc", PAGES)
def test_chapter_reads_like_the_site(lab_page, doc):
    """After Run All the page shows its numbers and terms, and no MyST markup or error;
    every control of its explorers, moved in JupyterLab, shows lesson_lib's numbers."""
    explorers = [entry.build() for entry in EXPLORERS if entry.doc == doc]
    page = lab_page.open(doc)
    try:
        check_reads_like_the_site(page, doc, glued_values(doc), lab_page.errors)
        for explorer in explorers:
            drive(page, doc, explorer)
        assert lab_page.errors == [], f"{doc}: page errors {lab_page.errors}"
    finally:
        lab_page.close()


def test_student_edition_notebook_reads_like_the_site(lab, lab_page):
    """The student edition's latency notebook, written as an instructor hands it out, opened
    in the same JupyterLab: its numbers are in the text and it runs from top to bottom."""
    import nbformat

    from lesson_lib.coursework.student_edition import page_notebook

    folder = lab["root"] / "student"
    folder.mkdir(exist_ok=True)
    nbformat.write(page_notebook(ROOT / "book" / "latency.md"), folder / "latency.ipynb")
    page = lab_page.open("student/latency", suffix=".ipynb")
    try:
        values = glued_values("book/latency")
        check_reads_like_the_site(page, "student/latency", values, lab_page.errors)
    finally:
        lab_page.close()
