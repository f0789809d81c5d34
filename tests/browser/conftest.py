"""Fixtures of the browser tests: Chromium, the built site on a local server.

Python Playwright drives the system's Chromium (Debian's ``chromium``, found
by ``tools/ensure_browser.py``); no browser is downloaded. Without one, the
tests skip with one line saying how to enable them, except under ``CI=true``,
where they fail: CI must not pass without having looked at the site.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from build_site import ROOT
from ci import cannot_run, in_ci
from probe import PageReport, free_port, visit
from shared_once import once_per_run

#: Chromium flags that work here (no sandbox as root, no GPU, no background
#: traffic); the host-resolver rule makes every host but 127.0.0.1 unreachable,
#: so the site is tested with the network off.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]

#: axe-core, installed from package-lock.json by tools/fetch_assets.py.
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def _load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: Why the browser tests were left out on this machine, if they were.
_LEFT_OUT: dict[str, object] = {}

NO_CHROMIUM = (
    "no Chromium; to run them install it (Debian/Ubuntu: sudo apt-get install chromium, "
    "or run `make test` as root) or set LESSON_CHROMIUM=/path/to/chrome"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a reader's machine without Chromium, leave the browser tests out (one line says so).

    Under CI they stay in and fail through :func:`chromium_path`.
    """
    here = Path(__file__).parent
    if in_ci() or _load_tool("ensure_browser").find_chromium() is not None:
        return
    browser_items = [item for item in items if here in Path(item.path).parents]
    if browser_items:
        config.hook.pytest_deselected(items=browser_items)
        items[:] = [item for item in items if item not in browser_items]
        _LEFT_OUT.update(count=len(browser_items), reason=NO_CHROMIUM)


def pytest_terminal_summary(terminalreporter: object) -> None:
    """The one line that says the browser tests did not run, and how to run them."""
    if _LEFT_OUT:
        terminalreporter.write_line(
            f"SKIPPED {_LEFT_OUT['count']} browser tests: {_LEFT_OUT['reason']}", yellow=True
        )


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of the system Chromium; skips (fails under CI) when there is none."""
    path = _load_tool("ensure_browser").find_chromium()
    if path is None:
        cannot_run(f"browser tests: {NO_CHROMIUM}")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[object]:
    """One headless Chromium for the whole session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - playwright is pinned in requirements.txt
        cannot_run("Python playwright is not installed (make setup)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve_folder(folder: Path) -> http.server.ThreadingHTTPServer:
    """``folder`` served quietly by http.server on 127.0.0.1 from a daemon thread.

    Its URL is ``http://127.0.0.1:{server.server_address[1]}/``; the browser
    tests and the benchmarks that load the built site share it.
    """
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="session")
def site(built_book) -> Iterator[str]:
    """Base URL of ``_build/html`` served by http.server on 127.0.0.1."""
    # Warnings fail tests/test_site.py; the site itself is complete after
    # "build finished with problems" (-W --keep-going), so it is still checked.
    # Anything else (an exception, a failed execution) stops the browser tests.
    finished = "build finished with problems" in built_book.output
    if built_book.returncode != 0 and not finished:
        pytest.fail(f"the book did not build:\n{built_book.output[-3000:]}", pytrace=False)
    server = serve_folder(built_book.html_dir)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def axe_js() -> Path:
    """The axe-core script; skips (fails under CI) when npm assets are missing."""
    if not AXE_JS.is_file():
        cannot_run("axe-core is missing; run `python tools/fetch_assets.py` (make assets)")
    return AXE_JS


@pytest.fixture(scope="session")
def screenshots_dir(built_book, pytestconfig) -> Path | None:
    """Where screenshots of every page are saved for a human to look at, with ``--screenshots``.

    No test reads them, so a plain run does not spend its time taking them.
    """
    if not pytestconfig.getoption("screenshots"):
        return None
    out = built_book.html_dir.parent / "browser-screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out


_reports: dict[str, PageReport] = {}


@pytest.fixture
def report(browser, site, axe_js, screenshots_dir):
    """The page's :class:`probe.PageReport`, visited once per session at 1280 px.

    The site, table and figure-text tests all read the same visit, also
    when they run in different pytest-xdist workers.
    """

    def get(doc: str) -> PageReport:
        if doc not in _reports:
            _reports[doc] = once_per_run(
                f"visit-{doc}", lambda: visit(browser, site, doc, axe_js, screenshots_dir)
            )
        return _reports[doc]

    return get
