"""The parts a person grades: reasoning exported per problem for a TA, and the points merged back.

A problem of :data:`MANUAL_PARTS` asks for reasoning in its own variable (``why_q12 = "..."``), read
from the source as a plain string; the instructor guide's "Reasoning graded by a person" says what
``--manual-export`` writes and how ``--manual-import`` (or
:mod:`~lesson_lib.coursework.manual_import`) counts the points (blank ``points``: not graded yet).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lesson_lib.coursework.extract import assignments
from lesson_lib.coursework.regrade import MAX_CSV_BYTES, read_rows
from lesson_lib.model._safe_io import printable, read_csv_rows

#: Longest reasoning kept, characters (a few sentences are asked for).
MAX_REASONING_CHARS = 2000
#: The columns of an exported part's CSV.
EXPORT_HEADER = ["student", "file", "answer", "points", "max", "rubric"]
#: The grades CSV's column of what the late policy keeps of a row's points (1 on time).
LATE_FACTOR_COLUMN = "late factor"


@dataclass(frozen=True)
class ManualPart:
    """A part of a problem graded by a person."""

    #: The problem it belongs to.
    qid: str
    #: The notebook variable holding the student's text (``why_q12``).
    variable: str
    #: Its column in the grades CSV (``q12 reasoning``).
    column: str
    #: The most points a TA may give.
    points: float
    #: What the TA looks for, copied into every exported row.
    rubric: str

    @property
    def file_name(self) -> str:
        """The exported CSV's name, ``q12-reasoning.csv``."""
        return f"{self.column.replace(' ', '-')}.csv"


#: The parts graded by a person, by problem id. The instructor page says q12's "why"
#: needs a person; its rubric follows the problem's worked solution.
MANUAL_PARTS: dict[str, ManualPart] = {
    "q12": ManualPart(
        qid="q12",
        variable="why_q12",
        column="q12 reasoning",
        points=1.0,
        rubric=(
            "1: keeps every tensor-parallel group on one node's NVLink AND counts the copies "
            "of the weights (pipeline stages store them once, data-parallel replicas once "
            "each); 0.5: one of the two; 0: neither, or no reasoning"
        ),
    ),
}


def reasoning_answers(nb: object) -> dict[str, str]:
    """The reasoning typed in a notebook's source, by problem id (plain strings; the last wins).

    Parameters
    ----------
    nb : dict
        The notebook as parsed JSON or ``nbformat.NotebookNode``.

    Returns
    -------
    dict
        Problem id -> text, at most :data:`MAX_REASONING_CHARS` characters.
    """
    by_variable = {part.variable: part.qid for part in MANUAL_PARTS.values()}
    found: dict[str, str] = {}
    for name, value in assignments(nb, by_variable.__contains__, by_variable):
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found[by_variable[name]] = value.value[:MAX_REASONING_CHARS]
        else:
            found.pop(by_variable[name], None)
    return found


def given_manual_points(
    submissions: Sequence[Any], points: Mapping[str, Mapping[str, float | None]]
) -> None:
    """Set ``manual`` of each submission with a valid ID to the points a TA gave its parts.

    Parameters
    ----------
    submissions : sequence of Submission
    points : mapping
        Problem id -> student (case-folded) -> points or None (:func:`read_folder`).
    """
    for sub in submissions:
        if sub.graded_as is not None:
            student = sub.student.casefold()
            sub.manual = {qid: given.get(student) for qid, given in points.items()}


def export_rows(
    graded: Sequence[tuple[str, str, Mapping[str, str]]], part: ManualPart
) -> list[list[object]]:
    """One part's rows for the TA: student, file, text, blank points, most points, rubric.

    Parameters
    ----------
    graded : sequence of (student, file, reasoning by problem id)
        Every counted notebook with a valid ID, in the grades' order.
    part : ManualPart

    Returns
    -------
    list of list
    """
    return [
        [student, file, texts.get(part.qid, ""), "", f"{part.points:g}", part.rubric]
        for student, file, texts in graded
    ]


class ManualImportError(ValueError):
    """A filled-in file cannot be merged; the message names the file, the row and the range."""


def _read_points(path: Path, part: ManualPart) -> dict[str, float | None]:
    """The points a TA gave in one exported file, by student (None: not graded yet)."""
    rows = read_csv_rows(path, "TA's file", ManualImportError, MAX_CSV_BYTES)
    if not rows or rows[0][: len(EXPORT_HEADER)] != EXPORT_HEADER:
        raise ManualImportError(
            f"{path}: the first row must be the exported header {', '.join(EXPORT_HEADER)}"
        )
    points: dict[str, float | None] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or not row[0].strip():
            continue
        student = row[0].strip().lstrip("'").casefold()
        if student in points:
            raise ManualImportError(f"{path}, row {number}: student {row[0]!r} appears twice")
        cell = row[3].strip() if len(row) > 3 else ""
        if not cell:
            points[student] = None
            continue
        try:
            value = float(cell)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 <= value <= part.points):
            raise ManualImportError(
                f"{path}, row {number} ({row[0]}): points must be a number from 0 to "
                f"{part.points:g}, got {cell!r}"
            )
        points[student] = value
    return points


def _merge_points(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    points: Mapping[str, Mapping[str, float | None]],
    automatic: Mapping[str, float],
    grades: Path,
) -> list[list[str]]:
    """The grades rows with each part's points in its column, ``total`` and ``max`` counting them."""
    at = {name: i for i, name in enumerate(header)}
    most = sum(automatic.values())
    merged = []
    for line, row in enumerate(rows, start=2):
        row = list(row)

        def number(column: str, row: list[str] = row, line: int = line) -> float:
            try:
                return float(row[at[column]])
            except ValueError:
                raise ManualImportError(
                    f"{grades}, line {line} ({printable(row[0], 40)}): {column} is "
                    f"{printable(row[at[column]], 20)!r}, not a number of points"
                ) from None

        student = row[0].casefold()
        extra_points = extra_max = 0.0
        for qid, given in points.items():
            part = MANUAL_PARTS[qid]
            extra_max += part.points
            value = given.get(student)
            row[at[part.column]] = "" if value is None else f"{value:g}"
            extra_points += value or 0.0
        auto = sum(number(q) for q in automatic)
        late = row[at[LATE_FACTOR_COLUMN]] if LATE_FACTOR_COLUMN in at else ""
        factor = number(LATE_FACTOR_COLUMN) if late.strip() else 1.0
        row[at["total"]] = f"{round((auto + extra_points) * factor, 4):g}"
        row[at["max"]] = f"{most + extra_max:g}"
        merged.append(row)
    return merged


def read_folder(folder: Path) -> dict[str, dict[str, float | None]]:
    """Every part's filled-in file found in ``folder``, read (a part whose file is absent left out).

    Parameters
    ----------
    folder : Path

    Returns
    -------
    dict
        Problem id -> student (case-folded) -> points, None for not graded yet.

    Raises
    ------
    ManualImportError
        If no part's file is there, or one cannot be read.
    """
    folder = Path(folder)
    found = {
        qid: _read_points(folder / part.file_name, part)
        for qid, part in MANUAL_PARTS.items()
        if (folder / part.file_name).exists()  # a FIFO or a folder of that name: refused, named
    }
    if not found:
        names = ", ".join(p.file_name for p in MANUAL_PARTS.values())
        raise ManualImportError(f"{folder} holds none of the exported files ({names})")
    return found


def import_into(
    grades: Path,
    folder: Path,
    header: Sequence[str],
    automatic: Mapping[str, float],
    write: Callable[[Path, list[str], list[list[str]]], Path | None],
) -> tuple[int, Path | None]:
    """Merge the filled-in files of ``folder`` into the grades CSV ``grades``.

    Parameters
    ----------
    grades, folder : Path
    header : sequence of str
        The grades CSV's columns.
    automatic : mapping
        The automatically graded problems' columns -> their most points.
    write : callable
        ``write(path, header, rows)``: writes the rows atomically, returns where the old file is kept.

    Returns
    -------
    (int, Path or None)
        How many points cells were filled, and where the previous grades file was kept.

    Raises
    ------
    ManualImportError
        If a file cannot be read, or names a student the grades do not have.
    RegradeRefused
        If ``grades`` is not this grader's file.
    """
    points = read_folder(folder)
    rows = read_rows(grades, header)
    have = {row[0].casefold() for row in rows if row}
    for qid, given in points.items():
        unknown = sorted(s for s in given if s not in have)
        if unknown:
            raise ManualImportError(
                f"{folder / MANUAL_PARTS[qid].file_name} names students the grades do not "
                f"have: {', '.join(unknown[:5])}"
            )
    merged = _merge_points(header, rows, points, automatic, grades)
    kept = write(grades, list(header), merged)
    filled = sum(1 for given in points.values() for v in given.values() if v is not None)
    return filled, kept
