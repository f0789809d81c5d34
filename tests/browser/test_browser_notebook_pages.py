"""Every chapter read as a notebook in a real JupyterLab, as ``make lab`` and Binder show it.

JupyterLab starts on the chapters the way ``make lab`` writes them
(``lab_support.start_lab``): numbers filled in from each page's glue table,
cross-references as links, rendered by jupyterlab-myst. For every notebook
page of the table of contents the test runs all cells and then reads what a
reader sees: no raw MyST (``{glue``, ``{term}``, ``{ref}``, ``{numref}``, a
directive fence), no error output, and the page's own glued numbers in its
prose. One student-edition notebook is opened the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from build_site import ROOT, toc_files
from lab_support import close_chapter, open_chapter, run_all, start_lab

from lesson_lib.chapters.notebook import page_numbers

pytestmark = pytest.mark.slow

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


def test_raw_myst_pattern_can_fail():
    """The pattern finds each raw form and passes rendered text."""
    for raw in ("{glue:text}`x`", "{term}`TP`", "{ref}`latency`", "```{note}", ":::{dropdown}"):
        assert RAW_MYST.search(raw), raw
    assert not RAW_MYST.search("Four GPUs get 1.55x; see The latency assumption.")


def test_every_chapter_is_a_notebook_page():
    """The parametrisation is not empty, and holds the chapters with the most numbers."""
    assert {"book/latency", "book/kv_transfer", "book/lab"} <= set(PAGES)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium_path) -> Iterator[dict[str, Any]]:
    """JupyterLab as ``make lab`` starts it, on the chapters it writes."""
    with start_lab(tmp_path_factory.mktemp("notebook-pages")) as server:
        yield server


def check_reads_like_the_site(page, doc: str, values: list[str], errors: list[str]) -> None:
    """Run every cell of the open notebook and check what a reader sees."""
    state = run_all(page)
    assert state["errors"] == [], f"{doc}: cells raised {state['errors']}"
    page.wait_for_timeout(1000)  # jupyterlab-myst renders after the last cell
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
def test_chapter_reads_like_the_site(lab, browser, doc):
    """After Run All the page shows its numbers and terms, and no MyST markup or error."""
    context, page, errors = open_chapter(browser, lab, doc)
    try:
        check_reads_like_the_site(page, doc, glued_values(doc), errors)
    finally:
        close_chapter(context, page)


def test_student_edition_notebook_reads_like_the_site(lab, browser):
    """The student edition's latency notebook, written as an instructor hands it out, opened
    in the same JupyterLab: its numbers are in the text and it runs from top to bottom."""
    import nbformat

    from lesson_lib.coursework.student_edition import page_notebook

    folder = lab["root"] / "student"
    folder.mkdir(exist_ok=True)
    nbformat.write(page_notebook(ROOT / "book" / "latency.md"), folder / "latency.ipynb")
    context, page, errors = open_chapter(browser, lab, "student/latency", suffix=".ipynb")
    try:
        check_reads_like_the_site(page, "student/latency", glued_values("book/latency"), errors)
    finally:
        close_chapter(context, page)
