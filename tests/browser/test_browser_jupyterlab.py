"""The widgets in a real JupyterLab, driven by Chromium.

JupyterLab is started on a copy of the chapters the way ``make lab`` starts
it (``tools/lab.py``: project-local settings that open ``.md`` files as
notebooks, nothing from the user's home). For each chapter whose widgets have sliders, the test opens
the ``.md`` file (it must open as a notebook), runs all cells, moves one
slider of each kind in each widget with the keyboard, and checks that the
message and the picture change and equal what ``lesson_lib`` gives for the
new value: the same widget is built in this process and its control set to
the same value; the message text must match and the PNG be byte-identical.
"""

from __future__ import annotations

import ast
import base64
import html
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import ipywidgets as widgets
import pytest
from ci import cannot_run
from probe import ACTION_TIMEOUT_MS, free_port

from lesson_lib.site import ROOT, cell_value, toc_files, widget_cells
from lesson_lib.widgets._base import LessonWidget

pytestmark = pytest.mark.slow

#: Slider classes a reader drags, and the key that moves each one step.
SLIDERS = (widgets.IntSlider, widgets.FloatSlider, widgets.SelectionSlider)


def slider_moves(widget: LessonWidget) -> list[tuple[int, str, Any, str]]:
    """One slider of each kind in a widget, and where one key press takes it.

    Parameters
    ----------
    widget : LessonWidget
        The widget built in this process.

    Returns
    -------
    list of (int, str, object, str)
        Position among the widget's sliders, control name, value after the
        move, and the key (``ArrowRight``, or ``ArrowLeft`` at the top end).
    """
    moves = []
    kinds: set[type] = set()
    position = 0
    for name, control in widget.controls.items():
        if not isinstance(control, SLIDERS):
            continue
        if type(control) not in kinds:
            kinds.add(type(control))
            if isinstance(control, widgets.SelectionSlider):
                index = control.index
                up = index + 1 < len(control.options)
                new = control.options[index + 1 if up else index - 1]
                new = new[1] if isinstance(new, tuple) else new
            else:
                up = control.value + control.step <= control.max
                new = control.value + (control.step if up else -control.step)
            moves.append((position, name, new, "ArrowRight" if up else "ArrowLeft"))
        position += 1
    return moves


def has_slider(source: str) -> bool:
    """Whether a widget cell's builder module makes a slider (read, not run).

    Parameters
    ----------
    source : str
        The cell's code, importing its builder from ``lesson_lib.widgets.<x>``.

    Returns
    -------
    bool
        True if ``lesson_lib/widgets/<x>.py`` creates any ``...Slider(``.
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "lesson_lib.widgets"
        ):
            path = ROOT / (node.module.replace(".", "/") + ".py")
            if path.is_file() and re.search(r"\w*Slider\(", path.read_text()):
                return True
    return False


def chapters_with_sliders() -> list[str]:
    """Chapters of the toc with a widget cell whose widget has a slider."""
    return [doc for doc in toc_files() if any(has_slider(src) for _, src in widget_cells(doc))]


#: Tags whose boundaries separate words in the rendered text.
BLOCKS = {"p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3", "h4"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(markup: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed."""
    parser = _Text()
    parser.feed(markup)
    return squash("".join(parser.parts))


def squash(text: str) -> str:
    """Collapse runs of whitespace (including no-break spaces) to one space."""
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG header."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_twin_helpers_can_fail():
    """The helpers find slider moves, flip at the top end and strip markup."""
    w = LessonWidget(
        [widgets.IntSlider(value=5, min=0, max=5, step=1), widgets.Dropdown(options=[1, 2])],
        lambda n, d: (f"<p><b>n</b> = {n}&nbsp;x</p><p>next</p>", None),
        ["n", "d"],
        alt="nothing",
    )
    assert slider_moves(w) == [(0, "n", 4, "ArrowLeft")]
    assert html_text(w.message.value) == "n = 5 x next"
    assert cell_value("x = 2\nx + 1") == 3
    assert has_slider("from lesson_lib.widgets.sizing import sizing_widget\nsizing_widget()")
    assert not has_slider("from lesson_lib.widgets._validate_missing import f\nf()")


# --------------------------------------------------------------------------- JupyterLab


def _lab_tool():
    """``tools/lab.py``, the launcher behind ``make lab``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lesson_lab_tool", ROOT / "tools" / "lab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium_path) -> Iterator[dict[str, Any]]:
    """JupyterLab as ``make lab`` starts it (tools/lab.py), on a copy of book/.

    The launcher's project-local settings make ``.md`` open as notebooks; its
    state folder and HOME are in a scratch directory, so the test shows that
    nothing from the user's home is needed.
    """
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "root"
    shutil.copytree(ROOT / "book", root / "book")
    tool = _lab_tool()
    env = tool.lab_env(tmp / "state", {**os.environ, "HOME": str(tmp / "home")})
    overrides = tmp / "state" / "config" / "labconfig" / "default_setting_overrides.json"
    settings = json.loads(overrides.read_text())
    # every cell in the DOM, so the test can find the widget cells
    settings["@jupyterlab/notebook-extension:tracker"] = {"windowingMode": "none"}
    overrides.write_text(json.dumps(settings))
    port, token = free_port(), "lessontoken"
    log = (tmp / "lab.log").open("w")
    proc = subprocess.Popen(
        tool.command(
            [
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={port}",
                f"--ServerApp.token={token}",
                "--LabApp.expose_app_in_browser=True",
                f"--ServerApp.root_dir={root}",
            ]
        ),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start:\n{(tmp / 'lab.log').read_text()}")
                time.sleep(0.3)
        yield {"base": base, "token": token, "log": tmp / "lab.log"}
    finally:
        # the whole process group: the server and every kernel it started
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except ProcessLookupError:
            proc.wait()
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


KERNEL_STATE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.connectionStatus + '/' + k.status : 'none';
}"""

CELLS_STATE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const code = w.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  code.forEach((c, i) => {
    for (let j = 0; j < c.model.outputs.length; j++) {
      const o = c.model.outputs.get(j);
      if (o.type === 'error') { errors.push(o.toJSON().ename + ': ' + o.toJSON().evalue); }
    }
  });
  return {total: code.length, done: code.filter(c => c.model.executionCount !== null).length,
          errors};
}"""

IMAGE_BYTES = """async (img) => {
  const r = await fetch(img.src);
  const b = new Uint8Array(await r.arrayBuffer());
  let s = '';
  for (let i = 0; i < b.length; i++) { s += String.fromCharCode(b[i]); }
  return btoa(s);
}"""


def wait_for(page: Any, script: str, ok: Any, timeout: float, what: str) -> Any:
    """Poll ``script`` in the page until ``ok(result)``; fail with ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        result = page.evaluate(script)
        if ok(result):
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; last state {result!r}", pytrace=False)
        time.sleep(0.25)


def run_all(page: Any) -> dict[str, Any]:
    """Run every cell of the open notebook and wait until all have run."""
    wait_for(page, KERNEL_STATE, lambda s: s == "connected/idle", 180, "an idle kernel")
    for _attempt in range(3):
        # fire and forget: awaiting the command's promise can hang evaluate()
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and page.evaluate(CELLS_STATE)["done"] == 0:
            time.sleep(0.25)
        if page.evaluate(CELLS_STATE)["done"] > 0:
            break
    state = wait_for(
        page,
        CELLS_STATE,
        lambda s: s["errors"] or s["done"] == s["total"],
        600,
        "all cells to run",
    )
    wait_for(page, KERNEL_STATE, lambda s: s == "connected/idle", 180, "the kernel to finish")
    return state


CHAPTERS = chapters_with_sliders()


def test_some_chapter_has_a_slider_widget():
    """The parametrisation below is not empty (an empty one would skip silently)."""
    if not CHAPTERS:
        cannot_run("no chapter of the toc has a lesson widget with a slider")
    assert "book/latency" in CHAPTERS


@pytest.mark.parametrize("doc", CHAPTERS)
def test_widget_sliders_in_jupyterlab(lab, browser, doc):
    """In JupyterLab, moving a slider redraws the widget with lesson_lib's numbers."""
    twins = [(i, cell_value(src)) for i, src in widget_cells(doc)]
    twins = [(i, w) for i, w in twins if isinstance(w, LessonWidget) and slider_moves(w)]
    assert twins, f"{doc} has no lesson widget with a slider"
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        # ?reset: a fresh workspace, so only this chapter is open
        url = f"{lab['base']}/lab/tree/{doc}.md?reset&token={lab['token']}"
        page.goto(url, wait_until="load")
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell", timeout=ACTION_TIMEOUT_MS
        )
        page.locator(".jp-Notebook:visible, .jp-FileEditor:visible").first.wait_for(
            timeout=ACTION_TIMEOUT_MS
        )
        assert page.locator(".jp-FileEditor:visible").count() == 0, f"{doc}.md opened as text"
        state = run_all(page)
        assert state["errors"] == [], f"cells raised: {state['errors']}"
        cells = page.locator(".jp-Notebook:visible .jp-Cell")
        for index, twin in twins:
            root = cells.nth(index).locator(".jp-OutputArea-output .widget-vbox").first
            root.wait_for(state="visible", timeout=ACTION_TIMEOUT_MS)
            message = root.locator(".widget-html-content").first
            picture = root.locator("img.widget-image").first
            assert squash(message.inner_text()) == html_text(twin.message.value)
            for position, name, new, key in slider_moves(twin):
                before_text = message.inner_text()
                before_src = picture.get_attribute("src")
                before_png = bytes(twin.image.value)
                slider = root.locator(".widget-slider").nth(position)
                slider.locator(".noUi-handle").focus()
                page.keyboard.press(key)
                twin.controls[name].value = new
                expected = html_text(twin.message.value)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    if (
                        message.inner_text() != before_text
                        and picture.get_attribute("src") != before_src
                    ):
                        break
                    time.sleep(0.2)
                shown = squash(message.inner_text())
                assert shown != squash(before_text), f"{doc}: {name} moved, message unchanged"
                assert shown == expected, f"{doc}: {name} -> {new}"
                assert twin.error is None
                png = base64.b64decode(page.evaluate(IMAGE_BYTES, picture.element_handle()))
                assert png != before_png, f"{doc}: {name} moved, picture unchanged"
                assert png_size(png) == png_size(bytes(twin.image.value))
                # same code, same pinned matplotlib: the kernel's picture is byte-identical
                assert png == bytes(twin.image.value), f"{doc}: {name} picture differs"
                readout = squash(slider.locator(".widget-readout").inner_text())
                assert readout, f"{doc}: {name} shows no value"
        assert errors == []
    finally:
        # stop this chapter's kernel before the next chapter starts its own
        page.evaluate(
            "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " if (w && w.sessionContext) { w.sessionContext.shutdown(); } }"
        )
        page.wait_for_timeout(500)
        context.close()
