"""Batch grading from the command line: every submitted notebook run in a sandbox and scored.

Each submission runs in a throwaway copy inside bubblewrap (:mod:`lesson_lib.coursework.sandbox`)
and is scored outside it against its student's variant by :mod:`~lesson_lib.coursework.grading`'s
steps; :mod:`~lesson_lib.coursework.grade_outputs` applies the course's policy and writes the CSV
files, Canvas's import file and a feedback page per student. Whatever a submission contains, it
gets a row. ``--student ID`` regrades some students and merges their rows in, scored with the
options the full run recorded.

Command line::

    python -m lesson_lib.coursework.grade submissions/ --out grades.csv
    python -m lesson_lib.coursework.grade submissions/ --out grades.csv --student s017

Exit status: 0 the CSV was written, 2 bad options or no submissions, 3 no sandbox, 128 + the
signal when stopped (the outputs are one set, the earlier or the new), as ``--help`` says.
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import fields
from pathlib import Path
from typing import Any

from lesson_lib.coursework import (
    canvas,
    files,
    grade_outputs,
    grades_csv,
    late_policy,
    manual_grading,
    run_options,
    time_limits,
)
from lesson_lib.coursework.check import CLOSE_CREDIT
from lesson_lib.coursework.grade_outputs import CANVAS_IMPORT_NAME, OutputRefused, Outputs, Run
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.grading import NO_SANDBOX_NOTE, entry_id, grade_folder, grade_notebook
from lesson_lib.coursework.late_policy import LatePolicy
from lesson_lib.coursework.lms_names import read_gradescope_export
from lesson_lib.coursework.parallel import MAX_JOBS, available_cpus, require_jobs
from lesson_lib.coursework.regrade import RegradeRefused, WouldShrink, read_rows, refuse_shrinking
from lesson_lib.coursework.roster import Roster, read_roster, roster_file_in_use
from lesson_lib.coursework.sandbox import SandboxUnavailable, require_sandbox
from lesson_lib.coursework.submissions import Entry, find_submissions, hidden_names
from lesson_lib.coursework.variants import (
    DEFAULT_SALT_FILE,
    SALT_FILE_ENV,
    normalize_student,
    read_salt_file,
    salt_file_in_use,
    set_course_salt,
)
from lesson_lib.model._safe_io import printable, require_output_file, stop_on_signals
from lesson_lib.model._validate import require_number

# grade_notebook and Submission are the grader's names for one notebook, imported from here
__all__ = ["EXIT_NO_SANDBOX", "Submission", "UsageError", "grade_notebook", "main"]

#: Exit status when no sandbox can be made.
EXIT_NO_SANDBOX = 3


class UsageError(Exception):
    """Bad options, or inputs that cannot be graded: the message is printed, the exit status 2."""


@contextmanager
def _refused(errors: type[Exception] | tuple[type[Exception], ...], text: str = "{}") -> Iterator:
    """Raise ``errors`` met inside as a UsageError, their message put into ``text``."""
    try:
        yield
    except errors as err:
        raise UsageError(text.format(err)) from None


def _typed(convert: Callable[[str], Any], allowed: str) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)``, else an error saying the option must be ``allowed``."""

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except (TypeError, ValueError):  # NaN and infinity fail require_number too
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}") from None

    return parse


_timeout_arg = _typed(
    lambda text: require_number(
        "--timeout", float(text), strict=True, maximum=time_limits.MAX_TIMEOUT
    ),
    f"a number of seconds > 0 and <= {time_limits.MAX_TIMEOUT:g}",
)
_close_credit_arg = _typed(
    lambda text: require_number("--close-credit", float(text), maximum=1.0), "a number from 0 to 1"
)
_jobs_arg = _typed(
    lambda text: require_jobs(int(text)), f"a whole number of sandboxes from 1 to {MAX_JOBS}"
)


def _parser() -> argparse.ArgumentParser:
    """The command line's parser: every flag ``make grade`` passes, and the course's options."""
    parser = argparse.ArgumentParser(
        prog="python -m lesson_lib.coursework.grade",
        description="Run submitted problem-set notebooks, each in a sandbox, and write a CSV "
        "of scores.",
        epilog="Exit status: 0 CSV written, 2 bad options or no submissions, 3 no sandbox, "
        "128 + the signal when stopped (130 Ctrl-C, 143 SIGTERM; the outputs are one set, "
        "the earlier or the new).",
    )
    add = parser.add_argument
    # fmt: off
    add("folder", type=Path, help="folder of submissions")
    add("--out", type=Path, default=Path("grades.csv"), help="scores CSV")
    add("--details", type=Path, help="optional CSV: one row per answer")
    add("--timeout", type=_timeout_arg, default=time_limits.DEFAULT_TIMEOUT_S,
        help=f"seconds per notebook, > 0 and <= {time_limits.MAX_TIMEOUT:g} (default {time_limits.DEFAULT_TIMEOUT_S:g}: "
        f"ten times a clean run of the problem set, {time_limits.CLEAN_RUN_S:g} s, and at least "
        f"{time_limits.MIN_TIMEOUT_S:g} s)")
    add("--close-credit", type=_close_credit_arg, default=None,
        help=f"share of a problem's points a close answer earns, 0 to 1 (default {CLOSE_CREDIT:g})")
    add("--jobs", type=_jobs_arg, default=available_cpus(),
        help=f"sandboxes run at once, 1 to {MAX_JOBS} (default: the CPUs this process may use, "
        f"{available_cpus()} here); the CSV is the same whatever it is")
    add("--student", action="append", metavar="ID",
        help="regrade only this student (repeatable); the new rows replace theirs in --out "
        "and --details, every other row is kept as it was")
    add("--replace", action="store_true",
        help="let a full run replace a grades file holding students it has no submission for")
    add("--manual-export", type=Path, metavar="DIR",
        help="write one CSV per part a person grades (q12's reasoning) for a TA to fill in")
    add("--manual-import", type=Path, metavar="DIR",
        help="merge the TA's filled-in files into --out; total and max then count them")
    add("--feedback", type=Path,
        help="folder for one HTML feedback file per student (default: feedback/ beside --out)")
    add("--release", action="store_true",
        help="show q12's rubric beside its points on the feedback pages: only once no late "
        "work is still accepted")
    add("--no-sandbox", action="store_true",
        help="run notebooks without bubblewrap: only for submissions you trust "
        "(every row then carries a warning)")
    issued = parser.add_mutually_exclusive_group()
    issued.add_argument("--roster", type=Path,
        help="CSV: lms_user_id, name, section, student_id (issued IDs); default: the "
        "student edition's roster.csv beside the course salt in use, when it exists")
    issued.add_argument("--no-roster", action="store_true",
        help="read no roster unless --roster names one: any valid ID is graded")
    add("--due", help="due time, ISO 8601 (2026-03-01T23:59-05:00; without a zone, UTC)")
    add("--late-penalty-per-day", type=float, default=None,
        help="fraction of the score taken off per started day late, 0 to 1 (default 0)")
    add("--keep", choices=late_policy.KEEP_CHOICES,
        help="of several submissions of one ID, count the latest or the best (default: flag all)")
    add("--canvas-gradebook", type=Path, help="the gradebook CSV exported from Canvas")
    add("--canvas-out", type=Path,
        help="the Canvas import CSV to write (default: canvas-import.csv beside --out)")
    add("--canvas-assignment", default="Problem set",
        help="the assignment's name in Canvas (default 'Problem set'), matched without case")
    add("--canvas-new-assignment", action="store_true",
        help="write --canvas-assignment as a new column (Canvas creates a new assignment) when "
        "the export has no such column; without it that is refused")
    add("--salt-file", type=Path, default=None,
        help=f"the course salt the student edition was made with (default: ${SALT_FILE_ENV}, "
        f"else {DEFAULT_SALT_FILE} when it exists; without one the public variants are graded)")
    add("--no-salt", action="store_true",
        help="grade against the public variants even where a course salt is found "
        "(notebooks made without one, such as tests/hostile)")
    # fmt: on
    return parser


def _same_file(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))


def _check_outputs(args: argparse.Namespace, salt_file: Path | None) -> None:
    """Refuse output paths that cannot be written, or that name an input or another output."""
    canvas_out = args.canvas_out if args.canvas_gradebook is not None else None
    outputs = [("--out", args.out), ("--details", args.details), ("--canvas-out", canvas_out)]
    outputs = [(option, path) for option, path in outputs if path is not None]
    for option, target in outputs:
        with _refused(ValueError):
            require_output_file(target, option)
    roster = roster_file_in_use(args.roster, salt_file, off=args.no_roster)
    inputs = [
        ("--roster", roster),
        ("--canvas-gradebook", args.canvas_gradebook),
        ("--salt-file", salt_file),
    ]
    for index, (option, target) in enumerate(outputs):
        for other, path in outputs[:index] + [(o, p) for o, p in inputs if p is not None]:
            if _same_file(target, path):
                raise UsageError(
                    f"{option} and {other} name the same file ({target}): writing one would "
                    "replace the other; give two names"
                )


def _salt(args: argparse.Namespace) -> tuple[str | None, Path | None]:
    """Set the course salt the variants are drawn with; (salt, its file)."""
    if args.no_salt and args.salt_file is not None:
        raise UsageError("--no-salt and --salt-file contradict each other")
    salt_file = None if args.no_salt else salt_file_in_use(args.salt_file)
    with _refused((OSError, ValueError), "--salt-file: {}"):
        salt = read_salt_file(salt_file) if salt_file else None
    set_course_salt(salt)
    print(
        f"variants: the course salt in {salt_file}"
        if salt_file
        else "variants: public (no course salt; see --salt-file)"
    )
    return salt, salt_file


def _scoring_options(
    args: argparse.Namespace, salt: str | None, salt_file: Path | None
) -> dict[str, Any]:
    """The options that change scores, a regrade's taken from the run that wrote the grades;
    ``args`` is updated in place, a full run's with the defaults of the options it was not given."""
    in_use = roster_file_in_use(args.roster, salt_file, off=args.no_roster)
    roster = str(in_use.resolve()) if in_use is not None else ""
    given = {
        "roster": roster if args.roster is not None or args.no_roster else None,
        "due": args.due,
        "late_penalty_per_day": args.late_penalty_per_day,
        "keep": args.keep,
        "close_credit": args.close_credit,
        "salt": salt,
    }
    with _refused(ValueError, "{}; nothing graded"):
        recorded = run_options.read_options(args.out) if args.student is not None else None
    if recorded is None:
        used = {
            key: run_options.DEFAULTS[key] if value is None else value
            for key, value in given.items()
        }
        used["roster"] = roster
    else:
        with _refused(run_options.OptionsDiffer, "{}; nothing graded"):
            used = run_options.reconcile(recorded, given)
        print(f"regrade: scored as the run that wrote {args.out}: {run_options.describe(used)}")
        args.roster = Path(used["roster"]) if used["roster"] else None
        args.no_roster = not used["roster"]
    args.due, args.keep = used["due"], used["keep"]
    args.late_penalty_per_day = float(used["late_penalty_per_day"])
    args.close_credit = float(used["close_credit"])
    return used


def _course(args: argparse.Namespace, salt_file: Path | None) -> tuple[Roster | None, LatePolicy]:
    """Read the roster and the policy, and check the Canvas export, before anything is graded."""
    with _refused((OSError, ValueError)):
        roster_file = roster_file_in_use(args.roster, salt_file, off=args.no_roster)
        roster = read_roster(roster_file) if roster_file is not None else None
        if roster is not None:
            _say_roster(roster_file, roster, named=args.roster is not None)
        policy = LatePolicy(late_policy.parse_due(args.due) if args.due else None,
                            args.late_penalty_per_day, args.keep)  # fmt: skip
        read_gradescope_export(args.folder)  # a broken export stops here, not after grading
        if args.canvas_gradebook is not None:
            canvas.check_gradebook(
                args.canvas_gradebook, args.canvas_assignment, args.canvas_new_assignment
            )
            if args.canvas_out is None:
                args.canvas_out = args.out.parent / CANVAS_IMPORT_NAME
            require_output_file(args.canvas_out, "--canvas-out")
    return roster, policy


def _say_roster(path: Path, roster: Roster, *, named: bool) -> None:
    """One line on the roster in use, and what its blank platform columns leave unchecked."""
    source = "" if named else " (the IDs the student edition issued; --no-roster reads none)"
    print(
        f"roster: {path}{source}: {len(roster.entries)} ID(s); an ID not on it is "
        "'unknown ID', not run"
    )
    blank = roster.without_platform_user()
    if blank:
        print(
            f"note: {len(blank)} roster row(s) have no lms_user_id or email: for them the "
            "platform's user is not compared with the ID, and Canvas's gradebook is filled "
            "only from a Canvas download name"
        )


def _regraded(args: argparse.Namespace, found: Sequence[Entry]) -> set[str] | None:
    """The IDs of ``--student`` (None for a full run); raises UsageError when it cannot be done."""
    export = read_gradescope_export(args.folder)
    if args.student is None:
        if not args.replace:
            graded = {entry_id(e, export) for e in found}
            with _refused(WouldShrink):
                refuse_shrinking(args.out, grades_csv.SCORES_HEADER, graded)
        return None
    wanted: set[str] = set()
    for raw in args.student:
        try:
            sid = normalize_student(raw)
        except (TypeError, ValueError) as err:
            raise UsageError(
                f"--student {printable(raw, 80)!r} is not a valid student ID ({err})"
            ) from None
        if sid is None:
            raise UsageError("--student needs an ID, got an empty one")
        wanted.add(sid)
    have = {entry_id(e, export).casefold() for e in found}
    missing = sorted(w for w in wanted if w.casefold() not in have)
    if missing:
        raise UsageError(
            f"--student: no submission in {args.folder} for {', '.join(missing)}; "
            "nothing graded, the grades files are as they were"
        )
    for option, path, header in (
        ("--out", args.out, grades_csv.SCORES_HEADER),
        ("--details", args.details, grades_csv.DETAILS_HEADER),
    ):
        with _refused(RegradeRefused, option + ": cannot merge the regrade: {}"):
            if path is not None:
                read_rows(path, header)
    return wanted


def _compile_lesson_lib() -> bool:
    """Write ``lesson_lib``'s bytecode before grading: a sandbox mounts it read-only, where every
    kernel would compile the package again (about 3x slower, see ``benchmarks/README.md``)."""
    import compileall

    import lesson_lib

    try:
        return bool(compileall.compile_dir(Path(lesson_lib.__file__).parent, quiet=2, workers=1))
    except OSError:
        return False


def _prepare(args: argparse.Namespace) -> Run:
    """Every check that can refuse the run, before anything is graded."""
    salt, salt_file = _salt(args)
    scoring = _scoring_options(args, run_options.salt_fingerprint(salt), salt_file)
    roster, policy = _course(args, salt_file)
    if not args.folder.is_dir():
        raise UsageError(f"{args.folder} is not a folder")
    _check_outputs(args, salt_file)
    found = find_submissions(args.folder)
    if not found:
        raise UsageError(f"no submissions in {args.folder}")
    regraded = _regraded(args, found)
    manual = None
    if args.manual_import is not None:
        with _refused((OSError, ValueError), "--manual-import: {}"):
            manual = manual_grading.read_folder(args.manual_import)
    hidden = hidden_names(args.folder)
    if hidden:
        shown = ", ".join(printable(h, 40) for h in hidden[:5])
        more = f" and {len(hidden) - 5} more" if len(hidden) > 5 else ""
        print(f"note: names starting with '.' are not submissions, left out: {shown}{more}")
    return Run(roster, policy, scoring, found, regraded, manual)


def _grade(args: argparse.Namespace, run: Run) -> list[Submission]:
    """Grade the folder (KeyboardInterrupt carries the signal that stopped it)."""
    with stop_on_signals():
        return grade_folder(
            args.folder, args.timeout, sandbox=not args.no_sandbox, progress=sys.stdout,
            roster=run.roster, jobs=args.jobs, students=run.regraded,
            close_credit=args.close_credit,
        )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional

    Returns
    -------
    int
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        run = _prepare(args)
        _compile_lesson_lib()
        if args.no_sandbox:
            print(f"{NO_SANDBOX_NOTE}: submissions can read and change your files", file=sys.stderr)
        else:
            require_sandbox()
        try:
            subs = _grade(args, run)
            outputs = Outputs(**{f.name: getattr(args, f.name) for f in fields(Outputs)})
            _write(outputs, run, subs)
        except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM, SIGHUP: sandbox and copies gone
            signum = getattr(stop, "signum", signal.SIGINT)
            what = "no grades written, the earlier outputs are as they were"
            if getattr(stop, "in_place", False):
                what = "the new outputs were already in place, as one set"
            print(f"\ninterrupted ({signal.Signals(signum).name}): {what}", file=sys.stderr)
            return 128 + signum
    except (UsageError, OutputRefused) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except SandboxUnavailable as exc:
        print(f"error: cannot grade safely: {exc}", file=sys.stderr)
        return EXIT_NO_SANDBOX
    grade_outputs.report(subs, run.policy)
    return 0


def _write(outputs: Outputs, run: Run, subs: list[Submission]) -> None:
    """Write every output as one set (:func:`~.files.output_set`), then say what was written."""
    canvas_out = outputs.canvas_out if outputs.canvas_gradebook is not None else None
    folders = [p.parent for p in (outputs.out, outputs.details, canvas_out) if p is not None]
    folders += [outputs.feedback or outputs.out.parent / "feedback", outputs.manual_export]
    said = io.StringIO()
    manifest = files.manifest_of(outputs.out)
    with files.output_set(manifest, [f for f in folders if f], run.regraded is None) as earlier:
        with redirect_stdout(said):
            grade_outputs.write_grades(outputs, run, subs)
            grade_outputs.write_for_people(outputs, run, subs, earlier)
    print(said.getvalue(), end="")


if __name__ == "__main__":
    sys.exit(main())
