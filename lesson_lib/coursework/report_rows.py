"""Which graded rows the class report counts, read from the grader's grades CSV.

A row not run for its identity, not a notebook, or ``not counted`` (a copy ``--keep`` did not pick)
is nobody's answers; without ``--keep`` the grader picks none of an ID's copies.
:func:`counted_rows` keeps the rest, one row per student, with its ``late factor`` and a TA's
points, so the report's totals are the grades CSV's; an ID counted twice is left out, and listed.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lesson_lib.coursework.grades_csv import read_grades_row
from lesson_lib.coursework.manual_grading import LATE_FACTOR_COLUMN, MANUAL_PARTS
from lesson_lib.coursework.regrade import MAX_CSV_BYTES
from lesson_lib.model._safe_io import read_csv_rows

#: Why a row is left out when an ID has two counted copies (no ``--keep``).
TWO_COPIES = "of an ID with more than one counted copy (no --keep)"

#: Why a details row is left out when the grades CSV has no row for it.
NOT_IN_GRADES = "in the details but not in the grades CSV"

#: The columns a grades CSV must have for the report (the grader writes more).
GRADES_COLUMNS: tuple[str, ...] = ("student", "file", "status", LATE_FACTOR_COLUMN)


@dataclass(frozen=True)
class CountedRow:
    """One student's counted row."""

    student: str
    #: The notebook that counts.
    file: str
    #: What the late policy keeps of its points, 0 to 1 (1 on time).
    late_factor: float = 1.0
    #: Problem id -> the points a TA gave its part (parts not graded yet are absent).
    manual: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CountedRows:
    """The rows the report counts, and those it leaves out."""

    #: ``(student, file)`` -> :class:`CountedRow`, one per student.
    counted: dict[tuple[str, str], CountedRow]
    #: Why (a status, :data:`TWO_COPIES`, :data:`NOT_IN_GRADES`) -> how many rows.
    left_out: dict[str, int] = field(default_factory=dict)
    #: Student -> the files of an ID with two or more counted copies, none counted.
    two_copies: dict[str, list[str]] = field(default_factory=dict)


def read_grades(path: Path) -> list[dict[str, str]]:
    """The rows of a grades CSV (the grader's ``--out``).

    Parameters
    ----------
    path : Path

    Returns
    -------
    list of dict

    Raises
    ------
    ValueError
        If a column of :data:`GRADES_COLUMNS` is missing.
    """
    return read_csv_with(
        path, GRADES_COLUMNS, "grades", "give --grades the grader's --out file (grades.csv)"
    )


def read_csv_with(path: Path, columns: Iterable[str], what: str, hint: str) -> list[dict[str, str]]:
    """The rows of a CSV the grader wrote, by column; refused with ``hint`` if a column is missing.

    Parameters
    ----------
    path : Path
    columns : iterable of str
    what, hint : str
        Its kind ("grades", "details") and what to do about it, for the message.

    Returns
    -------
    list of dict
    """
    header, *rows = read_csv_rows(path, f"{what} CSV", ValueError, MAX_CSV_BYTES) or [[]]
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{what} CSV {path} lacks the column(s) {', '.join(missing)}; {hint}")
    return [dict.fromkeys(header) | dict(zip(header, row, strict=False)) for row in rows if row]


def _number(row: dict[str, str], column: str, top: float) -> float | None:
    """A cell as a number from 0 to ``top`` (None when blank), or a clear error."""
    text = (row.get(column) or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= top:
        raise ValueError(
            f"grades CSV: {column!r} of {row.get('student')!r} ({row.get('file')!r}) "
            f"is {text!r}, not a number from 0 to {top:g}"
        )
    return value


def counted_rows(grades: Iterable[dict[str, str]]) -> CountedRows:
    """The graded, counted rows of a grades CSV, one per student (IDs compared without case).

    Parameters
    ----------
    grades : iterable of dict
        Rows of :func:`read_grades`.

    Returns
    -------
    CountedRows

    Raises
    ------
    ValueError
        If a ``late factor`` is not from 0 to 1 (blank is 1), or a TA's points are out of range.
    """
    left_out: collections.Counter[str] = collections.Counter()
    by_id: dict[str, list[CountedRow]] = collections.defaultdict(list)
    for cells in grades:
        row = read_grades_row(cells)
        if not row.graded:
            left_out[row.status] += 1
            continue
        factor = _number(cells, LATE_FACTOR_COLUMN, 1.0)
        manual = {}
        for qid, part in MANUAL_PARTS.items():
            given = _number(cells, part.column, part.points)
            if given is not None:
                manual[qid] = given
        by_id[row.student.casefold()].append(
            CountedRow(row.student, row.file, 1.0 if factor is None else factor, manual)
        )
    counted: dict[tuple[str, str], CountedRow] = {}
    two_copies: dict[str, list[str]] = {}
    for copies in by_id.values():
        if len(copies) > 1:
            two_copies[copies[0].student] = sorted(c.file for c in copies)
            left_out[TWO_COPIES] += len(copies)
        else:
            counted[(copies[0].student, copies[0].file)] = copies[0]
    return CountedRows(counted, dict(left_out), two_copies)


def rows_of_details(details: Iterable[dict[str, str]]) -> CountedRows:
    """Every notebook of a details CSV counted, on time, but two files of one ID.

    Parameters
    ----------
    details : iterable of dict

    Returns
    -------
    CountedRows
    """
    seen = dict.fromkeys((r["student"], r.get("file", "")) for r in details)
    return counted_rows([{"student": s, "file": f, "status": ""} for s, f in seen])
