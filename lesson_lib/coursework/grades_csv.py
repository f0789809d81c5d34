"""Grader step: the grades CSV files, written whole and read back in one place.

The scores CSV (:data:`SCORES_HEADER`) has a row per notebook, the details CSV
(:data:`DETAILS_HEADER`) one per notebook and problem, ``--manual-export`` a CSV per part a person
grades. Each is written atomically, a differing earlier file kept under a name with the time, every
cell one line of text a spreadsheet never runs (:func:`spreadsheet_safe`); a regrade replaces only
its students' rows (:mod:`~lesson_lib.coursework.regrade`). Readers (Canvas file, class report) use
:func:`read_grades_row` and decide by ``status``, never by the notes (written for people).
"""

from __future__ import annotations

import csv
import filecmp
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from lesson_lib.coursework.answers import MAX_SHOWN_CHARS
from lesson_lib.coursework.check import MAX_MESSAGE_CHARS
from lesson_lib.coursework.files import write_atomically
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.manual_grading import (
    EXPORT_HEADER,
    LATE_FACTOR_COLUMN,
    MANUAL_PARTS,
    MAX_REASONING_CHARS,
    export_rows,
)
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.regrade import merge_rows, read_rows
from lesson_lib.coursework.status import NOT_GRADED, Status
from lesson_lib.model._safe_io import keep_previous, printable, require_output_file

#: Longest student, file or status cell of a CSV, characters.
MAX_CELL_TEXT = 200
#: Longest notes cell of the scores CSV, characters.
MAX_NOTES_CHARS = 2000

#: The scores CSV's columns, the parts a person grades last (blank until imported). A problem's
#: column holds its points, ``max`` the set's, ``total`` their sum times ``late factor``.
SCORES_HEADER = [
    "student", "file", *PROBLEMS, "total", "max", LATE_FACTOR_COLUMN, "status", "notes",
    *[part.column for part in MANUAL_PARTS.values()],
]  # fmt: skip
#: The details CSV's columns. ``score`` is the share of the problem's points earned (1
#: right, the close credit for close, 0 otherwise) and ``points`` that share of ``max``.
DETAILS_HEADER = [
    "student", "file", "problem", "answer", "status", "score", "points", "max", "message",
    "mistake",
]  # fmt: skip


def spreadsheet_safe(value: object, limit: int = MAX_CELL_TEXT) -> str:
    """A CSV cell a spreadsheet shows as one line of text, never runs as a formula.

    Control and invisible characters are written as escapes (``\\n``, ``\\x1b``, ``\\u200b``), a
    cell starting with ``=``, ``+``, ``-`` or ``@`` gets a leading apostrophe (OWASP's advice on CSV
    injection), and so does each such start after a ``;``, where a spreadsheet of a semicolon
    locale (German, French) splits the cell. The text is cut at ``limit`` characters.

    Parameters
    ----------
    value : object
        The cell's content (a string or a number).
    limit : int, default :data:`MAX_CELL_TEXT`
        Longest cell, characters, before ``...``.

    Returns
    -------
    str
    """
    text = re.sub(r";(?=[=+\-@])", ";'", printable(value, limit))
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def write_rows(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> Path | None:
    """Write rows of cells already made safe, whole; keep a different earlier file first.

    Parameters
    ----------
    path : Path
        The CSV (a new path or a regular file; its folder is created).
    header : sequence of str
    rows : sequence of rows

    Returns
    -------
    Path or None
        Where the previous file was kept (``grades.20260101-120000.csv``, UTC), if it differed.

    Raises
    ------
    ValueError
        If ``path`` exists and is not a regular file (a device, a link, a FIFO).
    """
    path = require_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(fh: IO) -> None:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)

    def keep(tmp: Path) -> Path | None:
        require_output_file(path)  # again: it may have been replaced meanwhile
        if path.exists() and not filecmp.cmp(path, tmp, shallow=False):
            return keep_previous(path)
        return None

    return write_atomically(path, write, before_replace=keep)


def _write_cells(
    path: Path,
    header: list[str],
    rows: list[list[tuple[object, int]]],
    merge: Collection[str] | None,
) -> Path | None:
    """Write cells given with their longest lengths; with ``merge``, into the existing rows."""
    cells = [[spreadsheet_safe(c, limit) for c, limit in row] for row in rows]
    if merge is not None:
        cells = merge_rows(read_rows(path, header), cells, merge)
    return write_rows(path, header, cells)


def write_scores(
    submissions: Sequence[Submission], path: Path, merge: Collection[str] | None = None
) -> Path | None:
    """Write one row per notebook: student, file, each problem's points, total, max, status, notes.

    Columns as in :data:`SCORES_HEADER` (``late factor`` 1 on time; an imported part a person
    grades counts in ``total`` and ``max``); a copy ``--keep`` did not pick is ``not counted``.

    Parameters
    ----------
    submissions : sequence of Submission
    path : Path
        CSV file to write, as :func:`write_rows` writes.
    merge : collection of str, optional
        The students regraded (``--student``): only their rows are replaced.

    Returns
    -------
    Path or None
        Where the previous file was kept, if there was one to keep.

    Raises
    ------
    ValueError
        If ``path`` is not a regular file, or (merging) not this grader's file.
    """
    rows = [
        [
            (sub.student, MAX_CELL_TEXT),
            (sub.file or sub.path.name, MAX_CELL_TEXT),
            *[(f"{sub.results[q].points:g}", 8) for q in PROBLEMS],
            (f"{sub.total:g}", 8),
            (f"{sub.max_points:g}", 8),
            (f"{sub.late_factor:g}", 8),
            (sub.status if sub.counted else Status.NOT_COUNTED, MAX_CELL_TEXT),
            ("; ".join(sub.notes), MAX_NOTES_CHARS),
            *[("" if sub.manual.get(q) is None else f"{sub.manual[q]:g}", 8) for q in MANUAL_PARTS],
        ]
        for sub in submissions
    ]
    return _write_cells(path, SCORES_HEADER, rows, merge)


def write_details(
    submissions: Sequence[Submission], path: Path, merge: Collection[str] | None = None
) -> Path | None:
    """Write one row per notebook and problem: the answer, the verdict, its message and mistake id.

    Parameters
    ----------
    submissions, path, merge
        As for :func:`write_scores`, which also says what it returns and raises.

    Returns
    -------
    Path or None
    """
    rows = [
        [
            (sub.student, MAX_CELL_TEXT),
            (sub.file or sub.path.name, MAX_CELL_TEXT),
            (qid, MAX_CELL_TEXT),
            (result.given, MAX_SHOWN_CHARS),
            (result.status, MAX_CELL_TEXT),
            (f"{result.score:g}", 8),
            (f"{result.points:g}", 8),
            (f"{PROBLEMS[qid].max_points:g}", 8),
            (result.message, MAX_MESSAGE_CHARS),
            (result.mistake, MAX_CELL_TEXT),
        ]
        for sub in submissions
        for qid, result in sub.results.items()
    ]
    return _write_cells(path, DETAILS_HEADER, rows, merge)


def write_manual_export(
    submissions: Sequence[Submission], folder: Path, merge: Collection[str] | None = None
) -> list[Path]:
    """Write one CSV per part a person grades into ``folder`` (``q12-reasoning.csv``).

    Every counted submission with a valid ID gets a row, a blank answer too (the TA gives it 0);
    with ``merge`` only those students' rows are replaced, so points a TA already typed stay.

    Parameters
    ----------
    submissions, folder, merge
        As for :func:`write_scores` (``folder`` in place of ``path``).

    Returns
    -------
    list of Path
    """
    graded = [
        (sub.student, sub.file or sub.path.name, sub.reasoning)
        for sub in submissions
        if sub.graded_as is not None and sub.counted
    ]
    written = []
    for part in MANUAL_PARTS.values():
        rows = [
            [(cell, MAX_REASONING_CHARS if i == 2 else MAX_CELL_TEXT) for i, cell in enumerate(r)]
            for r in export_rows(graded, part)
        ]
        target = Path(folder) / part.file_name
        _write_cells(target, EXPORT_HEADER, rows, merge)
        written.append(target)
    return written


@dataclass(frozen=True)
class GradesRow:
    """A grades CSV row read back: its ``student``, ``file``, ``status`` and ``cells`` by column."""

    student: str
    file: str
    status: str
    cells: Mapping[str, str]

    @property
    def counted(self) -> bool:
        """False for a copy the ``--keep`` policy did not pick (status ``not counted``)."""
        return self.status != Status.NOT_COUNTED

    @property
    def graded(self) -> bool:
        """Whether the row is someone's counted answers (not an identity failure, not a copy)."""
        return self.counted and self.status not in NOT_GRADED


def read_grades_row(cells: Mapping[str, str]) -> GradesRow:
    """A grades CSV row, by column (a missing cell is blank).

    Parameters
    ----------
    cells : mapping
        Column -> cell.

    Returns
    -------
    GradesRow
    """
    return GradesRow(
        cells.get("student", ""), cells.get("file", ""), cells.get("status", ""), dict(cells)
    )


def read_scores(path: Path) -> list[GradesRow]:
    """The rows of a scores CSV this grader wrote, read back (RegradeRefused if it is not one).

    Parameters
    ----------
    path : Path

    Returns
    -------
    list of GradesRow
    """
    rows = read_rows(path, SCORES_HEADER)
    return [read_grades_row(dict(zip(SCORES_HEADER, row, strict=False))) for row in rows]
