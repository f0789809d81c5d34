"""Batch grading: run every submitted problem-set notebook in a sandbox and score its answers.

Submissions are code written by students, so each one runs in its own
throwaway copy inside an operating-system sandbox (bubblewrap, see
:mod:`lesson_lib.coursework.sandbox`): no network, nothing writable but the
copy, no other submission and no grader output in sight, a clean
environment, limits on memory, processes, output and time, and every
process it started killed when it ends. Inside, the whole notebook runs
(:mod:`lesson_lib.coursework.runner`, kernel included) and the
``answer_q...`` variables are saved. The answers are scored here, outside
the sandbox, with :func:`~lesson_lib.coursework.check.check` against the
variant of the student named by the file, so nothing a submission does can
change another's grade or pick its own variant. If a notebook cannot run
(not a notebook, kernel died, killed at the limit) the answers typed as
plain values in its answer cells are read from the source instead, and the
notes column says so.

Whatever a submission contains, it gets a row; both CSV files are written
atomically at the end, an earlier file that differs kept under a name with
the time, and only to a new path or a regular file (``--out`` and
``--details`` two different ones). Duplicate student IDs (``s1.ipynb``, ``S1.ipynb`` and
``s1/problems.ipynb``) are all graded and flagged, never silently merged.

Whose a notebook is comes from its file or folder name (Canvas's and
Gradescope's download names included), its metadata and, with a
roster, the platform's user (:mod:`~lesson_lib.coursework.identity`):
when they disagree, or give no ID, or one off the roster, the row is
``ID mismatch`` or ``unknown ID`` and scores nothing. The roster is
``--roster``, else the IDs the student edition issued, kept beside the
course salt in use (:func:`~lesson_lib.coursework.roster.roster_file_in_use`;
``--no-roster`` turns that off). ``--due``,
``--late-penalty-per-day`` and ``--keep`` apply a late and resubmission
policy (:mod:`~lesson_lib.coursework.late_policy`); ``--canvas-gradebook``
writes Canvas's import file from its gradebook export
(:mod:`~lesson_lib.coursework.canvas`).
Up to ``--jobs`` sandboxes run at once (default: the CPUs this process may
use; :mod:`~lesson_lib.coursework.parallel`), with the rows in the same
order and the files the same as one at a time. ``--student ID``
(repeatable) regrades those students and merges their rows into the
existing files (:mod:`~lesson_lib.coursework.regrade`). One HTML feedback
page per student is written beside the CSV
(:mod:`~lesson_lib.coursework.feedback`), and ``--manual-export`` /
``--manual-import`` hand the reasoning a person grades to a TA and back
(:mod:`~lesson_lib.coursework.manual_grading`).

Command line::

    python -m lesson_lib.coursework.grade submissions/ --out grades.csv
    python -m lesson_lib.coursework.grade submissions/ --out grades.csv --student s017

Exit status: 0 the CSV was written (whatever the submissions contained),
2 bad options or no submissions, 3 no sandbox available (install
bubblewrap, or pass ``--no-sandbox`` for submissions you trust), 128 + the
signal when stopped by Ctrl-C (130), SIGTERM (143) or SIGHUP (129): the
sandbox and every temporary copy are removed first, and no CSV is written.
"""

from __future__ import annotations

import argparse
import ast
import csv
import filecmp
import json
import math
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from lesson_lib.coursework.answers import MAX_SHOWN_CHARS, Reading, plain_text
from lesson_lib.coursework.canvas import fill_gradebook
from lesson_lib.coursework.check import (
    CLOSE_CREDIT,
    MAX_MESSAGE_CHARS,
    UNREADABLE,
    CheckResult,
    CheckTimeout,
    check,
)
from lesson_lib.coursework.feedback import write_feedback
from lesson_lib.coursework.identity import (
    ID_MISMATCH,
    NOT_GRADED,
    UNKNOWN_ID,
    Identity,
    identify,
)
from lesson_lib.coursework.late_policy import (
    KEEP_CHOICES,
    LatePolicy,
    apply_policy,
    implausible_times_warning,
    parse_due,
)
from lesson_lib.coursework.lms_names import read_gradescope_export
from lesson_lib.coursework.lookups import find_lookups, lookup_note
from lesson_lib.coursework.manual_grading import (
    EXPORT_HEADER,
    LATE_FACTOR_COLUMN,
    MANUAL_PARTS,
    MAX_REASONING_CHARS,
    ManualImportError,
    export_rows,
    import_into,
    read_folder,
    reasoning_answers,
)
from lesson_lib.coursework.parallel import MAX_JOBS, available_cpus, require_jobs, run_in_order
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.regrade import RegradeRefused, merge_rows, read_rows, shrink_problem
from lesson_lib.coursework.roster import Roster, read_roster, roster_file_in_use
from lesson_lib.coursework.run_options import (
    DEFAULTS,
    OptionsDiffer,
    describe,
    read_options,
    reconcile,
    record_options,
    salt_fingerprint,
)
from lesson_lib.coursework.runner import MAX_OUTPUT, code_sources
from lesson_lib.coursework.sandbox import (
    SANDBOX_HOME,
    Limits,
    MiB,
    SandboxUnavailable,
    require_sandbox,
    run_isolated,
)
from lesson_lib.coursework.shared_ids import flag_shared_ids
from lesson_lib.coursework.student_ids import id_problem, skeleton
from lesson_lib.coursework.submissions import (
    Entry,
    find_submissions,
    hidden_names,
    read_notebook,
    static_student,
)
from lesson_lib.coursework.time_limits import (
    CLEAN_RUN_S,
    DEFAULT_TIMEOUT_S,
    GRACE_S,
    MAX_TIMEOUT,
    MIN_TIMEOUT_S,
)
from lesson_lib.coursework.variants import (
    DEFAULT_SALT_FILE,
    SALT_FILE_ENV,
    normalize_student,
    read_salt_file,
    salt_file_in_use,
    set_course_salt,
)
from lesson_lib.model._safe_io import (
    keep_previous,
    printable,
    require_output_file,
    stop_on_signals,
)
from lesson_lib.model._validate import require_number

#: Largest code cell whose source is parsed for plain answers, characters.
MAX_CELL_CHARS = 20_000
#: Note added to every row graded with ``--no-sandbox``.
NO_SANDBOX_NOTE = "WARNING: graded without the sandbox (--no-sandbox)"
#: Exit status when no sandbox can be made.
EXIT_NO_SANDBOX = 3
#: Seconds the grader gives one answer's check (it takes microseconds, readings are small).
CHECK_SECONDS = 2.0
#: Longest student, file or status cell of a CSV, characters.
MAX_CELL_TEXT = 200
#: Longest notes cell of the scores CSV, characters.
MAX_NOTES_CHARS = 2000

_COPY = "submission.ipynb"
_MAX_RESULT_BYTES = 2**20


def problem_points() -> dict[str, float]:
    """Every automatically graded problem's points, by id, in the set's order.

    Returns
    -------
    dict
        Problem id -> :attr:`~lesson_lib.coursework.problems.bank.Problem.max_points`.
    """
    return {qid: problem.max_points for qid, problem in PROBLEMS.items()}


def total_points(manual_parts: Collection[str] = ()) -> float:
    """The most points of the set: its problems', plus those of the parts a person grades given.

    Parameters
    ----------
    manual_parts : collection of str
        Problem ids of the parts a person grades that count
        (:data:`~lesson_lib.coursework.manual_grading.MANUAL_PARTS`, imported).

    Returns
    -------
    float
    """
    return sum(problem_points().values()) + sum(MANUAL_PARTS[q].points for q in manual_parts)


@dataclass
class Submission:
    """One graded notebook.

    Attributes
    ----------
    student : str
        Student ID (from the file or folder name, lower-cased), or the name
        as found if it is not a valid ID.
    path : Path
        The notebook.
    status : str
        ``"ran"``, ``"ran with errors"``, ``"out of space"``, ``"timed out"``,
        ``"kernel died"``, ``"could not run"``, ``"not a notebook"``, ``"invalid ID"``,
        ``"ID mismatch"``, ``"unknown ID"`` or ``"answer lookup"`` (it ran, and its code calls ``reference(`` or
        imports the problem bank: :mod:`~lesson_lib.coursework.lookups`).
    answers : dict
        ``answer_q...`` values found, by problem id.
    results : dict
        Problem id -> CheckResult, the verdict per problem.
    notes : list of str
        Anything the instructor should know about this submission.
    file : str
        The notebook's path relative to the submissions folder.
    seconds : float
        Wall-clock seconds it took to grade.
    looks_like : str
        For a name that is not a valid ID, the plain ID it looks like
        (:func:`~lesson_lib.coursework.student_ids.skeleton`), else "".
    identity : Identity or None
        Who it belongs to and when it was handed in
        (:func:`~lesson_lib.coursework.identity.identify`).
    late_factor : float
        What the late policy leaves of its score (1 on time;
        :mod:`~lesson_lib.coursework.late_policy`).
    counted : bool
        False for a resubmission the ``--keep`` policy did not pick.
    graded_as : str or None
        The normalised student ID the answers are checked against (None: no valid ID).
    from_source : dict
        Problem id -> why its answer was read from the notebook's source
        rather than from the kernel (the notebook stopped, or could not run).
    reasoning : dict
        Problem id -> the reasoning typed for a part a person grades
        (:data:`~lesson_lib.coursework.manual_grading.MANUAL_PARTS`).
    manual : dict
        Problem id -> the points a TA gave its part a person grades (None:
        not graded yet), for the parts imported with ``--manual-import``.
    """

    student: str
    path: Path
    status: str = "ran"
    answers: dict[str, Any] = field(default_factory=dict)
    results: dict[str, CheckResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    file: str = ""
    seconds: float = 0.0
    looks_like: str = ""
    identity: Identity | None = None
    late_factor: float = 1.0
    counted: bool = True
    graded_as: str | None = None
    from_source: dict[str, str] = field(default_factory=dict)
    reasoning: dict[str, str] = field(default_factory=dict)
    manual: dict[str, float | None] = field(default_factory=dict)

    @property
    def earned(self) -> float:
        """Points earned before the late policy, every problem's and the TA's given."""
        automatic = sum(r.points for r in self.results.values())
        return automatic + sum(v for v in self.manual.values() if v is not None)

    @property
    def total(self) -> float:
        """The points that count, :attr:`earned` times the late policy's ``late_factor``."""
        return round(self.earned * self.late_factor, 4)

    @property
    def max_points(self) -> float:
        """The most points, every problem's and each imported part's a person grades."""
        return total_points(self.manual)


def static_answers(nb: object, first: int = 0) -> dict[str, Any]:
    """Answers typed as plain values (``answer_q3 = 1.5``) in a notebook's code cells.

    Never raises: cells that are not text, too long (over
    :data:`MAX_CELL_CHARS`) or not Python are skipped.

    Parameters
    ----------
    nb : dict
        The notebook as parsed JSON or ``nbformat.NotebookNode`` (not executed).
    first : int, default 0
        Index, among the code cells, of the first one read (the cell a
        notebook stopped at: the ones before it ran).

    Returns
    -------
    dict
        By problem id; the last assignment wins. Anything that is not a
        literal (an expression, a function call) is left out.
    """
    answers: dict[str, Any] = {}
    try:
        sources = code_sources(nb)
    except ValueError:
        return answers
    for source in sources[max(first, 0) :]:
        if len(source) > MAX_CELL_CHARS or "answer_q" not in source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id.startswith("answer_q"):
                qid = target.id[len("answer_") :]
                try:
                    answers[qid] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    answers.pop(qid, None)
    return answers


def _read_json_file(path: Path, limit: int) -> object:
    """Parse a JSON file of at most ``limit`` bytes, without following a symbolic link."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError("not a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit // 2**20} MiB")
    return json.loads(data.decode("utf-8", "replace"))


def _describe(err: BaseException) -> str:
    kind = type(err).__name__
    if isinstance(err, OSError) and err.strerror:
        return f"{kind}: {err.strerror}"
    if isinstance(err, ValueError | TypeError) and str(err) and len(str(err)) < 80:
        return f"{kind}: {err}"
    return kind


def _plain_payload(payload: object) -> tuple[dict[str, Reading], str | None] | None:
    """Readings of the answers and the declared STUDENT from the runner's payload.

    Only the problems' ids are looked up, and each answer must be a reading
    (:meth:`~lesson_lib.coursework.answers.Reading.from_json` checks every
    field's type and size); anything else from the sandbox is dropped.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("answers"), dict):
        return None
    found = payload["answers"]
    answers = {
        q: Reading.from_json(found[f"answer_{q}"]) for q in PROBLEMS if f"answer_{q}" in found
    }
    return answers, plain_text(payload.get("student"))


def check_in_time(
    qid: str, answer: object, student: str | None, close_credit: float = CLOSE_CREDIT
) -> CheckResult:
    """:func:`~lesson_lib.coursework.check.check`, stopped after :data:`CHECK_SECONDS`.

    In the main thread a timer (``SIGALRM``) interrupts a check that runs
    too long; the answer then scores nothing and the message says why. In
    other threads no timer can be set and the check runs unbounded (it only
    ever sees readings or literals of bounded size).

    Parameters
    ----------
    qid : str
        Problem id.
    answer : object
        A :class:`~lesson_lib.coursework.answers.Reading`, or a literal read from the source.
    student : str or None
        The normalised student ID.
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of the problem's points a close answer earns, 0 to 1.

    Returns
    -------
    CheckResult
    """
    if threading.current_thread() is not threading.main_thread():
        return check(qid, answer, student=student, close_credit=close_credit)

    def stop(signum: int, frame: object) -> None:
        raise CheckTimeout

    previous = signal.signal(signal.SIGALRM, stop)
    try:
        signal.setitimer(signal.ITIMER_REAL, CHECK_SECONDS)
        try:
            return check(qid, answer, student=student, close_credit=close_credit)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except CheckTimeout:
        return CheckResult(
            qid,
            UNREADABLE,
            f"Checking this answer took longer than {CHECK_SECONDS:g} s, so it was not read.",
            0.0,
            "<not read>",
        )
    finally:
        signal.signal(signal.SIGALRM, previous)


def _execute(
    nb: dict,
    timeout: float,
    sandbox: bool,
    limits: Limits,
    workdir: Path,
    cancel: threading.Event | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """Run the notebook ``nb`` (as read) through the runner in a throwaway copy; (record, note).

    The runner writes its record to a file opened here, outside the sandbox,
    and passed as a file descriptor: nothing inside can write it by a path.
    """
    scratch = Path(tempfile.mkdtemp(prefix="submission-", dir=workdir))
    result_fd, result = tempfile.mkstemp(prefix="result-", suffix=".json", dir=workdir)
    try:
        # the notebook as it was read and checked here, not the file again
        (scratch / _COPY).write_text(json.dumps(nb), encoding="utf-8")
        home = SANDBOX_HOME if sandbox else str(scratch)
        try:
            run = run_isolated(
                [
                    sys.executable,
                    "-m",
                    "lesson_lib.coursework.runner",
                    f"{home}/{_COPY}",
                    "--timeout",
                    repr(timeout),
                    "--result-fd",
                    str(result_fd),
                ],
                scratch,
                timeout=timeout + GRACE_S,
                limits=limits,
                sandbox=sandbox,
                pass_fds=(result_fd,),
                cancel=cancel,
            )
        finally:
            os.close(result_fd)
        note = ""
        if run.leftovers:
            note = f"{len(run.leftovers)} leftover process(es) killed after the run"
        try:
            record = _read_json_file(Path(result), _MAX_RESULT_BYTES)
        except (OSError, ValueError, RecursionError, MemoryError):
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("status"), str):
            if run.timed_out:
                return {"status": "timed out", "raised": 0}, note
            why = (
                f"killed by signal {-run.returncode}"
                if run.returncode < 0
                else f"exit status {run.returncode}"
            )
            return {"status": "could not run", "error": f"no result ({why})"}, note
        return record, note
    finally:
        Path(result).unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


def grade_notebook(
    name: str,
    path: Path,
    timeout: float = DEFAULT_TIMEOUT_S,
    *,
    sandbox: bool = True,
    limits: Limits | None = None,
    workdir: Path | None = None,
    entry: Entry | None = None,
    identity: Identity | None = None,
    score: bool = True,
    cancel: threading.Event | None = None,
    close_credit: float = CLOSE_CREDIT,
) -> Submission:
    """Run one submission in its sandbox and score every problem; never raises on a bad one.

    A name that is not a valid student ID
    (:func:`~lesson_lib.coursework.student_ids.normalize_student`) is not
    run: its row has the status ``"invalid ID"`` and scores nothing, so no
    one can pick a variant, or the book's, by how a file is named.

    Parameters
    ----------
    name : str
        The ID the file system gives it (file stem or folder name, tails taken off).
    path : Path
        The notebook.
    timeout : float, default :data:`~lesson_lib.coursework.time_limits.DEFAULT_TIMEOUT_S`
        Seconds the notebook's cells may run, counted once its kernel is ready;
        the sandbox is killed :data:`~lesson_lib.coursework.time_limits.GRACE_S` seconds later whatever happens.
    sandbox : bool, default True
        False runs it without bubblewrap (``--no-sandbox``; a warning is noted).
    limits : Limits, optional
        Resource limits (:class:`~lesson_lib.coursework.sandbox.Limits` defaults).
    workdir : Path, optional
        Private folder for the throwaway copies (default: a temporary one).
    entry : Entry, optional
        What :func:`~lesson_lib.coursework.submissions.find_submissions` found
        (the name as it stands, why it cannot be graded); default: ``path``
        as a notebook file named ``name``.
    identity : Identity, optional
        Who it belongs to (:func:`~lesson_lib.coursework.identity.identify`):
        its ID replaces ``name``, and an ``ID mismatch`` or ``unknown ID`` is
        not run and scores nothing.
    score : bool, default True
        False leaves ``results`` empty, for :func:`score_submission` to fill
        in the main thread (where each check has its time limit).
    cancel : threading.Event, optional
        Set by another thread to stop the run
        (:class:`~lesson_lib.coursework.sandbox.Cancelled` is raised).
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of a problem's points a close answer earns, 0 to 1.

    Returns
    -------
    Submission
        Status, answers, one result per problem, notes.
    """
    started = time.monotonic()
    entry = entry or Entry(path.name, name, path)
    if identity is not None:
        name = identity.student or printable(ascii(entry.stem)[1:-1], 80)
    sub = Submission(student=name, path=path, file=entry.file, identity=identity)
    sub.notes.extend(entry.notes)
    if identity is not None:
        sub.notes.extend(identity.notes)
        if identity.status:  # never graded against a guessed variant, nor the book's
            sub.status = identity.status
            sub.results = {q: check_in_time(q, None, None) for q in PROBLEMS}
            sub.seconds = time.monotonic() - started
            return sub
    try:
        sid = normalize_student(name)
        why = "" if sid is not None else "an empty name"
    except (TypeError, ValueError) as err:
        sid, why = None, str(err)
    if sid is not None:
        sub.student = sid
    if not sandbox:
        sub.notes.append(NO_SANDBOX_NOTE)
    answers: dict[str, Any] | None = None
    nb: dict | None = None
    if entry.problem:
        sub.status = "not a notebook"
        sub.notes.append(f"{entry.problem}: nothing graded")
    else:
        try:
            nb, converted = read_notebook(path)
            if converted:
                sub.notes.append(converted)
        except (OSError, ValueError, RecursionError, MemoryError) as err:
            sub.status = "not a notebook"
            sub.notes.append(f"could not read the notebook ({_describe(err)})")
    if sid is None:
        # shown in ASCII: a Cyrillic a or a zero-width space must be seen to differ
        sub.student = printable(ascii(name)[1:-1], 80)
        sub.looks_like = skeleton(name)
    if nb is not None and sid is None:
        sub.status = INVALID_ID
        sub.notes.append(
            f"{printable(ascii(entry.name), 80)} does not name a valid student ID ({why}): "
            "not run, nothing graded; rename it to the student's ID"
        )
        _note_declared(sub, None, static_student(nb))
        nb = None
    if nb is not None:
        sub.reasoning = reasoning_answers(nb)
        with tempfile.TemporaryDirectory(prefix="lesson-grade-") as tmp:
            record, note = _execute(
                nb, timeout, sandbox, limits or Limits(), workdir or Path(tmp), cancel
            )
        if note:
            sub.notes.append(note)
        sub.status = record["status"] if record["status"] in _STATUSES else "could not run"
        if sub.status == "timed out":
            sub.notes.append(f"stopped at the {timeout:g} s limit")
        raised = record.get("raised")
        if isinstance(raised, int) and not isinstance(raised, bool) and raised > 0:
            if sub.status == "ran":
                sub.status = "ran with errors"
            cells = len(code_sources(nb))
            sub.notes.append(f"{min(raised, cells)} cell(s) raised an error")
        if record.get("flooded"):
            sub.notes.append(
                f"printed more than {MAX_OUTPUT // 2**20} MiB: the printing cell was interrupted"
            )
        cleared = record.get("cleared")
        if isinstance(cleared, int) and not isinstance(cleared, bool) and cleared > 0:
            sub.notes.append(
                f"{min(cleared, 10**6)} process(es) the stopped cell had started were killed"
            )
        if isinstance(record.get("error"), str):
            sub.notes.append(f"execution failed ({printable(record['error'], 120)})")
        _note_space(sub, record.get("space"), limits or Limits(), sandbox)
        answers, declared = _answers_of(sub, nb, record)
        _note_declared(sub, sid, declared)
        _flag_lookups(sub, nb)
    sub.answers = dict(answers or {})
    sub.graded_as = sid
    if score:
        score_submission(sub, close_credit)
    sub.seconds = time.monotonic() - started
    return sub


def stopped_cell(record: dict[str, Any], cells: int) -> int | None:
    """The code cell (index from 0) a run stopped at, from the runner's record, if valid.

    Parameters
    ----------
    record : dict
        The runner's record (untrusted: any shape).
    cells : int
        How many code cells the notebook has.

    Returns
    -------
    int or None
        None when the record names no cell, or one the notebook does not have.
    """
    at = record.get("stopped_at")
    if isinstance(at, int) and not isinstance(at, bool) and 0 <= at < cells:
        return at
    return None


def source_note(cell_index: int) -> str:
    """What an answer read from the source after a stop says, ``cell_index`` from 0.

    Parameters
    ----------
    cell_index : int
        The code cell the notebook stopped at, counted from 0.

    Returns
    -------
    str
        ``"read from source: the notebook stopped at code cell N"``, N counted from 1.
    """
    return f"read from source: the notebook stopped at code cell {cell_index + 1}"


def _answers_of(
    sub: Submission, nb: dict, record: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The answers and declared ``STUDENT`` of a run, and the notes on where they came from.

    A notebook that timed out and one whose kernel died at the same cell are
    treated alike for the cells from that one on: they did not run, so the
    answers typed in them as plain values are read from the source, each
    marked (:func:`source_note`). Answers the kernel held before the stop
    are kept; when no kernel answered (it died), every answer is read from
    the source.
    """
    stopped = stopped_cell(record, len(code_sources(nb)))
    plain = _plain_payload(record.get("payload"))
    if plain is None:
        answers, declared = static_answers(nb), static_student(nb)
        sub.notes.append("answers read from the answer cells' source, not from running it")
        why = source_note(stopped) if stopped is not None else "read from source: it did not run"
        sub.from_source = dict.fromkeys(answers, why)
        if stopped is not None:
            later = static_answers(nb, stopped)
            if later:
                sub.notes.append(f"{why}: {', '.join(later)}")
        return answers, declared
    answers, declared = plain
    if stopped is not None:
        later = static_answers(nb, stopped)
        if later:
            answers = {**answers, **later}
            sub.from_source = dict.fromkeys(later, source_note(stopped))
            sub.notes.append(f"{source_note(stopped)}: {', '.join(later)}")
    return answers, declared


def score_submission(sub: Submission, close_credit: float = CLOSE_CREDIT) -> Submission:
    """Check every problem's answer of ``sub`` (:func:`check_in_time`), filling its results.

    Run in the main thread, so each check has its time limit; a parallel
    grader runs the sandboxes in worker threads and scores here.

    Parameters
    ----------
    sub : Submission
        A run's answers (``answers``) and the ID they are checked against (``graded_as``).
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of a problem's points a close answer earns, 0 to 1.

    Returns
    -------
    Submission
        ``sub`` itself, its ``results`` set.
    """
    for qid in PROBLEMS:
        sub.results[qid] = check_in_time(qid, sub.answers.get(qid), sub.graded_as, close_credit)
    return sub


def _flag_lookups(sub: Submission, nb: dict) -> None:
    """Flag a notebook whose code asks the package for answers (see :mod:`.lookups`)."""
    note = lookup_note(find_lookups(nb))
    if note:
        sub.notes.insert(0, note)
        if sub.status in ("ran", "ran with errors"):
            sub.status = ANSWER_LOOKUP


_STATUSES = ("ran", "timed out", "kernel died", "could not run", "not a notebook")
#: The status of a notebook that ran and calls ``reference(`` or imports the problem bank.
ANSWER_LOOKUP = "answer lookup"
#: The status of a file whose name is not a valid student ID (not run, no score).
INVALID_ID = "invalid ID"
#: The status of a notebook that filled a writable folder or wrote a file at the size limit.
OUT_OF_SPACE = "out of space"


def _note_space(sub: Submission, space: object, limits: Limits, sandbox: bool) -> None:
    """Notes (and the status) for the space limits the runner saw reached."""
    if not isinstance(space, dict):
        return
    full = space.get("full") if isinstance(space.get("full"), list) else []
    sizes = {"/tmp": limits.tmp_bytes, SANDBOX_HOME: limits.home_bytes} if sandbox else {}
    hit = [
        f"filled {folder} (its {sizes[folder] // MiB} MiB limit)"
        for folder in sizes
        if folder in full
    ]
    if space.get("file_limit") is True:
        hit.append(f"wrote a file of {limits.file_bytes // MiB} MiB, the file-size limit")
    if hit:
        sub.notes.extend(hit)
        if sub.status in ("ran", "ran with errors"):
            sub.status = OUT_OF_SPACE


def _note_declared(sub: Submission, sid: str | None, declared: str | None) -> None:
    """Note the notebook's own ``STUDENT`` when it is not the ID its name gives."""
    if declared is None or not declared.strip():
        return
    try:
        same = sid is not None and normalize_student(declared) == sid
    except (TypeError, ValueError):
        same = False
    if not same:
        graded = f"graded as {sid!r} (its file name)" if sid else "not graded"
        sub.notes.append(f"the notebook says STUDENT = {printable(repr(declared), 64)}; {graded}")


def flag_duplicates(submissions: Sequence[Submission]) -> dict[str, list[Submission]]:
    """Note on every row whose student ID appears more than once (case ignored).

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks; their ``notes`` are extended.

    Returns
    -------
    dict
        Duplicated ID -> its submissions (empty when every ID is unique).
    """
    groups: dict[str, list[Submission]] = {}
    for sub in submissions:
        if sub.status in (ID_MISMATCH, UNKNOWN_ID):
            continue  # whose it is is not known: its own note says so
        groups.setdefault(sub.student.casefold(), []).append(sub)
    duplicated = {key: subs for key, subs in groups.items() if len(subs) > 1}
    for key, subs in duplicated.items():
        files = ", ".join(s.file for s in subs)
        for sub in subs:
            sub.notes.insert(
                0,
                f"DUPLICATE student ID {key!r}: {len(subs)} submissions ({files}); "
                "none was picked, decide which one counts",
            )
    return duplicated


def flag_imitations(submissions: Sequence[Submission]) -> dict[str, list[Submission]]:
    """Note on every invalid-ID row which valid ID it looks like, and on that ID's row too.

    A name with a Cyrillic a (U+0430) for a Latin ``a``, or a zero-width space,
    is an invalid ID (:func:`grade_notebook`); it is flagged beside the row
    of the ID it imitates (:func:`~lesson_lib.coursework.student_ids.skeleton`).

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks; their ``notes`` are extended.

    Returns
    -------
    dict
        Imitated ID -> the rows that imitate it.
    """
    valid = {s.student.casefold(): s for s in submissions if s.status != INVALID_ID}
    found: dict[str, list[Submission]] = {}
    for sub in submissions:
        if sub.status != INVALID_ID:
            continue
        look = sub.looks_like
        if look in valid or not id_problem(look):
            found.setdefault(look, []).append(sub)
    for look, impostors in found.items():
        files = ", ".join(printable(ascii(s.file), 80) for s in impostors)
        for sub in impostors:
            where = f" ({valid[look].file})" if look in valid else ""
            sub.notes.insert(0, f"IMITATES student ID {look!r}{where}")
        if look in valid:
            valid[look].notes.insert(
                0, f"IMITATED: {files} has a name that looks like this ID but is not it"
            )
    return found


def grade_folder(
    folder: Path,
    timeout: float = DEFAULT_TIMEOUT_S,
    *,
    sandbox: bool = True,
    limits: Limits | None = None,
    progress: TextIO | None = None,
    roster: Roster | None = None,
    jobs: int = 1,
    students: Collection[str] | None = None,
    close_credit: float = CLOSE_CREDIT,
) -> list[Submission]:
    """Grade every entry of ``folder`` (see :func:`~lesson_lib.coursework.submissions.find_submissions`).

    Parameters
    ----------
    folder : Path
        The folder of submissions.
    timeout : float, default :data:`~lesson_lib.coursework.time_limits.DEFAULT_TIMEOUT_S`
        Seconds each notebook may run.
    sandbox : bool, default True
        False: no bubblewrap (see :func:`grade_notebook`).
    limits : Limits, optional
        Resource limits of each run.
    progress : text stream, optional
        Where to print one line per graded notebook.
    roster : Roster, optional
        The class roster (:mod:`~lesson_lib.coursework.roster`): each ID must
        be on it, and agree with the platform's user.
    jobs : int, default 1
        Sandboxes run at once (:mod:`~lesson_lib.coursework.parallel`), each
        with its own limits; the rows are the same, in the same order, whatever it is.
    students : collection of str, optional
        Grade only the entries whose name gives one of these IDs (case
        ignored): a regrade, merged into the class's file by
        :func:`~lesson_lib.coursework.regrade.merge_rows`.
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of a problem's points a close answer earns, 0 to 1.

    Returns
    -------
    list of Submission
        In the order of :func:`~lesson_lib.coursework.submissions.find_submissions`,
        duplicates, imitations and IDs two platform users handed in
        (:mod:`~lesson_lib.coursework.shared_ids`) flagged.
    """
    folder = Path(folder)
    jobs = require_jobs(jobs)
    close_credit = require_number("close_credit", close_credit, minimum=0.0, maximum=1.0)
    if sandbox:
        require_sandbox()
    export = read_gradescope_export(folder)
    entries = find_submissions(folder)
    if students is not None:
        wanted = {s.casefold() for s in students}
        entries = [e for e in entries if _entry_id(e, export).casefold() in wanted]
    subs = []
    if progress is not None and entries:
        progress.write(
            f"grading {len(entries)} submission(s), {min(jobs, len(entries))} at a time; each "
            "line's points are before any late policy, applied once all are graded\n"
        )
    with tempfile.TemporaryDirectory(prefix="lesson-grade-") as work:
        os.chmod(work, 0o700)

        def run(entry: Entry, cancel: threading.Event) -> Submission:
            try:
                return grade_notebook(
                    entry.stem,
                    entry.path,
                    timeout,
                    sandbox=sandbox,
                    limits=limits,
                    workdir=Path(work),
                    entry=entry,
                    identity=identify(entry, roster=roster, export=export),
                    score=False,
                    cancel=cancel,
                )
            except Exception as err:  # never stop the run for one submission
                sub = Submission(entry.stem, entry.path, "could not run", file=entry.file)
                sub.notes.append(f"the grader failed on this file ({_describe(err)})")
                return sub

        for done, sub in enumerate(run_in_order(run, entries, jobs), start=1):
            score_submission(sub, close_credit)
            if progress is not None:
                # one line per row, whatever the name holds (a newline would forge another);
                # the points before any late policy, which is applied once all are graded
                progress.write(
                    f"{printable(sub.student, 80)}: {sub.total:g} / {sub.max_points:g} points "
                    f"({sub.status}, {sub.seconds:.1f} s; {done} of {len(entries)})\n"
                )
                progress.flush()
            subs.append(sub)
    flag_shared_ids(subs)
    flag_duplicates(subs)
    flag_imitations(subs)
    return subs


def _entry_id(entry: Entry, export: Mapping[str, Any] | None = None) -> str:
    """The normalised ID an entry belongs to, or its name as found when none is given.

    The ID is :func:`~lesson_lib.coursework.identity.identify`'s, so a Canvas
    download name or a Gradescope export folder is found by its student's ID
    (``--student s001``), as the grades' rows are keyed.
    """
    sid = identify(entry, export=export).student or entry.stem
    try:
        return normalize_student(sid) or sid
    except (TypeError, ValueError):
        return sid


def spreadsheet_safe(value: object, limit: int = MAX_CELL_TEXT) -> str:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula.

    Control characters, newlines and invisible characters are written as
    escapes (``\\n``, ``\\x1b``, ``\\u200b``), so a cell is one line of
    visible text; cells starting with ``=``, ``+``, ``-`` or ``@`` get a
    leading apostrophe (OWASP's advice on CSV injection); the text is cut at
    ``limit`` characters.

    Parameters
    ----------
    value : object
        The cell's content (a string or a number).
    limit : int, default :data:`MAX_CELL_TEXT`
        Longest cell, characters, before ``...``.

    Returns
    -------
    str

    Examples
    --------
    >>> spreadsheet_safe("=1+1"), spreadsheet_safe("s001"), spreadsheet_safe("a\\nb")
    ("'=1+1", 's001', 'a\\\\nb')
    """
    text = printable(value, limit)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _write_csv_atomically(
    path: Path,
    header: list[str],
    rows: list[list[tuple[object, int]]],
    merge: Collection[str] | None = None,
) -> Path | None:
    """Write a CSV by a temporary file and a rename; keep a different earlier file first.

    Each cell is given with its longest length. With ``merge`` (the regraded
    students) the rows replace only those students' rows of the existing
    file (:func:`~lesson_lib.coursework.regrade.merge_rows`).
    """
    cells = [[spreadsheet_safe(c, limit) for c, limit in row] for row in rows]
    if merge is not None:
        cells = merge_rows(read_rows(path, header), cells, merge)
    return _write_rows_atomically(path, header, cells)


def _write_rows_atomically(path: Path, header: list[str], rows: list[list[str]]) -> Path | None:
    """Write rows of cells already made safe by a temporary file and a rename."""
    path = require_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    kept = None
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(rows)
        os.chmod(tmp, 0o644)
        require_output_file(path)  # again: it may have been replaced meanwhile
        if path.exists() and not filecmp.cmp(path, tmp, shallow=False):
            kept = keep_previous(path)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return kept


#: The scores CSV's columns; the parts a person grades come last, blank until imported.
#: A problem's column holds its points (its share times the problem's points), ``max`` the
#: set's points and ``total`` the points that count: the sum times ``late factor``.
SCORES_HEADER = [
    "student",
    "file",
    *PROBLEMS,
    "total",
    "max",
    LATE_FACTOR_COLUMN,
    "status",
    "notes",
    *[part.column for part in MANUAL_PARTS.values()],
]
#: The details CSV's columns. ``score`` is the share of the problem's points earned (1
#: right, the close credit for close, 0 otherwise) and ``points`` that share of ``max``.
DETAILS_HEADER = [
    "student",
    "file",
    "problem",
    "answer",
    "status",
    "score",
    "points",
    "max",
    "message",
    "mistake",
]


def write_scores(
    submissions: Sequence[Submission], path: Path, merge: Collection[str] | None = None
) -> Path | None:
    """Write one row per notebook: student, file, each problem's points, total, max, status, notes.

    A problem's cell holds the points its answer earned (see
    :data:`SCORES_HEADER`), ``late factor`` what the late policy keeps
    (1 on time), ``total`` the points times that factor and ``max`` the
    set's points; a part a person grades imported (``manual``) counts in
    both.

    Written atomically (a temporary file, then a rename): an existing file is
    replaced only by a complete one, and only after it is copied to a name
    with the time (``grades.20260101-120000.csv``, UTC) if it differs. A path that is not a regular file (a device, ``/dev/stdout``, a
    symbolic link, a FIFO) is refused.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks.
    path : Path
        CSV file to write (its folder is created).
    merge : collection of str, optional
        The students regraded (``--student``): their rows replace theirs in
        the existing file, every other row is kept as it is.

    Returns
    -------
    Path or None
        Where the previous file was kept, if there was one to keep.

    Raises
    ------
    ValueError
        If ``path`` exists and is not a regular file, or (merging) is not
        this grader's file (:class:`~lesson_lib.coursework.regrade.RegradeRefused`).
    """
    rows = [
        [
            (sub.student, MAX_CELL_TEXT),
            (sub.file or sub.path.name, MAX_CELL_TEXT),
            *[(f"{sub.results[q].points:g}", 8) for q in PROBLEMS],
            (f"{sub.total:g}", 8),
            (f"{sub.max_points:g}", 8),
            (f"{sub.late_factor:g}", 8),
            (sub.status, MAX_CELL_TEXT),
            ("; ".join(sub.notes), MAX_NOTES_CHARS),
            *[(_manual_cell(sub.manual.get(q)), 8) for q in MANUAL_PARTS],
        ]
        for sub in submissions
    ]
    return _write_csv_atomically(path, SCORES_HEADER, rows, merge)


def _manual_cell(value: float | None) -> str:
    """A part a person grades, as its grades cell: blank until a TA gives points."""
    return "" if value is None else f"{value:g}"


def write_details(
    submissions: Sequence[Submission], path: Path, merge: Collection[str] | None = None
) -> Path | None:
    """Write one row per notebook and problem: the answer, the verdict, its message and mistake id.

    The ``mistake`` column holds the stable id of the named mistake the
    answer was taken for (``q07.us-as-ms``, see ``mistake`` of
    :class:`~lesson_lib.coursework.check.CheckResult`), empty otherwise; the
    class report (:mod:`lesson_lib.coursework.class_report`) counts by it.

    Written atomically, keeping a different earlier file, like :func:`write_scores`.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks.
    path : Path
        CSV file to write (its folder is created).
    merge : collection of str, optional
        The students regraded, as for :func:`write_scores`.

    Returns
    -------
    Path or None
        Where the previous file was kept, if there was one to keep.

    Raises
    ------
    ValueError
        If ``path`` exists and is not a regular file, or (merging) is not this grader's file.
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
    return _write_csv_atomically(path, DETAILS_HEADER, rows, merge)


def _timeout_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds > 0 and <= {MAX_TIMEOUT:g}, got {text!r}"
        )
    return value


def _output_problem(out: Path, details: Path | None) -> str:
    """What is wrong with the output paths, before anything is graded ("" if nothing)."""
    for option, target in (("--out", out), ("--details", details)):
        if target is None:
            continue
        try:
            require_output_file(target, option)
        except ValueError as err:
            return str(err)
    if details is not None:
        same = out.resolve() == details.resolve()
        if not same and out.exists() and details.exists():
            same = os.path.samefile(out, details)
        if same:
            return (
                f"--out and --details name the same file ({out}): the details would replace "
                "the scores; give two names"
            )
    return ""


@dataclass(frozen=True)
class _Course:
    roster: Roster | None
    policy: LatePolicy


def _add_course_options(parser: argparse.ArgumentParser) -> None:
    """The roster, late-policy and Canvas options (see the instructor page)."""
    issued = parser.add_mutually_exclusive_group()
    issued.add_argument(
        "--roster",
        type=Path,
        help="CSV: lms_user_id, name, section, student_id (issued IDs); default: the "
        "student edition's roster.csv beside the course salt in use, when it exists",
    )
    issued.add_argument(
        "--no-roster",
        action="store_true",
        help="read no roster unless --roster names one: any valid ID is graded",
    )
    parser.add_argument(
        "--due", help="due time, ISO 8601 (2026-03-01T23:59-05:00; without a zone, UTC)"
    )
    parser.add_argument(
        "--late-penalty-per-day",
        type=float,
        default=None,
        help="fraction of the score taken off per started day late, 0 to 1 (default 0)",
    )
    parser.add_argument(
        "--keep",
        choices=KEEP_CHOICES,
        help="of several submissions of one ID, count the latest or the best (default: flag all)",
    )
    parser.add_argument(
        "--canvas-gradebook", type=Path, help="the gradebook CSV exported from Canvas"
    )
    parser.add_argument(
        "--canvas-out",
        type=Path,
        help="the Canvas import CSV to write (default: canvas-import.csv beside --out)",
    )
    parser.add_argument(
        "--canvas-assignment",
        default="Problem set",
        help="the assignment's name in Canvas (default 'Problem set'), matched without case",
    )
    parser.add_argument(
        "--canvas-new-assignment",
        action="store_true",
        help="write --canvas-assignment as a new column (Canvas creates a new assignment) when "
        "the export has no such column; without it that is refused",
    )


def _scoring_options(
    args: argparse.Namespace, salt: str | None, salt_file: Path | None
) -> dict[str, Any]:
    """The options that change scores, a regrade's taken from the run that wrote the grades.

    ``args`` is updated in place (the roster, the late policy, the close
    credit); a full run gets the defaults of the options it was not given.
    The roster kept is the file read (``--roster``, else the issued IDs
    beside the salt), "" for none. Raises
    :class:`~lesson_lib.coursework.run_options.OptionsDiffer`.
    """
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
    recorded = read_options(args.out) if args.student is not None else None
    if recorded is None:
        used = {key: DEFAULTS[key] if value is None else value for key, value in given.items()}
        used["roster"] = roster
    else:
        used = reconcile(recorded, given)
        print(f"regrade: scored as the run that wrote {args.out}: {describe(used)}")
        args.roster = Path(used["roster"]) if used["roster"] else None
        args.no_roster = not used["roster"]
    args.due, args.keep = used["due"], used["keep"]
    args.late_penalty_per_day = float(used["late_penalty_per_day"])
    args.close_credit = float(used["close_credit"])
    return used


def _course_options(args: argparse.Namespace, salt_file: Path | None = None) -> _Course:
    """Read the roster and the policy before anything is graded (ValueError, OSError).

    The roster is ``--roster``, else the issued IDs beside ``salt_file``
    (:func:`~lesson_lib.coursework.roster.roster_file_in_use`).
    """
    roster_file = roster_file_in_use(args.roster, salt_file, off=args.no_roster)
    roster = read_roster(roster_file) if roster_file is not None else None
    if roster is not None:
        _say_roster(roster_file, roster, named=args.roster is not None)
    due = parse_due(args.due) if args.due else None
    policy = LatePolicy(due, args.late_penalty_per_day, args.keep)
    read_gradescope_export(args.folder)  # a broken export stops here, not after grading
    if args.canvas_gradebook is not None:
        from lesson_lib.coursework.canvas import check_gradebook

        check_gradebook(args.canvas_gradebook, args.canvas_assignment, args.canvas_new_assignment)
        if args.canvas_out is None:
            args.canvas_out = args.out.parent / "canvas-import.csv"
        require_output_file(args.canvas_out, "--canvas-out")
    return _Course(roster, policy)


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


def canvas_scores(rows: Sequence[Mapping[str, str]], users: Mapping[str, str]) -> dict[str, float]:
    """Canvas user id -> total of the counted, graded row of that student in the grades file.

    Read from the grades file as written (a regrade's merged rows and a TA's
    imported points included), so the Canvas file always agrees with it.
    Rows not run for their identity (``ID mismatch``, ``unknown ID``,
    ``invalid ID``), not notebooks, and copies the ``--keep`` policy did not
    pick (``NOT COUNTED``) give nothing; a user with two counted rows (no
    ``--keep``) gives nothing either, for you to decide.

    Parameters
    ----------
    rows : sequence of mapping
        The grades CSV's rows, by column name.
    users : mapping
        A row's ``file`` cell -> the Canvas user id of that submission
        (:func:`canvas_users`).

    Returns
    -------
    dict
    """
    found: dict[str, list[float]] = {}
    for row in rows:
        if "NOT COUNTED" in row["notes"] or row["status"] in NOT_GRADED:
            continue
        user = users.get(row["file"], "")
        if user:
            found.setdefault(user, []).append(float(row["total"]))
    return {user: totals[0] for user, totals in found.items() if len(totals) == 1}


def canvas_users(
    found: Sequence[Entry], roster: Roster | None, export: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """The Canvas user id of every submission in the folder, by its grades ``file`` cell.

    The user id is the one in the Canvas name, else the roster's for the ID
    :func:`~lesson_lib.coursework.identity.identify` gives (nothing is run).

    Parameters
    ----------
    found : sequence of Entry
        :func:`~lesson_lib.coursework.submissions.find_submissions` of the folder.
    roster : Roster or None
        The class roster.
    export : mapping, optional
        A Gradescope export's metadata (:func:`~lesson_lib.coursework.lms_names.read_gradescope_export`).

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


def _report_policy(submissions: Sequence[Submission], policy: LatePolicy) -> None:
    """Say what the late policy and ``--keep`` did, and which IDs still need a decision."""
    late = [s for s in submissions if s.late_factor < 1]
    if late:
        shown = "; ".join(f"{printable(s.student, 40)} x {s.late_factor:g}" for s in late[:10])
        more = f" and {len(late) - 10} more" if len(late) > 10 else ""
        print(
            f"late policy: {len(late)} late submission(s), total after the penalty: {shown}{more}"
        )
    dropped = [s for s in submissions if not s.counted]
    if dropped:
        print(f"--keep {policy.keep}: {len(dropped)} earlier or lower copy(ies) not counted")
    counts: dict[str, int] = {}
    for sub in submissions:
        if sub.counted and sub.status not in (ID_MISMATCH, UNKNOWN_ID, INVALID_ID):
            counts[sub.student.casefold()] = counts.get(sub.student.casefold(), 0) + 1
    duplicates = {printable(key, 80) for key, n in counts.items() if n > 1}
    if duplicates:
        print(
            "warning: duplicate student IDs, every copy graded and flagged in the notes "
            f"(--keep latest or best picks one): {'; '.join(sorted(duplicates))}",
            file=sys.stderr,
        )
    shared = [s for s in submissions if any(n.startswith("ID SHARED") for n in s.notes)]
    if shared:
        names = "; ".join(printable(ascii(s.file), 80) for s in shared[:10])
        print(
            f"warning: {len(shared)} submission(s) of an ID that two platform users handed in, "
            f"not graded (see the notes): {names}",
            file=sys.stderr,
        )


def given_manual_points(
    submissions: Sequence[Submission], points: Mapping[str, Mapping[str, float | None]]
) -> None:
    """Give each graded submission the points a TA gave its parts, so its total counts them.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded rows; ``manual`` is set on those with a valid ID.
    points : mapping
        Problem id -> student (case-folded) -> points or None
        (:func:`~lesson_lib.coursework.manual_grading.read_folder`).
    """
    for sub in submissions:
        if sub.graded_as is None:
            continue
        student = sub.student.casefold()
        sub.manual = {qid: given.get(student) for qid, given in points.items()}


def _write_canvas(found: Sequence[Entry], args: argparse.Namespace, roster) -> None:
    rows = read_rows(args.out, SCORES_HEADER)
    table = [dict(zip(SCORES_HEADER, row, strict=False)) for row in rows]
    users = canvas_users(found, roster, read_gradescope_export(args.folder))
    summary = fill_gradebook(
        args.canvas_gradebook,
        args.canvas_out,
        canvas_scores(table, users),
        max((float(row["max"]) for row in table), default=total_points()),
        args.canvas_assignment,
        args.canvas_new_assignment,
    )
    print(
        f"wrote {args.canvas_out}: column {summary.column!r}, {summary.filled} score(s), "
        f"{len(summary.empty)} left empty"
    )
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if summary.empty:
        shown = "; ".join(printable(s, 40) for s in summary.empty[:10])
        print(f"warning: no counted grade for {shown} (see the notes)", file=sys.stderr)
    if summary.unmatched:
        print(
            f"warning: Canvas user(s) not in the gradebook export: "
            f"{'; '.join(printable(u, 40) for u in summary.unmatched[:10])}",
            file=sys.stderr,
        )


def write_manual_export(
    submissions: Sequence[Submission], folder: Path, merge: Collection[str] | None = None
) -> list[Path]:
    """Write one CSV per part a person grades into ``folder`` (``q12-reasoning.csv``).

    Every counted submission with a valid ID gets a row, a blank answer too
    (the TA gives it 0); a copy the ``--keep`` policy did not count gets none,
    so each student has one row to grade. Written atomically, keeping a different earlier file; with
    ``merge`` (a regrade) only those students' rows are replaced, so points
    a TA already typed for the others stay.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks.
    folder : Path
        Where the files go (created).
    merge : collection of str, optional
        The regraded students.

    Returns
    -------
    list of Path
        The files written.
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
        _write_csv_atomically(target, EXPORT_HEADER, rows, merge)
        written.append(target)
    return written


def compile_lesson_lib() -> bool:
    """Write ``lesson_lib``'s bytecode cache before grading, if it is missing or stale.

    Every sandbox mounts ``lesson_lib`` read-only, so a kernel there cannot
    cache what it compiles and would compile the package's source again in
    each notebook (importing the self-check took about three times longer
    without the cache, measured side by side in the sandbox; see
    ``benchmarks/README.md``). Written once here, outside, every kernel
    reads it. A checkout that cannot be written is left as it is.

    Returns
    -------
    bool
        True when every module compiled (or was already up to date).
    """
    import compileall

    import lesson_lib

    package = Path(lesson_lib.__file__).parent
    try:
        return bool(compileall.compile_dir(package, quiet=2, workers=1))
    except OSError:
        return False


def _close_credit_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}")
    return value


def _jobs_arg(text: str) -> int:
    try:
        return require_jobs(int(text))
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"must be a whole number of sandboxes from 1 to {MAX_JOBS}, got {text!r}"
        ) from None


def _regrade_problem(args: argparse.Namespace, found: Sequence[Entry]) -> set[str] | str | None:
    """The IDs of ``--student`` (None for a full run), or what is wrong, as a message."""
    if args.student is None:
        if args.replace:
            return None
        graded = {_entry_id(e, read_gradescope_export(args.folder)) for e in found}
        return shrink_problem(args.out, SCORES_HEADER, graded) or None
    wanted: set[str] = set()
    for raw in args.student:
        try:
            sid = normalize_student(raw)
        except (TypeError, ValueError) as err:
            return f"--student {printable(raw, 80)!r} is not a valid student ID ({err})"
        if sid is None:
            return "--student needs an ID, got an empty one"
        wanted.add(sid)
    export = read_gradescope_export(args.folder)
    have = {_entry_id(e, export).casefold() for e in found}
    missing = sorted(w for w in wanted if w.casefold() not in have)
    if missing:
        return (
            f"--student: no submission in {args.folder} for {', '.join(missing)}; "
            "nothing graded, the grades files are as they were"
        )
    for option, path, header in (
        ("--out", args.out, SCORES_HEADER),
        ("--details", args.details, DETAILS_HEADER),
    ):
        if path is None:
            continue
        try:
            read_rows(path, header)
        except RegradeRefused as err:
            return f"{option}: cannot merge the regrade: {err}"
    return wanted


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the CSV was written (whatever the submissions contained), 2 on a
        usage error, 3 when no sandbox can be made (see ``--no-sandbox``),
        128 + the signal's number when stopped by a signal (nothing written).
    """
    parser = argparse.ArgumentParser(
        prog="python -m lesson_lib.coursework.grade",
        description="Run submitted problem-set notebooks, each in a sandbox, and write a CSV "
        "of scores.",
        epilog="Exit status: 0 CSV written, 2 bad options or no submissions, 3 no sandbox, "
        "128 + the signal when stopped (130 Ctrl-C, 143 SIGTERM; nothing written).",
    )
    parser.add_argument("folder", type=Path, help="folder of submissions")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="scores CSV")
    parser.add_argument("--details", type=Path, help="optional CSV: one row per answer")
    parser.add_argument(
        "--timeout",
        type=_timeout_arg,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds per notebook, > 0 and <= {MAX_TIMEOUT:g} (default {DEFAULT_TIMEOUT_S:g}: "
        f"ten times a clean run of the problem set, {CLEAN_RUN_S:g} s, and at least "
        f"{MIN_TIMEOUT_S:g} s)",
    )
    parser.add_argument(
        "--close-credit",
        type=_close_credit_arg,
        default=None,
        help=f"share of a problem's points a close answer earns, 0 to 1 (default {CLOSE_CREDIT:g})",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs_arg,
        default=available_cpus(),
        help=f"sandboxes run at once, 1 to {MAX_JOBS} (default: the CPUs this process may use, "
        f"{available_cpus()} here); the CSV is the same whatever it is",
    )
    parser.add_argument(
        "--student",
        action="append",
        metavar="ID",
        help="regrade only this student (repeatable); the new rows replace theirs in --out "
        "and --details, every other row is kept as it was",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="let a full run replace a grades file holding students it has no submission for",
    )
    parser.add_argument(
        "--manual-export",
        type=Path,
        metavar="DIR",
        help="write one CSV per part a person grades (q12's reasoning) for a TA to fill in",
    )
    parser.add_argument(
        "--manual-import",
        type=Path,
        metavar="DIR",
        help="merge the TA's filled-in files into --out; total and max then count them",
    )
    parser.add_argument(
        "--feedback",
        type=Path,
        help="folder for one HTML feedback file per student (default: feedback/ beside --out)",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run notebooks without bubblewrap: only for submissions you trust "
        "(every row then carries a warning)",
    )
    _add_course_options(parser)
    parser.add_argument(
        "--salt-file",
        type=Path,
        default=None,
        help=f"the course salt the student edition was made with (default: ${SALT_FILE_ENV}, "
        f"else {DEFAULT_SALT_FILE} when it exists; without one the public variants are graded)",
    )
    parser.add_argument(
        "--no-salt",
        action="store_true",
        help="grade against the public variants even where a course salt is found "
        "(notebooks made without one, such as tests/hostile)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.no_salt and args.salt_file is not None:
        print("error: --no-salt and --salt-file contradict each other", file=sys.stderr)
        return 2
    salt_file = None if args.no_salt else salt_file_in_use(args.salt_file)
    try:
        salt = read_salt_file(salt_file) if salt_file else None
    except (OSError, ValueError) as err:
        print(f"error: --salt-file: {err}", file=sys.stderr)
        return 2
    set_course_salt(salt)
    print(
        f"variants: the course salt in {salt_file}"
        if salt_file
        else "variants: public (no course salt; see --salt-file)"
    )
    try:
        scoring = _scoring_options(args, salt_fingerprint(salt), salt_file)
    except OptionsDiffer as err:
        print(f"error: {err}; nothing graded", file=sys.stderr)
        return 2
    try:
        course = _course_options(args, salt_file)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not args.folder.is_dir():
        print(f"error: {args.folder} is not a folder", file=sys.stderr)
        return 2
    problem = _output_problem(args.out, args.details)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    found = find_submissions(args.folder)
    if not found:
        print(f"error: no submissions in {args.folder}", file=sys.stderr)
        return 2
    regraded = _regrade_problem(args, found)
    if isinstance(regraded, str):
        print(f"error: {regraded}", file=sys.stderr)
        return 2
    manual = None
    if args.manual_import is not None:
        try:
            manual = read_folder(args.manual_import)
        except (OSError, ValueError) as err:
            print(f"error: --manual-import: {err}", file=sys.stderr)
            return 2
    hidden = hidden_names(args.folder)
    if hidden:
        shown = ", ".join(printable(h, 40) for h in hidden[:5])
        more = f" and {len(hidden) - 5} more" if len(hidden) > 5 else ""
        print(f"note: names starting with '.' are not submissions, left out: {shown}{more}")
    compile_lesson_lib()
    if not args.no_sandbox:
        try:
            require_sandbox()
        except SandboxUnavailable as exc:
            print(f"error: cannot grade safely: {exc}", file=sys.stderr)
            return EXIT_NO_SANDBOX
    else:
        print(f"{NO_SANDBOX_NOTE}: submissions can read and change your files", file=sys.stderr)
    try:
        with stop_on_signals():
            submissions = grade_folder(
                args.folder,
                args.timeout,
                sandbox=not args.no_sandbox,
                progress=sys.stdout,
                roster=course.roster,
                jobs=args.jobs,
                students=regraded,
                close_credit=args.close_credit,
            )
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM, SIGHUP: the sandbox and copies are gone
        signum = getattr(stop, "signum", signal.SIGINT)
        kept = [str(p) for p in (args.out, args.details) if p is not None]
        print(
            f"\ninterrupted ({signal.Signals(signum).name}): no grades written, "
            f"{' and '.join(kept)} left as they were",
            file=sys.stderr,
        )
        return 128 + signum
    odd_times = implausible_times_warning(apply_policy(submissions, course.policy))
    if odd_times:
        print(odd_times, file=sys.stderr)
    if manual is not None:
        given_manual_points(submissions, manual)
    for path, write in ((args.out, write_scores), (args.details, write_details)):
        if path is not None:
            try:
                kept = write(submissions, path, regraded)
            except RegradeRefused as err:  # checked before grading; changed meanwhile
                print(f"error: {err}; nothing written", file=sys.stderr)
                return 2
            merged = ""
            if regraded is not None:
                merged = f" ({len(regraded)} regraded student(s) merged in)"
            print(
                f"wrote {path}{merged}" + (f" (the previous one is kept as {kept})" if kept else "")
            )
    if regraded is None:
        record_options(args.out, scoring)
    if args.manual_export is not None:
        for path in write_manual_export(submissions, args.manual_export, regraded):
            print(f"wrote {path}")
    if args.manual_import is not None:
        try:
            filled, _ = import_into(
                args.out,
                args.manual_import,
                SCORES_HEADER,
                problem_points(),
                _write_rows_atomically,
            )
        except (OSError, ManualImportError, RegradeRefused) as err:
            print(
                f"error: --manual-import: {err}; the grades are written without it", file=sys.stderr
            )
            return 2
        print(f"merged {filled} points cell(s) from {args.manual_import} into {args.out}")
    if args.canvas_gradebook is not None:
        _write_canvas(found, args, course.roster)
    elif regraded is not None and (args.out.parent / "canvas-import.csv").exists():
        print(
            f"warning: {args.out.parent / 'canvas-import.csv'} was written before this regrade "
            "and does not have its scores: pass --canvas-gradebook again to rewrite it",
            file=sys.stderr,
        )
    feedback = args.feedback if args.feedback is not None else args.out.parent / "feedback"
    try:
        handed = write_feedback(submissions, feedback)
    except (OSError, ValueError) as err:
        print(f"warning: no feedback written ({err})", file=sys.stderr)
    else:
        print(f"wrote {len(handed)} feedback file(s) into {feedback}")
    _report_policy(submissions, course.policy)
    looked_up = [
        sub for sub in submissions if any(n.startswith("ANSWER LOOKUP") for n in sub.notes)
    ]
    if looked_up:
        names = ", ".join(printable(ascii(sub.file), 80) for sub in looked_up[:10])
        print(
            f"warning: {len(looked_up)} submission(s) call reference(), solution_text() or the "
            f"problem bank (see the notes): {names}",
            file=sys.stderr,
        )
    invalid = [sub for sub in submissions if sub.status == INVALID_ID]
    if invalid:
        names = ", ".join(printable(ascii(sub.file), 80) for sub in invalid[:10])
        print(
            f"warning: {len(invalid)} name(s) are not valid student IDs, not graded (see the "
            f"notes; one may imitate another student's ID): {names}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
