"""Skip on a reader's machine, fail under CI: a check that cannot run is not a pass."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    """Whether the tests run under CI (``CI`` set to true/1/yes).

    Returns
    -------
    bool
        True under CI.
    """
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def cannot_run(reason: str) -> None:
    """Skip the calling test on a reader's machine; fail it under ``CI=true``.

    Parameters
    ----------
    reason : str
        What is missing and how to provide it.
    """
    if in_ci():
        pytest.fail(f"cannot run under CI: {reason}", pytrace=False)
    pytest.skip(reason)
