"""Files the grader writes for people: never half (it reads with ``lesson_lib.model._safe_io``).

A run's outputs are one set (:func:`output_set`): each written beside its target, then all renamed
into place, a manifest saying when that began, so ``make report`` refuses a set left mixed.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from lesson_lib.model._safe_io import Stopped


@dataclass
class _Set:
    token: str
    staged: dict[Path, Path | None] = field(default_factory=dict)  # target -> temporary, None: rm
    kept: list[Path] = field(default_factory=list)  # copies of earlier files made for the set
    signum: int = 0

    def stop(self, in_place: bool) -> Stopped:
        """The signal met, saying whether the set is in place."""
        stop = Stopped(self.signum)
        stop.in_place = in_place
        return stop


_current: _Set | None = None


def write_atomically(
    target: Path,
    write: Callable[[IO], object],
    *,
    binary: bool = False,
    mode: int = 0o644,
    before_replace: Callable[[Path], Path | None] | None = None,
) -> Path | None:
    """Write ``target`` by a temporary file beside it and a rename: whole or not at all.

    Inside :func:`output_set` the rename waits for the set's (a file written twice keeps the last).

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
    staging, key = _current, Path(os.path.abspath(target))
    prefix = f".{target.name}." + (f"{staging.token}." if staging else "")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else _TEXT)) as fh:
            write(fh)
        os.chmod(tmp, mode)
        earlier = staging.staged.get(key) if staging else None
        kept = before_replace(Path(tmp)) if before_replace and earlier is None else None
        if staging is None:
            os.replace(tmp, target)
            return kept
        staging.kept += [kept] if kept else []
        staging.staged[key] = Path(tmp)
        if earlier is not None:
            earlier.unlink(missing_ok=True)
        if staging.signum:
            raise staging.stop(in_place=False)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return kept


def staged(path: Path) -> Path:
    """The file a reader of ``path`` should open: the set's new one, while a set is written.

    Parameters
    ----------
    path : Path

    Returns
    -------
    Path
    """
    return (_current.staged.get(Path(os.path.abspath(path))) if _current else None) or Path(path)


def remove_with_set(path: Path) -> None:
    """Remove ``path`` when the set is in place (at once outside a set).

    Parameters
    ----------
    path : Path
    """
    if _current is None:
        Path(path).unlink(missing_ok=True)
    else:
        _current.staged[Path(os.path.abspath(path))] = None


def manifest_of(grades: Path) -> Path:
    """The manifest of the set written with the grades CSV ``grades`` (``grades.outputs.json``).

    Parameters
    ----------
    grades : Path

    Returns
    -------
    Path
    """
    return Path(grades).with_name(f"{Path(grades).stem}.outputs.json")


def _manifest(path: Path) -> dict:
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def refuse_mixed_set(manifest: Path) -> None:
    """Raise ValueError if the set ``manifest`` records was left part old, part new.

    Parameters
    ----------
    manifest : Path
        As :func:`output_set` writes it (none there: nothing to refuse).
    """
    if _manifest(manifest).get("state") == "moving":
        raise ValueError(
            f"the grader was stopped while moving its outputs into place ({manifest}), so some "
            "are new and some old: grade again to write them as one set"
        )


@contextmanager
def output_set(manifest: Path, folders: Sequence[Path], whole: bool = True) -> Iterator[list[Path]]:
    """Stage every :func:`write_atomically` of the block, then move all into place together.

    SIGINT, SIGTERM and SIGHUP are deferred: met before the moves (or the block raising), the
    earlier set is left; met later, the set is put in place first; then ``Stopped`` is raised
    (``in_place`` says which). What a killed run (SIGKILL) left in ``folders`` is removed first,
    so one run at a time may write a set.

    Parameters
    ----------
    manifest : Path
        The set's record (``grades.outputs.json`` beside the grades).
    folders : sequence of Path
        Every folder the set may write into.
    whole : bool, default True
        The set replaces the earlier one whole (a regrade's does not, so a mix stays one).

    Returns
    -------
    contextlib.AbstractContextManager
        Yields the files of the earlier set.
    """
    global _current
    # one name per set of outputs: what a killed run of it left is found by the next
    staging = _Set(hashlib.sha256(str(Path(manifest).resolve()).encode()).hexdigest()[:12])

    def defer(signum: int, frame: object) -> None:
        staging.signum = staging.signum or signum

    on_main = threading.current_thread() is threading.main_thread()
    handlers = {s: signal.signal(s, defer) for s in _SIGNALS} if on_main else {}
    moving = False
    try:
        for folder in folders:
            for left in Path(folder).glob(f".*.{staging.token}.*.tmp"):
                left.unlink(missing_ok=True)
        earlier = _manifest(manifest)
        old = [str(f) for f in earlier.get("files", [])]
        mixed = earlier.get("state") == "moving" and not whole
        _current = staging
        try:
            yield [Path(f) for f in old]
        finally:
            _current = None
        if staging.signum:
            raise staging.stop(in_place=False)
        files = sorted(
            {str(t) for t, tmp in staging.staged.items() if tmp} | {*([] if whole else old)}
        )
        moving = True
        _record(manifest, "moving", files)
        for target, tmp in staging.staged.items():
            if tmp is None:
                target.unlink(missing_ok=True)
            else:
                os.replace(tmp, target)
        _record(manifest, "moving" if mixed else "complete", files)
    except BaseException:
        for path in [] if moving else [*staging.staged.values(), *staging.kept]:
            if path is not None:
                path.unlink(missing_ok=True)
        raise
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if staging.signum:
        raise staging.stop(in_place=True)


def _record(manifest: Path, state: str, files: list[str]) -> None:
    write_atomically(manifest, lambda fh: json.dump({"state": state, "files": files}, fh))


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_TEXT = {"encoding": "utf-8", "newline": ""}
