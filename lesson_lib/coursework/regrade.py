"""Regrading some students: their new rows merged into the class's CSV files, never a subset replacing the class.

``--student ID`` (repeatable) grades only those students' submissions; then each CSV the grader
writes (the scores and the details) is read back, every row of those students is replaced by the new
ones, at the place of that student's first row, and every other row is written again exactly as it
was, cell for cell (the cells were made spreadsheet-safe when they were first written, and are not
escaped twice). A student graded for the first time is added at the end.

A full run (no ``--student``) into a grades file of this grader that holds students the run does not
have is refused unless ``--replace`` is given: regrading one student by pointing the grader at a
folder holding only that student's notebook would otherwise leave a one-row class file.
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Sequence
from pathlib import Path

#: Largest CSV read back for a merge, bytes (150 students x 22 problems of details is ~1 MB).
MAX_CSV_BYTES = 64 * 2**20


class RegradeRefused(ValueError):
    """The existing file cannot take the merge (another header, not a CSV); the message says why."""


def read_rows(path: Path, header: Sequence[str]) -> list[list[str]]:
    """The rows of a CSV this grader wrote, checked to have ``header``.

    Parameters
    ----------
    path : Path
        The class's file (``--out`` or ``--details``).
    header : sequence of str
        The header the grader writes today.

    Returns
    -------
    list of list of str
        The rows under the header, as written (an absent file gives none).

    Raises
    ------
    RegradeRefused
        If the file is too large, is not UTF-8 CSV, or has another header (another problem set, or
        not this grader's file).
    """
    path = Path(path)
    if not path.exists():
        return []
    if path.stat().st_size > MAX_CSV_BYTES:
        raise RegradeRefused(f"{path} is larger than {MAX_CSV_BYTES // 2**20} MiB")
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (UnicodeDecodeError, csv.Error) as err:
        raise RegradeRefused(f"{path} is not a CSV this grader wrote ({err})") from None
    if not rows or rows[0] != list(header):
        raise RegradeRefused(
            f"{path} does not have the columns this grader writes "
            f"({', '.join(header[:4])}, ...): another problem set, or not a grades file; "
            "give another --out, or grade the whole class"
        )
    return rows[1:]


def _students_in(rows: Sequence[Sequence[str]]) -> list[str]:
    """The distinct students (first column, case ignored) of some rows, in order of first row."""
    seen: dict[str, None] = {}
    for row in rows:
        if row:
            seen.setdefault(row[0].casefold(), None)
    return list(seen)


def merge_rows(
    old: Sequence[Sequence[str]], new: Sequence[Sequence[str]], students: Collection[str]
) -> list[list[str]]:
    """The class's rows with every row of ``students`` replaced by ``new``'s rows of them.

    Parameters
    ----------
    old : sequence of rows
        The class's rows, first cell the student.
    new : sequence of rows
        The regraded rows (only of ``students``).
    students : collection of str
        The regraded IDs (case ignored).

    Returns
    -------
    list of list of str
        Other students' rows unchanged and in place; each regraded student's new rows where that
        student's first old row was, or at the end for a student not in ``old``.

    Examples
    --------
    >>> merge_rows([["s1", "1"], ["s2", "0"], ["s3", "1"]], [["s2", "1"]], {"s2"})
    [['s1', '1'], ['s2', '1'], ['s3', '1']]
    """
    wanted = {s.casefold() for s in students}
    fresh: dict[str, list[list[str]]] = {}
    for row in new:
        fresh.setdefault(row[0].casefold(), []).append(list(row))
    merged: list[list[str]] = []
    placed: set[str] = set()
    for row in old:
        key = row[0].casefold() if row else ""
        if key not in wanted:
            merged.append(list(row))
        elif key not in placed:
            merged.extend(fresh.get(key, []))
            placed.add(key)
    for key, rows in fresh.items():
        if key not in placed:
            merged.extend(rows)
    return merged


def shrink_problem(path: Path, header: Sequence[str], graded: Collection[str]) -> str:
    """Why a full run must not replace ``path`` ("" when it may).

    Parameters
    ----------
    path : Path
        The ``--out`` file.
    header : sequence of str
        The header the grader writes.
    graded : collection of str
        The students this run grades.

    Returns
    -------
    str
        Empty when ``path`` is absent, not this grader's file (it is then kept under a name with the
        time), or holds no student the run lacks.
    """
    try:
        old = read_rows(path, header)
    except (RegradeRefused, OSError):
        return ""
    have = {s.casefold() for s in graded}
    missing = [s for s in _students_in(old) if s not in have]
    if not missing:
        return ""
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return (
        f"{path} holds {len(missing)} student(s) this folder has no submission for ({shown}): "
        "replacing it would lose their grades. To regrade some students, pass --student ID "
        "for each (their rows are merged in); to replace the file anyway, pass --replace"
    )
