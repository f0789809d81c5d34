"""Regrading some students: their new rows merged into the class's CSV files.

``--student ID`` grades only those students and merges their rows into each CSV the grader writes
(:func:`merge_rows`), every other row written again cell for cell (not escaped twice). A full run
into a grades file holding students it does not have is refused unless ``--replace`` is given: a
folder holding one notebook would otherwise leave a one-row class file.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from lesson_lib.coursework.files import staged
from lesson_lib.model._safe_io import read_csv_rows

#: Largest CSV read back (a merge, a report, a TA's file), bytes (150 students x 25 problems of details is about 1.1 MB).
MAX_CSV_BYTES = 64 * 2**20


class RegradeRefused(ValueError):
    """The existing file cannot take the merge (another header, not a CSV); the message says why."""


def read_rows(path: Path, header: Sequence[str]) -> list[list[str]]:
    """The rows under the header of a CSV this grader wrote (none for an absent file).

    Parameters
    ----------
    path : Path
        The class's file (``--out`` or ``--details``).
    header : sequence of str
        The header the grader writes today.

    Returns
    -------
    list of list of str

    Raises
    ------
    RegradeRefused
        If it is too large, not UTF-8 CSV, or has another header.
    """
    path, source = Path(path), staged(path)
    if not source.exists():
        return []
    rows = read_csv_rows(source, "CSV", RegradeRefused, MAX_CSV_BYTES)
    if not rows or rows[0] != list(header):
        raise RegradeRefused(
            f"{path} does not have the columns this grader writes "
            f"({', '.join(header[:4])}, ...): another problem set, or not a grades file; "
            "give another --out, or grade the whole class"
        )
    return rows[1:]


def _students_in(rows: Sequence[Sequence[str]]) -> list[str]:
    """The distinct students (first column, case ignored) of some rows, in order of first row."""
    return list(dict.fromkeys(row[0].casefold() for row in rows if row))


def merge_rows(
    old: Sequence[Sequence[str]], new: Sequence[Sequence[str]], students: Collection[str]
) -> list[list[str]]:
    """The class's rows ``old``, each regraded student's rows replaced by ``new``'s where its first
    old row was (or at the end); the first cell of a row is its student, compared without case.

    Parameters
    ----------
    old, new : sequence of rows
    students : collection of str

    Returns
    -------
    list of list of str
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


class WouldShrink(ValueError):
    """A full run would replace a grades file holding students it has no submission for."""


def refuse_shrinking(path: Path, header: Sequence[str], graded: Collection[str]) -> None:
    """Refuse a full run replacing ``path`` that would lose students' grades; an absent file,
    another's (kept under a name with the time) or one lacking none of them may be replaced.

    Parameters
    ----------
    path : Path
    header : sequence of str
    graded : collection of str
        The students this run grades.

    Raises
    ------
    WouldShrink
        Naming the students the file would lose, and ``--student`` and ``--replace``.
    """
    try:
        old = read_rows(path, header)
    except (RegradeRefused, OSError):
        return
    have = {s.casefold() for s in graded}
    missing = [s for s in _students_in(old) if s not in have]
    if not missing:
        return
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    raise WouldShrink(
        f"{path} holds {len(missing)} student(s) this folder has no submission for ({shown}): "
        "replacing it would lose their grades. To regrade some students, pass --student ID "
        "for each (their rows are merged in); to replace the file anyway, pass --replace"
    )
