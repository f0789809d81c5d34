"""JupyterLab as ``make lab`` starts it, for the browser tests that open chapters in it.

:func:`start_lab` writes the chapters as ``make lab`` does
(:func:`lesson_lib.chapters.notebook.write_notebook_book`: numbers filled in,
cross-references as links) into a scratch folder and starts JupyterLab there
with ``tools/lab.py``'s project-local settings; :func:`run_all` runs the open
notebook and waits for every cell.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from build_site import ROOT
from probe import free_port

from lesson_lib.chapters.notebook import write_notebook_book


def _lab_tool():
    """``tools/lab.py``, the launcher behind ``make lab``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lesson_lab_tool", ROOT / "tools" / "lab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def start_lab(tmp: Path) -> Iterator[dict[str, Any]]:
    """JupyterLab as ``make lab`` starts it (tools/lab.py), on the chapters it writes.

    The launcher's project-local settings make ``.md`` open as notebooks; its
    state folder and HOME are in ``tmp``, so nothing from the user's home is needed.
    """
    root = tmp / "root"
    write_notebook_book(root)
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
            ],
            root=root,
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
        yield {"base": base, "token": token, "log": tmp / "lab.log", "root": root}
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
    if page.evaluate(CELLS_STATE)["total"] == 0:  # a page of prose only: nothing to run
        return page.evaluate(CELLS_STATE)
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


class LabPage:
    """One JupyterLab page that opens chapters one after another, as a reader switching tabs.

    Loading JupyterLab costs seconds of CPU; opening a document in a running
    JupyterLab costs little. Each :meth:`open` starts from a clean shell (every
    widget closed, the previous kernel stopped) and clears the page errors.
    """

    def __init__(self, browser: Any, lab: dict[str, Any]) -> None:
        from probe import ACTION_TIMEOUT_MS

        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.set_default_timeout(ACTION_TIMEOUT_MS)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.goto(f"{lab['base']}/lab?reset&token={lab['token']}", wait_until="load")
        self.page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell", timeout=ACTION_TIMEOUT_MS
        )
        # a command given before the layout is restored can be lost
        self.page.evaluate("async () => { await window.jupyterapp.restored; }")

    def open(self, doc: str, suffix: str = ".md") -> Any:
        """Open ``doc`` as a notebook in the running JupyterLab; returns the page."""
        from probe import ACTION_TIMEOUT_MS

        self.errors.clear()
        self.page.evaluate(
            "(path) => { window.jupyterapp.commands.execute('docmanager:open', {path}); }",
            f"{doc}{suffix}",
        )
        # the opened widget, made current (focus decides currentWidget, which the checks read)
        self.page.wait_for_function(
            "(path) => { const app = window.jupyterapp;"
            " const w = Array.from(app.shell.widgets('main'))"
            "   .find(x => x.context && x.context.path === path);"
            " if (!w) { return false; }"
            " if (app.shell.currentWidget !== w) { app.shell.activateById(w.id); }"
            " return app.shell.currentWidget === w && w.content && w.content.widgets"
            "   && w.content.widgets.length > 0; }",
            arg=f"{doc}{suffix}",
            timeout=ACTION_TIMEOUT_MS,
        )
        visible = ".jp-Notebook:visible, .jp-FileEditor:visible"
        self.page.locator(visible).first.wait_for(timeout=ACTION_TIMEOUT_MS)
        assert self.page.locator(".jp-FileEditor:visible").count() == 0, f"{doc} opened as text"
        return self.page

    def close(self) -> None:
        """Stop the open chapter's kernel and close every widget, unsaved changes dropped."""
        self.page.evaluate(
            "async () => { const app = window.jupyterapp; const w = app.shell.currentWidget;"
            " if (w && w.sessionContext) { await w.sessionContext.shutdown(); }"
            " for (const x of Array.from(app.shell.widgets('main'))) {"
            "   if (x.context) { x.context.model.dirty = false; } x.dispose(); } }"
        )

    def quit(self) -> None:
        """Close the browser page."""
        self.context.close()
