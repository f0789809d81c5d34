"""Files the grader writes for people: never half (it reads with ``lesson_lib.model._safe_io``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


def write_atomically(
    target: Path,
    write: Callable[[IO], object],
    *,
    binary: bool = False,
    mode: int = 0o644,
    before_replace: Callable[[Path], Path | None] | None = None,
) -> Path | None:
    """Write ``target`` by a temporary file beside it and a rename: whole or not at all.

    Parameters
    ----------
    target : Path
        The file to write (its folder must exist).
    write : callable
        ``write(handle)`` fills the temporary file (UTF-8 text, ``newline=""``, unless ``binary``).
    binary : bool, default False
    mode : int, default 0o644
    before_replace : callable, optional
        ``before_replace(temporary)``, run just before the rename (to keep an earlier file).

    Returns
    -------
    Path or None
        What ``before_replace`` returned.
    """
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else _TEXT)) as fh:
            write(fh)
        os.chmod(tmp, mode)
        kept = before_replace(Path(tmp)) if before_replace is not None else None
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return kept


_TEXT = {"encoding": "utf-8", "newline": ""}
