"""Grades into Canvas: the course's own gradebook export, with the problem set's column filled.

Canvas imports a gradebook CSV whose first columns identify the student (``Student``, ``ID``, ``SIS
User ID``, ``SIS Login ID``, ``Section``), the others assignments named as in the export (``Problem
set (123456)``; a new name makes a new assignment), and a ``Points Possible`` row that sets their
points (``check_for_non_student_row`` and ``process_pp`` in
https://github.com/instructure/canvas-lms/blob/00b222d77ee43d046e6aee0347c4ed5b27e1741f/lib/gradebook_importer.rb;
"How do I import grades in the Gradebook?",
https://community.instructure.com/en/kb/articles/660862-how-do-i-import-grades-in-the-gradebook).
:func:`fill_gradebook` writes those columns, the points row and one assignment column: each
student's total, found by Canvas user id, or empty (unchanged) without a counted, graded submission.
An assignment name no column has is refused unless ``--canvas-new-assignment`` (a typo would make
another); Canvas's own ``Points Possible`` is kept, with a warning, when it differs from the set's.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from lesson_lib.coursework.files import write_atomically
from lesson_lib.coursework.grades_csv import GradesRow, spreadsheet_safe
from lesson_lib.coursework.identity import identify
from lesson_lib.coursework.lms_names import GradescopeSubmission
from lesson_lib.coursework.roster import Roster
from lesson_lib.coursework.submissions import Entry
from lesson_lib.model._safe_io import read_csv_rows, require_output_file

#: The columns that identify a student in Canvas's gradebook CSV, in its order.
IDENTITY_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: The export's points row's Student cell, stripped (Canvas pads it with spaces).
POINTS_POSSIBLE = "Points Possible"
#: Largest gradebook export read, bytes.
MAX_GRADEBOOK_BYTES = 32 * 2**20
#: How Canvas names an assignment's column in its export: ``<name> (<assignment id>)``.
_ASSIGNMENT = re.compile(r"^(?P<name>.*\S)\s*\((?P<id>\d{1,20})\)$")


@dataclass
class GradebookSummary:
    """What :func:`fill_gradebook` filled and what it left empty."""

    #: The assignment column written.
    column: str
    #: Students given a score.
    filled: int = 0
    #: Students (``Student`` cell) left empty, for want of a counted, graded submission.
    empty: list[str] = field(default_factory=list)
    #: Canvas user ids with a score that are not in the export.
    unmatched: list[str] = field(default_factory=list)
    #: The points written in the ``Points Possible`` row.
    points_possible: float = 0.0
    #: What to know before importing (points that differ, a student left out).
    warnings: list[str] = field(default_factory=list)


def _read_gradebook(path: Path) -> tuple[list[str], list[list[str]]]:
    """A Canvas gradebook export: its header and its rows (points row included)."""
    rows = read_csv_rows(path, "canvas_gradebook", ValueError, MAX_GRADEBOOK_BYTES)
    if not rows:
        raise ValueError(f"canvas_gradebook {path} is empty")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in IDENTITY_COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"canvas_gradebook {path} lacks the column(s) {missing}: export it from Canvas's "
            f"gradebook (it must have {', '.join(IDENTITY_COLUMNS)})"
        )
    return header, rows[1:]


def _assignment_columns(header: list[str]) -> list[str]:
    """The export's assignment columns, ``<name> (<id>)``, in its order."""
    return [h for h in header if h not in IDENTITY_COLUMNS and _ASSIGNMENT.match(h)]


def _assignment_column(header: list[str], assignment: str, new_assignment: bool = False) -> str:
    """The export's column for ``assignment`` (its name in Canvas, or the column's full name),
    matched without case or outer spaces; with ``new_assignment`` a name no column has is itself,
    else refused, as are two columns that match."""
    wanted = assignment.strip()
    key = wanted.casefold()
    columns = _assignment_columns(header)
    exact = [h for h in columns if h.strip().casefold() == key]
    if exact:
        return exact[0]
    found = [h for h in columns if _ASSIGNMENT.match(h)["name"].strip().casefold() == key]
    if len(found) > 1:
        raise ValueError(
            f"canvas_assignment {wanted!r} matches {len(found)} columns ({found}): give the "
            "full column name"
        )
    if found:
        return found[0]
    if new_assignment:
        return wanted
    shown = ", ".join(repr(c) for c in columns[:20]) or "none"
    raise ValueError(
        f"canvas_assignment {wanted!r} is not a column of the gradebook export (its assignment "
        f"columns: {shown}); give one of them, or pass --canvas-new-assignment to make Canvas "
        "create a new assignment"
    )


def check_gradebook(path: Path, assignment: str, new_assignment: bool = False) -> str:
    """The column :func:`fill_gradebook` will write, read from the export before anything is graded.

    Parameters
    ----------
    path, assignment, new_assignment
        The export, and as for :func:`fill_gradebook`.

    Returns
    -------
    str
    """
    return _assignment_column(_read_gradebook(path)[0], assignment, new_assignment)


def _points(text: str) -> float | None:
    """A ``Points Possible`` cell as a number (``50.00``), or None (empty, ``(read only)``)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def fill_gradebook(
    exported: Path,
    out: Path,
    scores: Mapping[str, float],
    points_possible: float,
    assignment: str = "Problem set",
    new_assignment: bool = False,
) -> GradebookSummary:
    """Write Canvas's import CSV from its export, with one assignment column filled.

    Parameters
    ----------
    exported : Path
        The gradebook CSV exported from Canvas.
    out : Path
        The import file to write (a new path or a regular file).
    scores : mapping
        Canvas user id (the export's ``ID``) -> the score to import.
    points_possible : float
        The assignment's points, for the ``Points Possible`` row.
    assignment : str, default "Problem set"
    new_assignment : bool, default False
        Whether a name no column has makes a new assignment.

    Returns
    -------
    GradebookSummary

    Raises
    ------
    ValueError
        A required column is missing, the assignment is not a column (and not new), or ``out`` is not
        a new path or regular file.
    """
    header, rows = _read_gradebook(exported)
    column = _assignment_column(header, assignment, new_assignment)
    index = {name: header.index(name) for name in IDENTITY_COLUMNS}
    summary = GradebookSummary(column, points_possible=points_possible)
    at = header.index(column) if column in header else None
    out_rows: list[list[str]] = []
    seen: set[str] = set()
    for row in rows:
        ident = [row[index[c]].strip() if index[c] < len(row) else "" for c in IDENTITY_COLUMNS]
        student, canvas_id = ident[0], ident[1]
        if not seen and student == POINTS_POSSIBLE and not any(ident[1:]):  # Canvas's own row
            theirs = _points(row[at]) if at is not None and at < len(row) else None
            if theirs is not None and not math.isclose(theirs, points_possible):
                summary.points_possible = theirs
                summary.warnings.append(
                    f"the export's Points Possible for {column!r} is {theirs:g}, the problem "
                    f"set's points are {points_possible:g}: the import file keeps Canvas's "
                    f"{theirs:g} (an import would set the assignment's points to the file's), "
                    f"so the scores, out of {points_possible:g}, read as out of {theirs:g} "
                    f"until you set the assignment's points in Canvas to {points_possible:g}"
                )
            shown = f"{summary.points_possible:g}"
            out_rows.append([POINTS_POSSIBLE.rjust(19), "", "", "", "", shown])
            continue
        if not canvas_id:
            continue  # Canvas's other header rows (posting policy, "read only")
        seen.add(canvas_id)
        if POINTS_POSSIBLE in student:  # Canvas's importer reads any such row as the points row
            summary.warnings.append(
                f"{student!r} (ID {canvas_id}) is left out of the import file: Canvas would read "
                "a Student cell holding 'Points Possible' as the points row; enter it by hand"
            )
            continue
        score = scores.get(canvas_id)
        if score is None:
            summary.empty.append(student)
            out_rows.append([*ident, ""])
        else:
            summary.filled += 1
            out_rows.append([*ident, f"{round(score, 4):g}"])
    summary.unmatched = sorted(set(scores) - seen)
    target = require_output_file(out, "--canvas-out")
    target.parent.mkdir(parents=True, exist_ok=True)

    def write(fh: IO) -> None:
        writer = csv.writer(fh)
        writer.writerow([*IDENTITY_COLUMNS, column])
        writer.writerows([[spreadsheet_safe(c) for c in row] for row in out_rows])

    write_atomically(target, write)
    return summary


def canvas_scores(rows: Sequence[GradesRow], users: Mapping[str, str]) -> dict[str, float]:
    """Canvas user id -> total of that student's counted, graded row of the grades file as written.

    A user with two counted rows (no ``--keep``) gets nothing, for you to decide.

    Parameters
    ----------
    rows : sequence of GradesRow
        The grades CSV's rows (:func:`~lesson_lib.coursework.grades_csv.read_scores`).
    users : mapping
        A row's ``file`` cell -> the Canvas user id of that submission.

    Returns
    -------
    dict
    """
    found: dict[str, list[float]] = {}
    for row in rows:
        user = users.get(row.file, "") if row.graded else ""
        if user:
            found.setdefault(user, []).append(float(row.cells["total"]))
    return {user: totals[0] for user, totals in found.items() if len(totals) == 1}


def canvas_users(
    found: Sequence[Entry],
    roster: Roster | None,
    export: Mapping[str, GradescopeSubmission] | None = None,
) -> dict[str, str]:
    """The Canvas user id of every submission in the folder (its Canvas name's, else the roster's
    for the ID it is identified as), by its grades ``file`` cell.

    Parameters
    ----------
    found : sequence of Entry
    roster : Roster or None
    export : mapping, optional
        A Gradescope export's metadata.

    Returns
    -------
    dict
    """
    users: dict[str, str] = {}
    for entry in found:
        ident = identify(entry, roster=roster, export=export)
        user = ident.lms_user
        if not user and roster is not None and ident.student:
            listed = roster.student(ident.student)
            user = listed.lms_user_id if listed is not None else ""
        if user:
            users[spreadsheet_safe(entry.file)] = user
    return users
