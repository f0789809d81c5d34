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

Command line::

    python -m lesson_lib.coursework.grade submissions/ --out grades.csv

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from lesson_lib.coursework.answers import MAX_SHOWN_CHARS, Reading, plain_text
from lesson_lib.coursework.check import (
    MAX_MESSAGE_CHARS,
    UNREADABLE,
    CheckResult,
    CheckTimeout,
    check,
)
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.runner import MAX_OUTPUT, code_sources
from lesson_lib.coursework.sandbox import (
    SANDBOX_HOME,
    Limits,
    MiB,
    SandboxUnavailable,
    require_sandbox,
    run_isolated,
)
from lesson_lib.coursework.student_ids import id_problem, skeleton
from lesson_lib.coursework.submissions import (
    Entry,
    find_submissions,
    hidden_names,
    read_notebook,
    static_student,
)
from lesson_lib.coursework.variants import normalize_student
from lesson_lib.model._safe_io import (
    keep_previous,
    printable,
    require_output_file,
    stop_on_signals,
)

#: Largest code cell whose source is parsed for plain answers, characters.
MAX_CELL_CHARS = 20_000
#: Longest ``--timeout`` accepted, seconds.
MAX_TIMEOUT = 3600.0
#: Seconds allowed after the notebook's own limit for the kernel to start, stop and report.
GRACE_S = 60.0
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
        ``"kernel died"``, ``"could not run"``, ``"not a notebook"`` or ``"invalid ID"``.
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

    @property
    def total(self) -> float:
        """Sum of the scores."""
        return sum(r.score for r in self.results.values())


def static_answers(nb: object) -> dict[str, Any]:
    """Answers typed as plain values (``answer_q3 = 1.5``) in a notebook's code cells.

    Never raises: cells that are not text, too long (over
    :data:`MAX_CELL_CHARS`) or not Python are skipped.

    Parameters
    ----------
    nb : dict
        The notebook as parsed JSON or ``nbformat.NotebookNode`` (not executed).

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
    for source in sources:
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


def check_in_time(qid: str, answer: object, student: str | None) -> CheckResult:
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

    Returns
    -------
    CheckResult
    """
    if threading.current_thread() is not threading.main_thread():
        return check(qid, answer, student=student)

    def stop(signum: int, frame: object) -> None:
        raise CheckTimeout

    previous = signal.signal(signal.SIGALRM, stop)
    try:
        signal.setitimer(signal.ITIMER_REAL, CHECK_SECONDS)
        try:
            return check(qid, answer, student=student)
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
    nb: dict, timeout: float, sandbox: bool, limits: Limits, workdir: Path
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
    timeout: float = 120.0,
    *,
    sandbox: bool = True,
    limits: Limits | None = None,
    workdir: Path | None = None,
    entry: Entry | None = None,
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
    timeout : float, default 120
        Seconds the notebook's cells may run, counted once its kernel is ready;
        the sandbox is killed :data:`GRACE_S` seconds later whatever happens.
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

    Returns
    -------
    Submission
        Status, answers, one result per problem, notes.
    """
    started = time.monotonic()
    entry = entry or Entry(path.name, name, path)
    sub = Submission(student=name, path=path, file=entry.file)
    sub.notes.extend(entry.notes)
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
        with tempfile.TemporaryDirectory(prefix="lesson-grade-") as tmp:
            record, note = _execute(nb, timeout, sandbox, limits or Limits(), workdir or Path(tmp))
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
        plain = _plain_payload(record.get("payload"))
        if plain is not None:
            answers, declared = plain
        else:
            answers, declared = static_answers(nb), static_student(nb)
            sub.notes.append("answers read from the answer cells' source, not from running it")
        _note_declared(sub, sid, declared)
    for qid in PROBLEMS:
        sub.results[qid] = check_in_time(qid, (answers or {}).get(qid), sid)
    sub.seconds = time.monotonic() - started
    return sub


_STATUSES = ("ran", "timed out", "kernel died", "could not run", "not a notebook")
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
    timeout: float = 120.0,
    *,
    sandbox: bool = True,
    limits: Limits | None = None,
    progress: TextIO | None = None,
) -> list[Submission]:
    """Grade every entry of ``folder`` (see :func:`~lesson_lib.coursework.submissions.find_submissions`), one at a time.

    Parameters
    ----------
    folder : Path
        The folder of submissions.
    timeout : float, default 120
        Seconds each notebook may run.
    sandbox : bool, default True
        False: no bubblewrap (see :func:`grade_notebook`).
    limits : Limits, optional
        Resource limits of each run.
    progress : text stream, optional
        Where to print one line per graded notebook.

    Returns
    -------
    list of Submission
        In the order of :func:`~lesson_lib.coursework.submissions.find_submissions`,
        duplicates and imitations flagged.
    """
    folder = Path(folder)
    if sandbox:
        require_sandbox()
    subs = []
    with tempfile.TemporaryDirectory(prefix="lesson-grade-") as work:
        os.chmod(work, 0o700)
        for entry in find_submissions(folder):
            try:
                sub = grade_notebook(
                    entry.stem,
                    entry.path,
                    timeout,
                    sandbox=sandbox,
                    limits=limits,
                    workdir=Path(work),
                    entry=entry,
                )
            except Exception as err:  # never stop the run for one submission
                sub = Submission(entry.stem, entry.path, "could not run", file=entry.file)
                sub.notes.append(f"the grader failed on this file ({_describe(err)})")
                sub.results = {q: check(q, None) for q in PROBLEMS}
            if progress is not None:
                # one line per row, whatever the name holds (a newline would forge another)
                progress.write(
                    f"{printable(sub.student, 80)}: {sub.total:g} / {len(PROBLEMS)} "
                    f"({sub.status}, {sub.seconds:.1f} s)\n"
                )
                progress.flush()
            subs.append(sub)
    flag_duplicates(subs)
    flag_imitations(subs)
    return subs


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
    path: Path, header: list[str], rows: list[list[tuple[object, int]]]
) -> Path | None:
    """Write a CSV by a temporary file and a rename; keep a different earlier file first.

    Each cell is given with its longest length.
    """
    path = require_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    kept = None
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows([[spreadsheet_safe(c, limit) for c, limit in row] for row in rows])
        os.chmod(tmp, 0o644)
        require_output_file(path)  # again: it may have been replaced meanwhile
        if path.exists() and not filecmp.cmp(path, tmp, shallow=False):
            kept = keep_previous(path)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return kept


def write_scores(submissions: Sequence[Submission], path: Path) -> Path | None:
    """Write one row per notebook: student, file, one column per problem, total, max, status, notes.

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

    Returns
    -------
    Path or None
        Where the previous file was kept, if there was one to keep.

    Raises
    ------
    ValueError
        If ``path`` exists and is not a regular file.
    """
    rows = [
        [
            (sub.student, MAX_CELL_TEXT),
            (sub.file or sub.path.name, MAX_CELL_TEXT),
            *[(f"{sub.results[q].score:g}", 8) for q in PROBLEMS],
            (f"{sub.total:g}", 8),
            (len(PROBLEMS), 8),
            (sub.status, MAX_CELL_TEXT),
            ("; ".join(sub.notes), MAX_NOTES_CHARS),
        ]
        for sub in submissions
    ]
    header = ["student", "file", *PROBLEMS, "total", "max", "status", "notes"]
    return _write_csv_atomically(path, header, rows)


def write_details(submissions: Sequence[Submission], path: Path) -> Path | None:
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

    Returns
    -------
    Path or None
        Where the previous file was kept, if there was one to keep.

    Raises
    ------
    ValueError
        If ``path`` exists and is not a regular file.
    """
    rows = [
        [
            (sub.student, MAX_CELL_TEXT),
            (sub.file or sub.path.name, MAX_CELL_TEXT),
            (qid, MAX_CELL_TEXT),
            (result.given, MAX_SHOWN_CHARS),
            (result.status, MAX_CELL_TEXT),
            (f"{result.score:g}", 8),
            (result.message, MAX_MESSAGE_CHARS),
            (result.mistake, MAX_CELL_TEXT),
        ]
        for sub in submissions
        for qid, result in sub.results.items()
    ]
    return _write_csv_atomically(
        path,
        ["student", "file", "problem", "answer", "status", "score", "message", "mistake"],
        rows,
    )


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
        default=120.0,
        help=f"seconds per notebook, > 0 and <= {MAX_TIMEOUT:g} (default 120)",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run notebooks without bubblewrap: only for submissions you trust "
        "(every row then carries a warning)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
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
    hidden = hidden_names(args.folder)
    if hidden:
        shown = ", ".join(printable(h, 40) for h in hidden[:5])
        more = f" and {len(hidden) - 5} more" if len(hidden) > 5 else ""
        print(f"note: names starting with '.' are not submissions, left out: {shown}{more}")
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
                args.folder, args.timeout, sandbox=not args.no_sandbox, progress=sys.stdout
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
    for path, write in ((args.out, write_scores), (args.details, write_details)):
        if path is not None:
            kept = write(submissions, path)
            print(f"wrote {path}" + (f" (the previous one is kept as {kept})" if kept else ""))
    counts: dict[str, int] = {}
    for sub in submissions:
        counts[sub.student.casefold()] = counts.get(sub.student.casefold(), 0) + 1
    duplicates = {printable(key, 80) for key, n in counts.items() if n > 1}
    if duplicates:
        print(
            f"warning: duplicate student IDs, every copy graded and flagged in the notes: "
            f"{', '.join(sorted(duplicates))}",
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
