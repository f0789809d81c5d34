"""Which folders the student edition may write into or replace, and the record that says so.

``--out`` and ``--site`` may point anywhere, by a typo too (``--site .``), so nothing the edition
did not make is written over or deleted: each folder it makes gets a manifest (:data:`MANIFEST`) of
the files it wrote and their SHA-256. Never, even with ``--force``: the book's folder or one holding
it, a checkout (``.git``), the home folder, the root, a symbolic link, or (for ``--site``) a folder
inside the book. Only with ``--force``: a non-empty folder without a manifest, a file the edition
did not write or that changed (a student's notebook), anywhere in the folder for ``--site``, which
is replaced whole. What a build adds in a copy (``_build``, ``__pycache__``) is no change.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

from lesson_lib.coursework.files import write_atomically
from lesson_lib.model._safe_io import read_file

#: The manifest the student edition writes into each folder it makes.
MANIFEST = ".lesson-student-edition.json"
#: What the manifest's ``made_by`` says.
MADE_BY = "lesson_lib.coursework.student_edition"
#: Folders the book's build makes inside a copy of the sources; never counted as changes.
BUILD_FOLDERS = frozenset({"_build", "__pycache__"})
#: Most entries looked at in a folder before it is refused as too large to check.
MAX_ENTRIES = 200_000
#: Reasons listed in one refusal at most.
_MAX_LISTED = 5


class FolderRefused(ValueError):
    """The edition will not write into (or replace) this folder; the message says why."""


def digest(path: Path) -> str:
    """SHA-256 of a file's bytes, as 64 hex digits.

    Parameters
    ----------
    path : Path

    Returns
    -------
    str
    """
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _read_manifest(folder: Path) -> dict[str, str] | None:
    """The files the edition wrote into ``folder`` (relative path -> SHA-256), or None."""
    try:
        data = json.loads(read_file(Path(folder) / MANIFEST, "manifest", ValueError, 2**26))
    except (ValueError, RecursionError):  # read_file's errors are ValueErrors too
        return None
    files = data.get("files") if isinstance(data, dict) and data.get("made_by") == MADE_BY else None
    if not isinstance(files, dict):
        return None
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def write_manifest(folder: Path, files: Mapping[str, str]) -> None:
    """Record the files the edition wrote into ``folder``, atomically.

    Parameters
    ----------
    folder : Path
    files : mapping
        Relative path (with ``/``) -> SHA-256 of what was written.
    """
    folder = Path(folder)
    data = {"made_by": MADE_BY, "files": dict(sorted(files.items()))}

    def write(fh: IO) -> None:
        json.dump(data, fh, indent=1)
        fh.write("\n")

    write_atomically(folder / MANIFEST, write)


def files_in(folder: Path, skip: Iterable[str] = ()) -> list[str]:
    """Every entry under ``folder`` that is not a folder (links not followed) as a relative path
    with ``/``, the manifest and the folders named in ``skip`` left out.

    Parameters
    ----------
    folder : Path
    skip : iterable of str, optional

    Returns
    -------
    list of str

    Raises
    ------
    FolderRefused
        If the folder holds more than :data:`MAX_ENTRIES` entries.
    """
    skipped = set(skip)
    found: list[str] = []
    seen = 0
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in skipped)
        seen += len(dirs) + len(names)
        if seen > MAX_ENTRIES:
            raise FolderRefused(
                f"{folder} holds more than {MAX_ENTRIES:,} entries: too many to check, "
                "so nothing was written; give a new folder"
            )
        base = Path(top).relative_to(folder)
        for name in sorted(names):
            rel = (base / name).as_posix()
            if rel != MANIFEST:
                found.append(rel)
    return found


def _never_reasons(folder: Path, root: Path, *, replaces: bool) -> list[str]:
    """Why ``folder`` may not be used even with ``--force`` (empty list: it may)."""
    folder = Path(folder)
    if folder.is_symlink():
        return [f"{folder} is a symbolic link; give the folder itself"]
    where = folder.resolve()
    book = Path(root).resolve()
    reasons = []
    if where == book or where in book.parents:
        reasons.append(f"{folder} is the book's own folder or holds it ({book})")
    if where == Path(where.anchor):
        reasons.append(f"{folder} is the root of the file system")
    if where == Path.home().resolve():
        reasons.append(f"{folder} is your home folder")
    if os.path.lexists(where / ".git"):
        reasons.append(f"{folder} holds a .git folder (a repository's checkout)")
    if replaces and book in where.parents:
        first = where.relative_to(book).parts[0]
        if not (first.startswith(".") or first in BUILD_FOLDERS or first == "node_modules"):
            reasons.append(
                f"{folder} is inside the book's folder, so the copy would copy itself; "
                "use a folder under _build/"
            )
    return reasons


def _force_reasons(
    folder: Path, writes: Iterable[str] | None, *, replaces: bool
) -> tuple[list[str], dict[str, str]]:
    """Why writing into ``folder`` needs ``--force``, and the manifest found there."""
    folder = Path(folder)
    if not folder.exists():
        return [], {}
    if not folder.is_dir():
        return [f"{folder} is not a folder"], {}
    with os.scandir(folder) as entries:
        empty = next(entries, None) is None
    if empty:
        return [], {}
    manifest = _read_manifest(folder)
    if manifest is None:
        notable = []
        if os.path.lexists(folder / "_config.yml"):
            notable.append("a _config.yml (a book's sources?)")
        with os.scandir(folder) as entries:
            if any(e.name.lower().endswith(".ipynb") for e in entries):
                notable.append("notebooks (a student's work?)")
        what = f", holds {' and '.join(notable)}" if notable else ""
        return [
            f"{folder} is not empty{what} and was not made by the student edition "
            f"(it has no {MANIFEST})"
        ], {}
    if replaces:
        candidates = files_in(folder, skip=BUILD_FOLDERS)
    else:
        candidates = [rel for rel in writes or () if os.path.lexists(folder / rel)]
    reasons = []
    for rel in candidates:
        path = folder / rel
        if rel not in manifest:
            reasons.append(f"{rel} was not written by the student edition")
        elif path.is_symlink() or not path.is_file() or digest(path) != manifest[rel]:
            reasons.append(f"{rel} changed since the student edition wrote it (a student's work?)")
    if len(reasons) > _MAX_LISTED:
        reasons[_MAX_LISTED:] = [f"... and {len(reasons) - _MAX_LISTED} more"]
    return reasons, manifest


def check_folder(
    folder: Path, root: Path, *, writes: Iterable[str] | None, force: bool
) -> dict[str, str]:
    """Refuse ``folder`` unless the edition may write into it; return its manifest's files.

    Parameters
    ----------
    folder : Path
        The ``--out`` or ``--site`` folder.
    root : Path
        The book's root.
    writes : iterable of str or None
        What ``--out`` is about to write (relative paths), or None for ``--site``.
    force : bool
        ``--force``: go ahead where only overwriting files objects.

    Returns
    -------
    dict
        Relative path -> SHA-256 (empty if there is no manifest).

    Raises
    ------
    FolderRefused
        Naming every reason, and whether ``--force`` would help.
    """
    option = "--site" if writes is None else "--out"
    never = _never_reasons(folder, root, replaces=writes is None)
    if never:
        raise FolderRefused(
            f"{option} {folder}: refused, nothing was written or deleted: " + "; ".join(never)
        )
    reasons, manifest = _force_reasons(folder, writes, replaces=writes is None)
    if reasons and not force:
        action = "replace" if writes is None else "write into"
        raise FolderRefused(
            f"{option} {folder}: refused to {action} it, nothing was written or deleted: "
            + "; ".join(reasons)
            + ". Give a new or empty folder, or pass --force to "
            + ("replace it" if writes is None else "overwrite those files")
        )
    return manifest
