"""What a folder of submissions holds: one entry for every name in it, graded or not.

Platforms and browsers rename notebooks (``S004.IPYNB``, ``s005.ipynb.txt``, ``s002 (1).ipynb``),
and a folder can hold anything. :func:`find_submissions` turns every name not starting with ``.``
into exactly one :class:`Entry`: ``<ID>.ipynb`` (any case, a ``.txt`` or ``.json`` tail, a
browser's `` (1)``) is that student's notebook; a folder ``<ID>/`` (or a Gradescope export's
``submission_<n>/``) is graded by its ``<ID>_problems.ipynb`` or ``problems.ipynb`` (a Gradescope
folder's only notebook, whatever its name); anything else
(a symbolic link, never followed; a FIFO, device or socket, never opened; a folder named like a
notebook or without a problem set; another file) gets an entry saying why it cannot be graded.
:func:`read_notebook` reads one without following links or blocking, converting nbformat 3 to 4.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from lesson_lib.coursework.lms_names import PROBLEM_SET, id_in_file_stem, is_gradescope_folder
from lesson_lib.coursework.runner import code_sources
from lesson_lib.model._safe_io import printable, read_file, special_kind

#: Largest notebook file read, bytes (the problem set is about 100 KB).
MAX_NOTEBOOK_BYTES = 20 * 2**20
#: Tails a learning platform or a browser adds after ``.ipynb``.
ADDED_TAILS = (".txt", ".json")
#: A browser's copy suffix: "s002 (1)", "s002(2)".
_COPY_SUFFIX = re.compile(r"^(?P<stem>.*?) ?\((?P<n>\d{1,4})\)$")
#: Files a platform's export keeps beside the submissions (Gradescope's export metadata):
#: read by :mod:`~lesson_lib.coursework.identity`, not graded.
LMS_METADATA = ("submission_metadata.yml",)
#: Most entries of one student's folder looked at.
_MAX_FOLDER_ENTRIES = 10_000


@dataclass(frozen=True)
class Entry:
    """One name in the submissions folder, and what it holds."""

    #: The name as it stands in the folder.
    name: str
    #: The student ID part of the name (tails and copy suffixes taken off).
    stem: str
    #: The notebook to grade, or the entry itself when there is none.
    path: Path
    #: Why nothing can be graded ("" when ``path`` is a notebook file to read).
    problem: str = ""
    #: What was recognised in the name (an added ``.txt``, a copy suffix).
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def file(self) -> str:
        """The path relative to the submissions folder, as the CSV shows it."""
        if self.path.name != self.name and self.path.parent.name == self.name:
            return f"{self.name}/{self.path.name}"
        return self.name


def notebook_name(name: str) -> tuple[str, list[str]] | None:
    """The ID part of a notebook's file name and what was taken off, or None if not a notebook.

    Parameters
    ----------
    name : str

    Returns
    -------
    (str, list of str) or None
    """
    notes = []
    rest = name
    for tail in ADDED_TAILS:
        if rest.casefold().endswith(".ipynb" + tail):
            notes.append(
                f"the name ends in {rest[-len(tail) :]!r} after .ipynb (added by a learning "
                "platform or a browser?)"
            )
            rest = rest[: -len(tail)]
            break
    if not rest.casefold().endswith(".ipynb") or len(rest) <= len(".ipynb"):
        return None
    stem = rest[: -len(".ipynb")]
    copy = _COPY_SUFFIX.match(stem)
    if copy and copy["stem"]:
        notes.append(
            f"{printable(repr(name), 80)} read as {copy['stem']!r}: "
            f"{stem[len(copy['stem']) :]!r} is how a browser names a second download"
        )
        stem = copy["stem"]
    return stem, notes


def _in_folder(folder: Path, name: str) -> Entry:
    """The entry for a student's folder: its problem set, or why there is none."""
    candidates: list[tuple[int, str, Path, list[str]]] = []
    lone: list[tuple[int, str, Path, list[str]]] = []  # notebooks that name no problem set
    seen = 0
    with os.scandir(folder) as entries:
        for item in entries:
            seen += 1
            if seen > _MAX_FOLDER_ENTRIES:
                break
            parsed = notebook_name(item.name)
            if parsed is not None and not id_in_file_stem(parsed[0])[1]:
                note = (
                    f"{printable(item.name, 60)}, its only notebook, is graded as the problem set"
                )
                lone.append((2, item.name, Path(item.path), [*parsed[1], note]))
            if parsed is None or not id_in_file_stem(parsed[0])[1]:
                continue
            exact = item.name in (f"{PROBLEM_SET}.ipynb", f"{name}_{PROBLEM_SET}.ipynb")
            candidates.append((0 if exact else 1, item.name, Path(item.path), parsed[1]))
    copy = _COPY_SUFFIX.match(name)
    stem = copy["stem"] if copy and copy["stem"] else name
    if not candidates and len(lone) == 1 and is_gradescope_folder(name):
        candidates = lone  # Gradescope's metadata says whose it is, whatever it is called
    if not candidates:
        return Entry(name, stem, folder, problem=f"a folder without {PROBLEM_SET}.ipynb")
    candidates.sort()
    path, notes = candidates[0][2], candidates[0][3]
    others = [c[1] for c in candidates[1:]]
    if others:
        shown = ", ".join(printable(other, 60) for other in others[:5])
        notes = [*notes, f"also holds {shown}: not graded"]
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return Entry(name, stem, path, "its problems notebook is a symbolic link: not followed")
    if stat.S_ISDIR(mode):
        return Entry(name, stem, path, "its problems notebook is a folder")
    if not stat.S_ISREG(mode):
        return Entry(name, stem, path, f"its problems notebook is {special_kind(mode)}: not opened")
    return Entry(name, stem, path, notes=tuple(notes))


def _entry(folder: Path, name: str) -> Entry:
    path = folder / name
    try:
        mode = os.lstat(path).st_mode
    except OSError as err:
        return Entry(name, name, path, problem=f"cannot be read ({err.strerror or err})")
    parsed = notebook_name(name)
    stem = parsed[0] if parsed else (name.rsplit(".", 1)[0] or name)
    if stat.S_ISLNK(mode):
        return Entry(name, stem, path, problem="a symbolic link: not followed")
    if stat.S_ISDIR(mode):
        if parsed is not None:
            return Entry(name, stem, path, problem="a folder named like a notebook")
        try:
            return _in_folder(path, name)
        except OSError as err:
            return Entry(name, name, path, problem=f"a folder that cannot be read ({err.strerror})")
    if not stat.S_ISREG(mode):
        return Entry(name, stem, path, problem=f"{special_kind(mode)}, not a file: not opened")
    if parsed is None:
        return Entry(name, stem, path, problem="not a notebook (.ipynb) file")
    return Entry(name, stem, path, notes=tuple(parsed[1]))


def find_submissions(folder: Path) -> list[Entry]:
    """An :class:`Entry` per name in ``folder`` not starting with ``.``, by caseless ID, then name.

    Parameters
    ----------
    folder : Path
        The folder of submissions (a symbolic link to it is followed: the instructor's own choice).

    Returns
    -------
    list of Entry
    """
    folder = Path(folder)
    with os.scandir(folder) as entries:
        names = [
            e.name for e in entries if not e.name.startswith(".") and e.name not in LMS_METADATA
        ]
    found = [_entry(folder, name) for name in names]
    return sorted(found, key=lambda e: (e.stem.casefold(), e.name))


def hidden_names(folder: Path) -> list[str]:
    """Names in ``folder`` starting with ``.``, which :func:`find_submissions` leaves out, sorted.

    Parameters
    ----------
    folder : Path

    Returns
    -------
    list of str
    """
    with os.scandir(folder) as entries:
        return sorted(e.name for e in entries if e.name.startswith("."))


def read_notebook(path: Path, limit: int = MAX_NOTEBOOK_BYTES) -> tuple[dict, str]:
    """A notebook as version-4 JSON, and a note if it was converted from an older nbformat.

    Parameters
    ----------
    path : Path
    limit : int, default :data:`MAX_NOTEBOOK_BYTES`
        Largest file read, bytes.

    Returns
    -------
    (dict, str)

    Raises
    ------
    ValueError, RecursionError, MemoryError
        If it is a link or not a regular file, too large, not JSON or not a notebook.
    """
    raw = json.loads(
        read_file(path, "notebook", ValueError, limit, follow=False).decode(errors="replace")
    )
    version = raw.get("nbformat") if isinstance(raw, dict) else None
    note = ""
    if type(version) is int and version < 4:
        import nbformat

        try:
            raw = json.loads(json.dumps(nbformat.reads(json.dumps(raw), as_version=4)))
        except Exception as err:  # nbformat's own errors for a broken old notebook
            raise ValueError(f"an nbformat {version} notebook that cannot be converted") from err
        note = f"an nbformat {version} notebook, converted to version 4"
    code_sources(raw)  # raises ValueError if there is no list of cells
    return raw, note
