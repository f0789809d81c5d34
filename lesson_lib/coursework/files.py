"""Files the grader writes for people: never half (it reads with ``lesson_lib.model._safe_io``).

A run's outputs are one set (:func:`output_set`): each file is written beside its target and all
are renamed into place together, a manifest beside the grades saying how far that got, so a run
stopped at any moment leaves the earlier set or the new one, and ``make report`` refuses a mix.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class SetStopped(KeyboardInterrupt):
    """A signal met while an output set was written: ``signum``, and whether it is in place."""

    def __init__(self, signum: int, in_place: bool) -> None:
        super().__init__(signum)
        self.signum, self.in_place = signum, in_place


@dataclass
class _Set:
    token: str
    staged: dict[Path, Path] = field(default_factory=dict)  # target -> its temporary file
    kept: list[Path] = field(default_factory=list)  # copies of earlier files made for the set
    removed: list[Path] = field(default_factory=list)
    signum: int = 0


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
            raise SetStopped(staging.signum, in_place=False)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return kept


def staged(path: Path) -> Path:
    """The file a reader of ``path`` should open: the set's new one, while a set is written."""
    return _current.staged.get(Path(os.path.abspath(path)), path) if _current else Path(path)


def remove_with_set(path: Path) -> None:
    """Remove ``path`` when the set is in place (at once outside a set)."""
    if _current is None:
        Path(path).unlink(missing_ok=True)
    else:
        _current.removed.append(Path(path))


def _read_manifest(path: Path) -> dict:
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def _write_manifest(path: Path, **record: object) -> None:
    write_atomically(path, lambda fh: fh.write(json.dumps(record, indent=1) + "\n"))


def manifest_of(grades: Path) -> Path:
    """The manifest of the set written with the grades CSV ``grades`` (``grades.outputs.json``)."""
    return Path(grades).with_name(f"{Path(grades).stem}.outputs.json")


def refuse_mixed_set(manifest: Path) -> None:
    """Raise ValueError if the set ``manifest`` describes was left part old, part new.

    Parameters
    ----------
    manifest : Path
        The manifest :func:`output_set` wrote (none there: nothing to say).
    """
    found = _read_manifest(manifest)
    if found.get("state") == "moving" or found.get("mixed"):
        raise ValueError(
            f"the grader was stopped while moving its outputs into place ({manifest}), so some "
            "are new and some old: grade again to write them as one set"
        )


@contextmanager
def output_set(manifest: Path, folders: Sequence[Path], whole: bool = True) -> Iterator[list[Path]]:
    """Stage every :func:`write_atomically` of the block, then move all into place together.

    SIGINT, SIGTERM and SIGHUP are deferred meanwhile: one met before the moves starts them not
    (the temporaries and copies made are removed, the manifest restored), one met later waits for
    the set to be in place; either way :class:`SetStopped` is raised. A block that raises leaves
    the earlier set too. What a run killed outright (SIGKILL) left is removed by the next one.

    Parameters
    ----------
    manifest : Path
        The set's record (``grades.outputs.json`` beside the grades).
    folders : sequence of Path
        Every folder the set may write into (where a killed run's temporaries are looked for).
    whole : bool, default True
        The set replaces the earlier one whole (a regrade's does not, so a mix stays one).

    Returns
    -------
    contextlib.AbstractContextManager
        Yields the files of the earlier set.
    """
    global _current
    Path(manifest).parent.mkdir(parents=True, exist_ok=True)
    earlier = _read_manifest(manifest)
    if earlier.get("state", "complete") != "complete" and str(earlier.get("token", "")).isalnum():
        for folder in earlier.get("folders", []):
            for left in Path(folder).glob(f".*.{earlier['token']}.*.tmp"):
                left.unlink(missing_ok=True)
    mixed = earlier.get("state") == "moving" or bool(earlier.get("mixed"))
    staging = _Set(secrets.token_hex(8))
    where = {"folders": sorted({str(Path(f).resolve()) for f in folders}), "mixed": mixed}
    on_main = threading.current_thread() is threading.main_thread()

    def defer(signum: int, frame: object) -> None:
        staging.signum = staging.signum or signum

    handlers = {s: signal.signal(s, defer) for s in _SIGNALS} if on_main else {}
    moving = False
    try:
        old_files = [str(f) for f in earlier.get("files", [])]
        _write_manifest(manifest, state="writing", token=staging.token, files=old_files, **where)
        _current = staging
        try:
            yield [Path(f) for f in old_files]
        finally:
            _current = None
        if staging.signum:
            raise SetStopped(staging.signum, in_place=False)
        new_files = sorted(str(t) for t in staging.staged)
        moving = True
        _write_manifest(manifest, state="moving", token=staging.token, files=new_files, **where)
        for target, tmp in staging.staged.items():
            os.replace(tmp, target)
        for path in staging.removed:
            path.unlink(missing_ok=True)
        where["mixed"] = mixed and not whole
        _write_manifest(manifest, state="complete", token=staging.token, files=new_files, **where)
    except BaseException:
        if not moving:
            for path in [*staging.staged.values(), *staging.kept]:
                path.unlink(missing_ok=True)
            if earlier:
                _write_manifest(manifest, **earlier)
            else:
                Path(manifest).unlink(missing_ok=True)
        raise
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if staging.signum:
        raise SetStopped(staging.signum, in_place=True)


_TEXT = {"encoding": "utf-8", "newline": ""}
