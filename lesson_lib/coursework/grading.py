"""The grader's pipeline: read, identify, run, extract, score, flag, for one notebook or a folder.

Steps :mod:`~lesson_lib.coursework.submissions`, :mod:`~lesson_lib.coursework.identity`,
:mod:`~lesson_lib.coursework.sandbox_run`, :mod:`~lesson_lib.coursework.extract` and
:mod:`~lesson_lib.coursework.scoring` fill in one :class:`~lesson_lib.coursework.graded.Submission`.
Across the folder, IDs handed in twice, by two platform users or imitated by an invalid name are
flagged; :mod:`lesson_lib.coursework.grade` applies the course's policy and writes the outputs.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from lesson_lib.coursework.check import CLOSE_CREDIT
from lesson_lib.coursework.extract import declared_note, extract_answers, static_student
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.identity import Identity, identify
from lesson_lib.coursework.lms_names import read_gradescope_export
from lesson_lib.coursework.lookups import find_lookups, lookup_note
from lesson_lib.coursework.manual_grading import reasoning_answers
from lesson_lib.coursework.parallel import require_jobs, run_in_order
from lesson_lib.coursework.roster import Roster
from lesson_lib.coursework.runner import code_sources
from lesson_lib.coursework.sandbox import Limits, require_sandbox
from lesson_lib.coursework.sandbox_run import run_notebook, run_outcome
from lesson_lib.coursework.scoring import score_nothing, score_submission
from lesson_lib.coursework.shared_ids import flag_shared_ids
from lesson_lib.coursework.status import RAN_TO_END, Status
from lesson_lib.coursework.student_ids import id_problem, normalize_student, skeleton
from lesson_lib.coursework.submissions import Entry, find_submissions, read_notebook
from lesson_lib.coursework.time_limits import DEFAULT_TIMEOUT_S
from lesson_lib.model._safe_io import printable
from lesson_lib.model._validate import require_number

#: Note added to every row graded with ``--no-sandbox``.
NO_SANDBOX_NOTE = "WARNING: graded without the sandbox (--no-sandbox)"


def _describe_error(err: BaseException) -> str:
    """An exception as a short note: its type, and its message when short and plain."""
    kind = type(err).__name__
    if isinstance(err, OSError) and err.strerror:
        return f"{kind}: {err.strerror}"
    if isinstance(err, ValueError | TypeError) and str(err) and len(str(err)) < 80:
        return f"{kind}: {err}"
    return kind


def _valid_id(name: str) -> tuple[str | None, str]:
    """(normalised ID, "") or (None, why the name is not one)."""
    try:
        sid = normalize_student(name)
    except (TypeError, ValueError) as err:
        return None, str(err)
    return sid, "" if sid is not None else "an empty name"


def _read(entry: Entry, path: Path, sub: Submission) -> dict | None:
    """The notebook to run, or None (not a notebook: the status and notes say why)."""
    if entry.problem:
        sub.status = Status.NOT_A_NOTEBOOK
        sub.notes.append(f"{entry.problem}: nothing graded")
        return None
    try:
        nb, converted = read_notebook(path)
    except (OSError, ValueError, RecursionError, MemoryError) as err:
        sub.status = Status.NOT_A_NOTEBOOK
        sub.notes.append(f"could not read the notebook ({_describe_error(err)})")
        return None
    if converted:
        sub.notes.append(converted)
    return nb


def _flag_lookups(sub: Submission, nb: dict) -> None:
    """Flag a notebook whose code asks the package for answers (see :mod:`.lookups`)."""
    note = lookup_note(find_lookups(nb))
    if note:
        sub.answer_lookup = True
        sub.notes.insert(0, note)
        if sub.status in RAN_TO_END:
            sub.status = Status.ANSWER_LOOKUP


def _run(
    sub: Submission,
    nb: dict,
    timeout: float,
    sandbox: bool,
    limits: Limits,
    workdir: Path | None,
    cancel: threading.Event | None,
) -> None:
    """Run ``nb`` in its sandbox and read its answers into ``sub`` (graded as ``sub.student``)."""
    sub.reasoning = reasoning_answers(nb)
    with tempfile.TemporaryDirectory(prefix="lesson-grade-") as tmp:
        record = run_notebook(nb, timeout, sandbox, limits, workdir or Path(tmp), cancel)
    sub.status, notes = run_outcome(record, timeout, len(code_sources(nb)), limits, sandbox)
    sub.executed = record.executed
    sub.notes.extend(notes)
    got = extract_answers(nb, record)
    sub.answers, sub.from_source = got.answers, got.from_source
    sub.notes.extend(got.notes)
    if note := declared_note(sub.student, got.declared):
        sub.notes.append(note)
    _flag_lookups(sub, nb)


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

    Invalid IDs are not run (``invalid ID``, no score): no file name picks a variant, or the book's.

    Parameters
    ----------
    name : str
        The ID the file system gives it (file stem or folder name, tails taken off).
    path : Path
    timeout : float, default :data:`~lesson_lib.coursework.time_limits.DEFAULT_TIMEOUT_S`
        Seconds its cells may run, counted once its kernel is ready.
    sandbox : bool, default True
        False runs it without bubblewrap (``--no-sandbox``, noted in the row).
    limits : Limits, optional
    workdir : Path, optional
        Private folder for the throwaway copies (default: a temporary one).
    entry : Entry, optional
        What :func:`~lesson_lib.coursework.submissions.find_submissions` found.
    identity : Identity, optional
        Who it belongs to: its ID replaces ``name``; an ``ID mismatch`` or ``unknown ID`` is not run.
    score : bool, default True
        False leaves ``results`` for :func:`~lesson_lib.coursework.scoring.score_submission`.
    cancel : threading.Event, optional
        Set by another thread to stop the run.
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`

    Returns
    -------
    Submission
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
            score_nothing(sub)
            sub.seconds = time.monotonic() - started
            return sub
    sid, why = _valid_id(name)
    if sid is not None:
        sub.student = sid
    if not sandbox:
        sub.notes.append(NO_SANDBOX_NOTE)
    nb = _read(entry, path, sub)
    if sid is None:
        # shown in ASCII: a Cyrillic a or a zero-width space must be seen to differ
        sub.student = printable(ascii(name)[1:-1], 80)
        sub.looks_like = skeleton(name)
    if nb is not None and sid is None:
        sub.status = Status.INVALID_ID
        sub.notes.append(
            f"{printable(ascii(entry.name), 80)} does not name a valid student ID ({why}): "
            "not run, nothing graded; rename it to the student's ID"
        )
        if note := declared_note(None, static_student(nb)):
            sub.notes.append(note)
    elif nb is not None:
        _run(sub, nb, timeout, sandbox, limits or Limits(), workdir, cancel)
    sub.graded_as = sid
    if score:
        score_submission(sub, close_credit)
    sub.seconds = time.monotonic() - started
    return sub


def _flag_duplicates(submissions: Sequence[Submission]) -> dict[str, list[Submission]]:
    """Note on every row whose student ID appears more than once (case ignored)."""
    groups: dict[str, list[Submission]] = {}
    for sub in submissions:
        if sub.status in (Status.ID_MISMATCH, Status.UNKNOWN_ID):
            continue  # whose it is is not known: its own note says so
        groups.setdefault(sub.student.casefold(), []).append(sub)
    duplicated = {key: subs for key, subs in groups.items() if len(subs) > 1}
    for key, subs in duplicated.items():
        files = ", ".join(s.file for s in subs)
        for sub in subs:
            sub.duplicate_note = (
                f"DUPLICATE student ID {key!r}: {len(subs)} submissions ({files}); "
                "none was picked, decide which one counts"
            )
            sub.notes.insert(0, sub.duplicate_note)
    return duplicated


def _passes_for(look: str, ids: Collection[str]) -> str:
    """The ID a refused name's :func:`skeleton` ``look`` passes for: itself if an ID, else the one of
    ``ids`` it matches with any ASCII letter for each other one among more ASCII characters, or ""."""
    if look in ids or not id_problem(look):
        return look
    foreign = [ch for ch in look if not ch.isascii()]
    if not foreign or not all(map(str.isalpha, foreign)) or 2 * len(foreign) >= len(look):
        return ""
    pattern = "".join(re.escape(ch) if ch.isascii() else "[a-z]" for ch in look)
    found = [sid for sid in ids if re.fullmatch(pattern, sid)]
    return found[0] if len(found) == 1 else ""


def _flag_imitations(submissions: Sequence[Submission]) -> dict[str, list[Submission]]:
    """Note on every invalid-ID row the valid ID it looks like, and on that ID's row too."""
    valid = {s.student.casefold(): s for s in submissions if s.status != Status.INVALID_ID}
    found: dict[str, list[Submission]] = {}
    for sub in submissions:
        look = _passes_for(sub.looks_like, valid)
        if sub.status == Status.INVALID_ID and look:
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


def entry_id(entry: Entry, export: Mapping[str, Any] | None = None) -> str:
    """The normalised ID an entry belongs to (as ``identify`` gives it), else its name as found.

    Parameters
    ----------
    entry : Entry
    export : mapping, optional
        A Gradescope export's metadata.

    Returns
    -------
    str
    """
    sid = identify(entry, export=export).student or entry.stem
    return _valid_id(sid)[0] or sid


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
    """Grade every entry of ``folder``, ``jobs`` sandboxes at a time, rows in the folder's order,
    with duplicates, imitations and IDs two platform users handed in flagged.

    Parameters
    ----------
    folder : Path
    timeout, sandbox, limits, close_credit
        As for :func:`grade_notebook`.
    progress : text stream, optional
        Where to print one line per graded notebook.
    roster : Roster, optional
        The class roster: each ID must be on it, and agree with the platform's user.
    jobs : int, default 1
        Sandboxes run at once; the rows are the same whatever it is.
    students : collection of str, optional
        Grade only these IDs' entries (case ignored): a regrade.

    Returns
    -------
    list of Submission
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
        entries = [e for e in entries if entry_id(e, export).casefold() in wanted]
    if progress is not None and entries:
        progress.write(
            f"grading {len(entries)} submission(s), {min(jobs, len(entries))} at a time; each "
            "line's points are before any late policy, applied once all are graded\n"
        )
    subs = []
    with tempfile.TemporaryDirectory(prefix="lesson-grade-") as work:
        os.chmod(work, 0o700)

        def run(entry: Entry, cancel: threading.Event) -> Submission:
            try:
                return grade_notebook(
                    entry.stem, entry.path, timeout, sandbox=sandbox, limits=limits,
                    workdir=Path(work), entry=entry, score=False, cancel=cancel,
                    identity=identify(entry, roster=roster, export=export),
                )  # fmt: skip
            except Exception as err:  # never stop the run for one submission
                sub = Submission(entry.stem, entry.path, Status.COULD_NOT_RUN, file=entry.file)
                sub.notes.append(f"the grader failed on this file ({_describe_error(err)})")
                return sub

        for done, sub in enumerate(run_in_order(run, entries, jobs), start=1):
            score_submission(sub, close_credit)
            if progress is not None:
                # one line per row, whatever the name holds (a newline would forge another)
                progress.write(
                    f"{printable(sub.student, 80)}: {sub.total:g} / {sub.max_points:g} points "
                    f"({sub.status}, {sub.seconds:.1f} s; {done} of {len(entries)})\n"
                )
                progress.flush()
            subs.append(sub)
    flag_shared_ids(subs)
    _flag_duplicates(subs)
    _flag_imitations(subs)
    return subs
