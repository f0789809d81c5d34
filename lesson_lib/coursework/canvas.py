"""Grades into Canvas: the course's own gradebook export, with the problem set's column filled.

Canvas imports a gradebook CSV whose first columns identify the student,
``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID`` and ``Section``, and
whose other columns are assignments, named as in the export
(``Problem set (123456)``, the number being Canvas's assignment id; a new
name makes a new assignment). A second row ``Points Possible`` may give each
column's points. Instructure's guide: "How do I import grades in the
Gradebook?",
https://community.instructure.com/en/kb/articles/660862-how-do-i-import-grades-in-the-gradebook
(formerly https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807);
the Ohio State University's guide lists the same required columns:
https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades.

:func:`fill_gradebook` reads the export you download from Canvas
(Grades, Export, "Export Entire Gradebook") and writes a file with those
five columns of every student row as exported, the ``Points Possible`` row,
and one assignment column: the student's total from the grader, found by the
Canvas user id (``ID``), which Canvas's download names carry, or through the
roster. A student with no counted, graded submission gets an empty cell,
which Canvas's import leaves as it is, and is listed in the summary.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lesson_lib.model._safe_io import printable, require_output_file

#: The columns that identify a student in Canvas's gradebook CSV, in its order.
IDENTITY_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: How the export's points row starts (Canvas pads it with spaces).
POINTS_POSSIBLE = "Points Possible"
#: Largest gradebook export read, bytes.
MAX_GRADEBOOK_BYTES = 32 * 2**20


@dataclass
class GradebookSummary:
    """What :func:`fill_gradebook` filled and what it left empty.

    Attributes
    ----------
    column : str
        The assignment column written.
    filled : int
        Students given a score.
    empty : list of str
        Students (``Student`` cell) left empty: no counted, graded submission.
    unmatched : list of str
        Canvas user ids with a score that are not in the export.
    """

    column: str
    filled: int = 0
    empty: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)


def read_gradebook(path: Path) -> tuple[list[str], list[list[str]]]:
    """A Canvas gradebook export: its header and its rows (points row included).

    Parameters
    ----------
    path : Path
        The exported CSV (UTF-8, a byte-order mark allowed).

    Returns
    -------
    (list of str, list of list of str)

    Raises
    ------
    ValueError
        If it is larger than 32 MiB, empty, or lacks one of :data:`IDENTITY_COLUMNS`.
    """
    path = Path(path)
    if path.stat().st_size > MAX_GRADEBOOK_BYTES:
        raise ValueError(f"canvas_gradebook {path} must be at most 32 MiB")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.reader(fh))
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


def assignment_column(header: list[str], assignment: str) -> str:
    """The export's column for ``assignment``: its exact name, or ``<name> (<id>)``; else new.

    Parameters
    ----------
    header : list of str
        The export's header.
    assignment : str
        The assignment's name in Canvas (``Problem set``), or the column's full name.

    Returns
    -------
    str
        The column name to write (``assignment`` itself when no column matches,
        which Canvas imports as a new assignment).

    Raises
    ------
    ValueError
        If two columns match the name.
    """
    wanted = assignment.strip()
    exact = [h for h in header if h == wanted]
    if exact:
        return exact[0]
    found = [h for h in header if h.startswith(f"{wanted} (") and h.endswith(")")]
    if len(found) > 1:
        raise ValueError(
            f"canvas_assignment {wanted!r} matches {len(found)} columns ({found}): give the "
            "full column name"
        )
    return found[0] if found else wanted


def _cell(text: object) -> str:
    """One cell as plain text a spreadsheet does not run (a formula gets an apostrophe)."""
    value = printable(text, 200)
    return "'" + value if value[:1] in ("=", "+", "-", "@") else value


def fill_gradebook(
    exported: Path,
    out: Path,
    scores: Mapping[str, float],
    points_possible: float,
    assignment: str = "Problem set",
) -> GradebookSummary:
    """Write Canvas's import CSV from its export, with one assignment column filled.

    Parameters
    ----------
    exported : Path
        The gradebook CSV exported from Canvas.
    out : Path
        Where to write the import file (a new path or a regular file;
        written atomically).
    scores : mapping
        Canvas user id (the export's ``ID``) -> the score to import.
    points_possible : float
        The assignment's points, for the ``Points Possible`` row.
    assignment : str, default "Problem set"
        The assignment's name (see :func:`assignment_column`).

    Returns
    -------
    GradebookSummary

    Raises
    ------
    ValueError
        If the export lacks a required column, or ``out`` is not a new path or
        regular file.
    """
    header, rows = read_gradebook(exported)
    column = assignment_column(header, assignment)
    index = {name: header.index(name) for name in IDENTITY_COLUMNS}
    summary = GradebookSummary(column)
    out_rows: list[list[str]] = []
    seen: set[str] = set()
    for row in rows:
        ident = [row[index[c]].strip() if index[c] < len(row) else "" for c in IDENTITY_COLUMNS]
        student, canvas_id = ident[0], ident[1]
        if student.strip().startswith(POINTS_POSSIBLE):
            out_rows.append([POINTS_POSSIBLE.rjust(19), "", "", "", "", f"{points_possible:g}"])
            continue
        if not canvas_id:
            continue  # Canvas's other header rows (posting policy, "read only")
        seen.add(canvas_id)
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
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow([*IDENTITY_COLUMNS, column])
            writer.writerows([[_cell(c) for c in row] for row in out_rows])
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return summary
