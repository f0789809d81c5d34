"""The grader's last step: the course's policy applied to the graded rows, the grades files,
Canvas's import file and the feedback pages written, and what the policy did said; called by
:mod:`~lesson_lib.coursework.grade` after grading.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lesson_lib.coursework import (
    canvas,
    files,
    grades_csv,
    late_policy,
    manual_grading,
    manual_import,
    run_options,
)
from lesson_lib.coursework.feedback import write_feedback
from lesson_lib.coursework.graded import Submission, total_points
from lesson_lib.coursework.late_policy import LatePolicy
from lesson_lib.coursework.lms_names import read_gradescope_export
from lesson_lib.coursework.regrade import RegradeRefused
from lesson_lib.coursework.roster import Roster
from lesson_lib.coursework.status import IDENTITY_FAILURES, Status
from lesson_lib.coursework.submissions import Entry
from lesson_lib.model._safe_io import printable

#: Canvas's import file, beside the grades file unless ``--canvas-out`` names another.
CANVAS_IMPORT_NAME = "canvas-import.csv"
#: What a run refused while writing its outputs leaves, the outputs being one set (see
#: :func:`~lesson_lib.coursework.files.output_set`).
NOTHING_WRITTEN = "nothing written, the earlier outputs are as they were"


class OutputRefused(Exception):
    """A grades file that cannot be written or merged: the grader prints it, exit status 2."""


@dataclass(frozen=True)
class Outputs:
    """Where a run writes, named as the grader's options are."""

    #: The submissions folder (its Gradescope export names Canvas's users).
    folder: Path
    #: The scores CSV; the run's options are recorded beside it.
    out: Path
    #: The per-answer CSV.
    details: Path | None = None
    #: The folder for the TA's files.
    manual_export: Path | None = None
    #: The folder of the TA's filled-in files.
    manual_import: Path | None = None
    #: The feedback pages' folder (None for ``feedback/`` beside ``out``).
    feedback: Path | None = None
    #: Canvas's gradebook export (None for no Canvas file).
    canvas_gradebook: Path | None = None
    #: Canvas's import file (None for one beside ``out``).
    canvas_out: Path | None = None
    #: The assignment's column, matched without case.
    canvas_assignment: str = "Problem set"
    #: Add that column when the export has none.
    canvas_new_assignment: bool = False
    #: Show manual parts' rubrics on the feedback pages (no late work still accepted).
    release: bool = False


@dataclass(frozen=True)
class Run:
    """What a run decided before grading."""

    roster: Roster | None
    policy: LatePolicy
    #: The options that change scores, as :mod:`~lesson_lib.coursework.run_options` records them.
    scoring: dict[str, Any]
    #: The submissions found in the folder.
    found: list[Entry]
    #: The IDs a ``--student`` run regrades; None for a full run.
    regraded: set[str] | None
    #: The TA's points, as :func:`~lesson_lib.coursework.manual_grading.read_folder` reads them.
    manual: dict[str, dict[str, float | None]] | None = None


def write_grades(outputs: Outputs, run: Run, subs: list[Submission]) -> None:
    """Apply the policy, then write the scores, details, options and the TA's files.

    Parameters
    ----------
    outputs : Outputs
    run : Run
    subs : list of Submission
        The graded rows; the policy and the TA's points are applied to them in place.

    Raises
    ------
    OutputRefused
        If a grades file changed since the run checked it, or the TA's files cannot be merged.
    """
    odd_times = late_policy.implausible_times_warning(late_policy.apply_policy(subs, run.policy))
    if odd_times:
        print(odd_times, file=sys.stderr)
    if run.manual is not None:
        manual_grading.given_manual_points(subs, run.manual)
    for path, write in (
        (outputs.out, grades_csv.write_scores),
        (outputs.details, grades_csv.write_details),
    ):
        if path is not None:
            try:
                kept = write(subs, path, run.regraded)
            except RegradeRefused as err:  # checked before grading; changed meanwhile
                raise OutputRefused(f"{err}; {NOTHING_WRITTEN}") from None
            merged = ""
            if run.regraded is not None:
                merged = f" ({len(run.regraded)} regraded student(s) merged in)"
            print(
                f"wrote {path}{merged}" + (f" (the previous one is kept as {kept})" if kept else "")
            )
    if run.regraded is None:
        run_options.record_options(outputs.out, run.scoring)
    if outputs.manual_export is not None:
        for path in grades_csv.write_manual_export(subs, outputs.manual_export, run.regraded):
            print(f"wrote {path}")
    if outputs.manual_import is not None:
        try:
            filled, _ = manual_import.merge(outputs.out, outputs.manual_import)
        except (OSError, manual_grading.ManualImportError, RegradeRefused) as err:
            raise OutputRefused(f"--manual-import: {err}; {NOTHING_WRITTEN}") from None
        print(f"merged {filled} points cell(s) from {outputs.manual_import} into {outputs.out}")


def _write_canvas(outputs: Outputs, found: Sequence[Entry], roster: Roster | None) -> None:
    """Write Canvas's import file from the grades file as written, and say what it holds."""
    target = outputs.canvas_out or outputs.out.parent / CANVAS_IMPORT_NAME
    rows = grades_csv.read_scores(outputs.out)
    users = canvas.canvas_users(found, roster, read_gradescope_export(outputs.folder))
    summary = canvas.fill_gradebook(
        outputs.canvas_gradebook,
        target,
        canvas.canvas_scores(rows, users),
        max((float(row.cells["max"]) for row in rows), default=total_points()),
        outputs.canvas_assignment,
        outputs.canvas_new_assignment,
    )
    print(
        f"wrote {target}: column {summary.column!r}, {summary.filled} score(s), "
        f"{len(summary.empty)} left empty"
    )
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if summary.empty:
        shown = "; ".join(printable(s, 40) for s in summary.empty[:10])
        print(f"warning: no counted grade for {shown} (see the notes)", file=sys.stderr)
    if summary.unmatched:
        shown = "; ".join(printable(u, 40) for u in summary.unmatched[:10])
        print(f"warning: Canvas user(s) not in the gradebook export: {shown}", file=sys.stderr)


def write_for_people(
    outputs: Outputs, run: Run, subs: list[Submission], earlier: Sequence[Path] = ()
) -> None:
    """Write the Canvas file (or warn that a regrade left it stale) and the feedback pages; a full
    run removes the pages of the ``earlier`` set (its files) of students it does not have.

    Parameters
    ----------
    outputs : Outputs
    run : Run
    subs : list of Submission
    earlier : sequence of Path, optional
    """
    if outputs.canvas_gradebook is not None:
        _write_canvas(outputs, run.found, run.roster)
    elif run.regraded is not None and (stale := outputs.out.parent / CANVAS_IMPORT_NAME).exists():
        print(
            f"warning: {stale} was written before this regrade "
            "and does not have its scores: pass --canvas-gradebook again to rewrite it",
            file=sys.stderr,
        )
    feedback = outputs.feedback if outputs.feedback is not None else outputs.out.parent / "feedback"
    try:
        handed = write_feedback(subs, feedback, outputs.release)
    except (OSError, ValueError) as err:
        print(f"warning: no feedback written ({err})", file=sys.stderr)
    else:
        print(f"wrote {len(handed)} feedback file(s) into {feedback}")
        mine, here = {os.path.abspath(page) for page in handed}, Path(os.path.abspath(feedback))
        departed = [p for p in earlier if p.parent == here and str(p) not in mine]
        for page in departed if run.regraded is None else ():
            files.remove_with_set(page)
            print(f"removed {page}: its student is not in this run")


def _warn(what: str, subs: Sequence[Submission], sep: str = ", ") -> None:
    """One warning naming the files of some rows (at most 10), if there are any."""
    if subs:
        names = sep.join(printable(ascii(s.file), 80) for s in subs[:10])
        print(f"warning: {len(subs)} {what}: {names}", file=sys.stderr)


def report(subs: Sequence[Submission], policy: LatePolicy) -> None:
    """Say what the late policy and ``--keep`` did, and which rows still need a decision.

    Parameters
    ----------
    subs : sequence of Submission
        The rows as written.
    policy : LatePolicy
    """
    late = [s for s in subs if s.late_factor < 1]
    if late:
        shown = "; ".join(f"{printable(s.student, 40)} x {s.late_factor:g}" for s in late[:10])
        more = f" and {len(late) - 10} more" if len(late) > 10 else ""
        print(
            f"late policy: {len(late)} late submission(s), total after the penalty: {shown}{more}"
        )
    dropped = [s for s in subs if not s.counted]
    if dropped:
        print(f"--keep {policy.keep}: {len(dropped)} earlier or lower copy(ies) not counted")
    counts: dict[str, int] = {}
    for sub in subs:
        if sub.counted and sub.status not in IDENTITY_FAILURES:
            counts[sub.student.casefold()] = counts.get(sub.student.casefold(), 0) + 1
    duplicates = {printable(key, 80) for key, n in counts.items() if n > 1}
    if duplicates:
        print(
            "warning: duplicate student IDs, every copy graded and flagged in the notes "
            f"(--keep latest or best picks one): {'; '.join(sorted(duplicates))}",
            file=sys.stderr,
        )
    _warn(
        "submission(s) of an ID that two platform users handed in, not graded (see the notes)",
        [s for s in subs if s.id_shared],
        "; ",
    )
    _warn(
        "submission(s) call reference(), solution_text() or the problem bank (see the notes)",
        [s for s in subs if s.answer_lookup],
    )
    _warn(
        "name(s) are not valid student IDs, not graded (see the notes; one may imitate "
        "another student's ID)",
        [s for s in subs if s.status == Status.INVALID_ID],
    )
