"""Make sure bubblewrap is there for the grader's sandbox (``make test`` and ``make grade`` run this).

The batch grader runs every submitted notebook inside bubblewrap (``bwrap``).
When it is missing and this runs as root on a machine with apt-get (a CI
container, a fresh Debian/Ubuntu VM), Debian's ``bubblewrap`` package is
installed (``apt-get update`` first). Otherwise it prints one line saying
how to get it and exits 0: the grader then refuses to run without
``--no-sandbox``, and the sandbox tests skip on a reader's machine and fail
under ``CI=true``. Standard library only, so it runs before the venv exists.
"""

from __future__ import annotations

import os
import shutil
import sys

# The shared apt helper sits beside this file; tests load these tools by path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apt_install import apt_install, can_apt

#: How a reader gets the sandbox.
HOW_TO = "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap) to grade in a sandbox"


def find_bwrap() -> str | None:
    """Return the path of ``bwrap`` (``$LESSON_BWRAP`` or on ``PATH``), or None.

    Returns
    -------
    str or None
        The executable, if found.
    """
    env = os.environ.get("LESSON_BWRAP")
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else None
    return shutil.which("bwrap")


def main() -> int:
    """Find or install bubblewrap; return the exit code (non-zero only if apt fails in CI)."""
    if find_bwrap() and shutil.which("setpriv"):
        return 0
    if not can_apt():
        print(f"ensure_sandbox: no bubblewrap; {HOW_TO}.")
        return 0
    print(
        "ensure_sandbox: installing Debian's bubblewrap with apt-get (grader sandbox)", flush=True
    )
    status = apt_install("ensure_sandbox", ["bubblewrap", "util-linux"], HOW_TO)
    if status:
        return status
    if not find_bwrap():
        print(f"ensure_sandbox: apt-get ran but no bwrap is on PATH; {HOW_TO}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
