"""Shared by the sandbox tests: skip without bubblewrap (except under CI=true where it fails),
and find what is left of one grading run's sandboxes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lesson_lib.coursework.sandbox import BASE_UID, SandboxUnavailable, require_sandbox


def need_sandbox() -> None:
    """Skip the calling test when no sandbox can be made here; fail instead under CI=true."""
    try:
        require_sandbox()
    except SandboxUnavailable as exc:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"CI=true but the grader's sandbox is unavailable: {exc}")
        pytest.skip(f"no sandbox here: {exc}")


def sandbox_processes(marker: str) -> list[int]:
    """Live processes of one grading run's sandboxes: a sandbox user id, or the notebook
    runner, with a mount of the run's own folder (``marker`` is its name).

    The run's scratch folders are made under its folder (``TMPDIR``), and every
    sandbox bind-mounts a file from one, so a survivor of this run shows the
    folder in its mount table; sandboxes of other graders running meanwhile
    (other test workers) do not.
    """
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            uid = os.stat(f"/proc/{entry}").st_uid
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            mounts = Path(f"/proc/{entry}/mountinfo").read_text()
        except OSError:
            continue
        if (uid >= BASE_UID or b"lesson_lib.coursework.runner" in cmd) and marker in mounts:
            found.append(int(entry))
    return found
