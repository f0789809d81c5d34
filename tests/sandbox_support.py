"""Shared by the sandbox tests: skip without bubblewrap, except under CI=true where it fails."""

from __future__ import annotations

import os

import pytest

from lesson_lib.coursework.sandbox import SandboxUnavailable, require_sandbox


def need_sandbox() -> None:
    """Skip the calling test when no sandbox can be made here; fail instead under CI=true."""
    try:
        require_sandbox()
    except SandboxUnavailable as exc:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"CI=true but the grader's sandbox is unavailable: {exc}")
        pytest.skip(f"no sandbox here: {exc}")
