"""The live explorers in a real JupyterLab, driven by Chromium.

JupyterLab is started on the chapters the way ``make lab`` starts it
(``tools/lab.py``: the chapters written with their numbers filled in,
project-local settings that open ``.md`` files as notebooks, nothing from the
user's home; ``lab_support.py``). For each chapter with an explorer
(:data:`lesson_lib.explorers.catalog.EXPLORERS`) the test opens the ``.md``
file (it must open as a notebook), runs all cells, finds the explorer drawn
by JupyterLab's own Vega-Lite renderer, moves every control to another value
and checks that the message in the chart equals what ``lesson_lib`` gives
for that state (:meth:`Explorer.message_for`) and that the chart changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from ci import cannot_run
from lab_support import close_chapter, open_chapter, run_all, start_lab
from probe import ACTION_TIMEOUT_MS

from lesson_lib.explorers._base import Control, Explorer
from lesson_lib.explorers.catalog import EXPLORERS

pytestmark = pytest.mark.slow


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


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium_path) -> Iterator[dict[str, Any]]:
    """JupyterLab as ``make lab`` starts it, on the chapters it writes."""
    with start_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server


DOCS = list(dict.fromkeys(entry.doc for entry in EXPLORERS))


def test_some_chapter_has_an_explorer():
    """The parametrisation below is not empty (an empty one would skip silently)."""
    if not DOCS:
        cannot_run("no chapter of the toc has a live explorer")
    assert "book/latency" in DOCS


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


@pytest.mark.parametrize("doc", DOCS)
def test_explorers_in_jupyterlab(lab, browser, doc):
    """In JupyterLab, every control of the chapter's explorers shows lesson_lib's numbers."""
    explorers = [entry.build() for entry in EXPLORERS if entry.doc == doc]
    context, page, errors = open_chapter(browser, lab, doc)
    try:
        state = run_all(page)
        assert state["errors"] == [], f"cells raised: {state['errors']}"
        for explorer in explorers:
            drive(page, doc, explorer)
        assert errors == []
    finally:
        close_chapter(context, page)
