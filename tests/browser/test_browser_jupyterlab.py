"""The live explorers in a real JupyterLab, driven by Chromium.

JupyterLab is started on a copy of the chapters the way ``make lab`` starts
it (``tools/lab.py``: project-local settings that open ``.md`` files as
notebooks, nothing from the user's home). For each chapter with an explorer
(:data:`lesson_lib.explorers.catalog.EXPLORERS`) the test opens the ``.md``
file (it must open as a notebook), runs all cells, finds the explorer drawn
by JupyterLab's own Vega-Lite renderer, moves every control to another value
and checks that the message in the chart equals what ``lesson_lib`` gives
for that state (:meth:`Explorer.message_for`) and that the chart changed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from build_site import ROOT
from ci import cannot_run
from probe import ACTION_TIMEOUT_MS, free_port

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
    # every cell in the DOM, so the test can find the explorers' outputs
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
        for explorer in explorers:
            drive(page, doc, explorer)
        assert errors == []
    finally:
        # stop this chapter's kernel before the next chapter starts its own
        page.evaluate(
            "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " if (w && w.sessionContext) { w.sessionContext.shutdown(); } }"
        )
        page.wait_for_timeout(500)
        context.close()
