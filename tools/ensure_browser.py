"""Make sure a Chromium is there for the browser tests (``make test`` runs this).

The browser tests drive the system's Chromium with Python Playwright; no
browser is ever downloaded (``playwright install`` is not used). Lookup
order: ``$LESSON_CHROMIUM``, then ``chromium``, ``chromium-browser``,
``google-chrome`` on ``PATH``.

When none is found and this runs as root on a machine with apt-get (a CI
container, a fresh Debian/Ubuntu VM), Debian's ``chromium`` package is
installed. Otherwise it prints one line saying how to enable the browser
tests and exits 0: the tests then skip on a reader's machine, and fail
under ``CI=true``. Standard library only, so it runs before the venv exists.
"""

from __future__ import annotations

import os
import shutil
import sys

# The shared apt helper sits beside this file; tests load these tools by path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apt_install import apt_install, can_apt

#: Executable names tried on PATH, in order.
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: How a reader enables the browser tests.
HOW_TO = (
    "install Chromium (Debian/Ubuntu: sudo apt-get install chromium) "
    "or set LESSON_CHROMIUM=/path/to/chrome"
)


def find_chromium() -> str | None:
    """Return the path of a Chromium executable, or None.

    Returns
    -------
    str or None
        ``$LESSON_CHROMIUM`` if it names an executable file, else the first
        of :data:`CANDIDATES` found on ``PATH``.
    """
    env = os.environ.get("LESSON_CHROMIUM")
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def main() -> int:
    """Find or install Chromium; return the exit code (non-zero only if apt fails in CI)."""
    if find_chromium():
        return 0
    if not can_apt():
        print(f"ensure_browser: no Chromium, browser tests will be skipped; to run them, {HOW_TO}.")
        return 0
    print("ensure_browser: installing Debian's chromium with apt-get (browser tests)", flush=True)
    status = apt_install("ensure_browser", ["chromium"], HOW_TO)
    if status:
        return status
    if not find_chromium():
        print(f"ensure_browser: apt-get ran but no Chromium is on PATH; {HOW_TO}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
