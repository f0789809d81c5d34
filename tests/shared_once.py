"""Compute a session's expensive value once, even when pytest-xdist runs several workers.

``make test`` runs the suite in one worker per CPU (``pytest -n``). Each
worker is its own pytest session, so a session fixture such as the book
build would run once in every worker, into the same ``_build/``. Here the
first worker to ask computes the value under a file lock and leaves it
pickled in a folder the controller made for this run; the others wait on
the lock and read it. Without workers it is a plain call.

The folder comes from the controller through ``workerinput`` (see
``tests/conftest.py``), so two test runs on one machine never share values.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

#: Key of ``workerinput`` holding the run's shared folder.
WORKER_KEY = "lesson_shared_dir"

_folder: Path | None = None


def use_folder(folder: Path | None) -> None:
    """Set the folder this process shares values through (``None``: do not share)."""
    global _folder
    _folder = folder


def shared_folder() -> Path | None:
    """The folder this run's processes share (removed when the run ends), or None."""
    return _folder


def once_per_run(name: str, make: Callable[[], T]) -> T:
    """``make()``, computed by the first worker of the run that asks; the rest read it.

    Parameters
    ----------
    name : str
        What the value is, unique in the run (used in file names).
    make : callable
        Computes the value; it must be picklable. If it raises, nothing is
        stored and the next worker to ask computes it again (and sees the
        error itself).

    Returns
    -------
    object
        The value.
    """
    if _folder is None:
        return make()
    stem = re.sub(r"[^A-Za-z0-9_.-]", "-", name)
    stored = _folder / f"{stem}.pickle"
    with open(_folder / f"{stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if stored.exists():
            return pickle.loads(stored.read_bytes())
        value = make()
        partial = stored.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(pickle.dumps(value))
        partial.replace(stored)
        return value


@contextlib.contextmanager
def one_at_a_time(name: str) -> Iterator[None]:
    """Hold the run's lock called ``name``: no other worker of this run holds it meanwhile.

    Without a shared folder (no workers) there is nobody to wait for.
    """
    if _folder is None:
        yield
        return
    with open(_folder / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield
