"""Grader step: run one notebook in its sandbox and read back what the runner recorded.

The notebook runs in a throwaway copy inside the sandbox (:mod:`lesson_lib.coursework.sandbox`)
through :mod:`lesson_lib.coursework.runner`. Its record comes back through a file opened here and
passed as a descriptor, so nothing inside can write it by a path; it is untrusted all the same,
and :class:`RunRecord` keeps only fields of the right type. The executed notebook comes back the
same way, and only a valid notebook is kept, its outputs' data text and PNG only (:data:`KEPT_DATA`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from lesson_lib.coursework.runner import MAX_EXECUTED_BYTES, MAX_OUTPUT
from lesson_lib.coursework.sandbox import SANDBOX_HOME, Limits, MiB, run_isolated
from lesson_lib.coursework.status import RAN_TO_END, RUN_STATUSES, Status
from lesson_lib.coursework.time_limits import GRACE_S
from lesson_lib.model._safe_io import printable, read_file

_COPY = "submission.ipynb"
_MAX_RESULT_BYTES = 2**20
#: The output data an executed notebook keeps (HTML, JavaScript and SVG could run in the browser
#: of whoever opens it).
KEPT_DATA = ("text/plain", "image/png")


def _count(value: object) -> int:
    """A count from the record: a non-negative int (a bool or anything else is 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class RunRecord:
    """What the runner recorded of one run, each field checked for its type."""

    #: ``ran``, ``timed out``, ``kernel died``, ``could not run`` or ``not a notebook``.
    status: Status
    #: Cells that raised.
    raised: int = 0
    #: The names of the exceptions they raised (the first five, sorted).
    errors: tuple[str, ...] = ()
    #: A cell printed past the output limit.
    flooded: bool = False
    #: Processes the stopped cell had started, killed.
    cleared: int = 0
    #: Why the run failed, if it says.
    error: str | None = None
    #: The writable folders it filled.
    full: tuple[str, ...] = ()
    #: A cell wrote a file at the size limit.
    file_limit: bool = False
    #: The code cell (from 0) the run stopped at.
    stopped_at: int | None = None
    #: The answers the kernel held (read by :mod:`~lesson_lib.coursework.extract`).
    payload: object = None
    #: Processes left after the run.
    leftovers: int = 0
    #: The code cells as run, with their outputs, as JSON (None when none came back).
    executed: str | None = None

    @classmethod
    def from_json(cls, record: dict, leftovers: int = 0) -> RunRecord:
        """The record as the runner wrote it (any shape), its fields of the wrong type dropped, and
        ``leftovers``, the processes killed after the run."""
        status = record.get("status")
        space = record.get("space") if isinstance(record.get("space"), dict) else {}
        full = space.get("full") if isinstance(space.get("full"), list) else []
        at = record.get("stopped_at")
        errors = record.get("errors") if isinstance(record.get("errors"), list) else []
        return cls(
            Status(status)
            if isinstance(status, str) and status in RUN_STATUSES
            else Status.COULD_NOT_RUN,
            raised=_count(record.get("raised")),
            errors=tuple(printable(e, 60) for e in errors[:5] if isinstance(e, str)),
            flooded=bool(record.get("flooded")),
            cleared=_count(record.get("cleared")),
            error=record["error"] if isinstance(record.get("error"), str) else None,
            full=tuple(f for f in full if isinstance(f, str)),
            file_limit=space.get("file_limit") is True,
            stopped_at=at if isinstance(at, int) and not isinstance(at, bool) else None,
            payload=record.get("payload"),
            leftovers=leftovers,
        )


def run_notebook(
    nb: dict,
    timeout: float,
    sandbox: bool,
    limits: Limits,
    workdir: Path,
    cancel: threading.Event | None = None,
) -> RunRecord:
    """Run the notebook ``nb`` (as read and checked, not the file again) in a throwaway copy.

    Parameters
    ----------
    nb : dict
    timeout : float
        Seconds its cells may run; the sandbox is killed ``GRACE_S`` later.
    sandbox : bool
    limits : Limits
    workdir : Path
        Private folder for the copy and the record.
    cancel : threading.Event, optional
        Set by another thread to stop the run.

    Returns
    -------
    RunRecord
        ``timed out`` or ``could not run`` when no readable record came back.
    """
    scratch = Path(tempfile.mkdtemp(prefix="submission-", dir=workdir))
    result_fd, result = tempfile.mkstemp(prefix="result-", suffix=".json", dir=workdir)
    notebook_fd, notebook = tempfile.mkstemp(prefix="executed-", suffix=".ipynb", dir=workdir)
    try:
        (scratch / _COPY).write_text(json.dumps(nb), encoding="utf-8")
        home = SANDBOX_HOME if sandbox else str(scratch)
        command = [sys.executable, "-m", "lesson_lib.coursework.runner", f"{home}/{_COPY}"]
        command += ["--timeout", repr(timeout), "--result-fd", str(result_fd)]
        command += ["--notebook-fd", str(notebook_fd)]
        try:
            run = run_isolated(
                command, scratch, timeout=timeout + GRACE_S, limits=limits,
                sandbox=sandbox, pass_fds=(result_fd, notebook_fd), cancel=cancel,
            )  # fmt: skip
        finally:
            os.close(result_fd)
            os.close(notebook_fd)
        try:
            data = read_file(result, "result", ValueError, _MAX_RESULT_BYTES, follow=False)
            record = json.loads(data.decode(errors="replace"))
        except (OSError, ValueError, RecursionError, MemoryError):
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("status"), str):
            if run.timed_out:
                return RunRecord(Status.TIMED_OUT, leftovers=len(run.leftovers))
            code = run.returncode
            why = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
            return RunRecord(
                Status.COULD_NOT_RUN, error=f"no result ({why})", leftovers=len(run.leftovers)
            )
        return replace(
            RunRecord.from_json(record, len(run.leftovers)), executed=_executed(notebook)
        )
    finally:
        Path(result).unlink(missing_ok=True)
        Path(notebook).unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _executed(path: str) -> str | None:
    """The executed notebook the runner wrote, if a valid one, its output data :data:`KEPT_DATA`."""
    import nbformat

    with contextlib.suppress(Exception):  # anything but a valid notebook is not kept
        data = read_file(path, "notebook", ValueError, MAX_EXECUTED_BYTES, follow=False)
        executed = nbformat.reads(data.decode(), as_version=4)
        nbformat.validate(executed)
        for cell in executed.cells:
            for output in cell.get("outputs", []):
                if "data" in output:
                    output.data = {k: v for k, v in output.data.items() if k in KEPT_DATA}
        return nbformat.writes(executed)
    return None


def run_outcome(
    record: RunRecord, timeout: float, cells: int, limits: Limits, sandbox: bool
) -> tuple[Status, list[str]]:
    """The status of a run and its notes, in the order the grades CSV gives them.

    Parameters
    ----------
    record : RunRecord
    timeout : float
        Its time limit, seconds.
    cells : int
        The notebook's code cells.
    limits : Limits
    sandbox : bool
        Whether it ran in the sandbox (only there are the folders limited).

    Returns
    -------
    (Status, list of str)
        ``ran with errors`` when a cell raised, ``out of space`` when it hit a space limit.
    """
    status, notes = record.status, []
    if record.leftovers:
        notes.append(f"{record.leftovers} leftover process(es) killed after the run")
    if status is Status.TIMED_OUT:
        notes.append(f"stopped at the {timeout:g} s limit")
    if record.raised:
        status = Status.RAN_WITH_ERRORS if status is Status.RAN else status
        named = f" ({', '.join(record.errors)})" if record.errors else ""
        notes.append(f"{min(record.raised, cells)} cell(s) raised an error{named}")
    if record.flooded:
        notes.append(
            f"printed more than {MAX_OUTPUT // 2**20} MiB: the printing cell was interrupted"
        )
    if record.cleared:
        notes.append(
            f"{min(record.cleared, 10**6)} process(es) the stopped cell had started were killed"
        )
    if record.error is not None:
        notes.append(f"execution failed ({printable(record.error, 120)})")
    space = _space_notes(record, limits, sandbox)
    if space and status in RAN_TO_END:
        status = Status.OUT_OF_SPACE
    return status, notes + space


def _space_notes(record: RunRecord, limits: Limits, sandbox: bool) -> list[str]:
    """The notes for the space limits the runner saw reached."""
    sizes = {"/tmp": limits.tmp_bytes, SANDBOX_HOME: limits.home_bytes} if sandbox else {}
    hit = [
        f"filled {folder} (its {size // MiB} MiB limit)"
        for folder, size in sizes.items()
        if folder in record.full
    ]
    if record.file_limit:
        hit.append(f"wrote a file of {limits.file_bytes // MiB} MiB, the file-size limit")
    return hit
