"""Execute one submitted notebook and save the answers it defines (runs inside the sandbox).

The grader starts it in the submission's sandbox::

    python -m lesson_lib.coursework.runner problems.ipynb --timeout 120 --result-fd 3 --notebook-fd 4

It runs the code cells in order in a fresh kernel (a cell that raises does not stop it, the time
limit does; a timed-out cell and what it started are stopped by
:func:`~lesson_lib.coursework.kernel_stop.stop_runaway_cell` within :data:`AFTER_TIMEOUT_S`), then
an extra cell printing the ``answer_q...`` readings as JSON, and writes ``{"status", "raised",
"payload", "space"}`` to the descriptor the grader opened outside, and the code cells as run, with
their first :data:`MAX_KEPT_OUTPUT` characters of output and every short traceback, to another.
Nothing here scores (the grader trusts no record).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lesson_lib.coursework.kernel_stop import stop_runaway_cell

#: Characters the student's cells may print in all before the printing cell is interrupted.
MAX_OUTPUT = 16 * 2**20
#: Marker printed before the JSON of the answers.
MARK = "__COURSEWORK_ANSWERS__"

#: Most characters of the extraction cell's output kept (its JSON of answers is a few KiB).
MAX_EXTRACT_OUTPUT = 2**20
#: Characters of the student's output the executed notebook keeps.
MAX_KEPT_OUTPUT = 2**18
#: An error's traceback up to this many characters is kept after them too, so a crash is seen
#: whatever was printed before.
MAX_KEPT_ERROR = 2**14

# Runs in the student's kernel after their cells; names start with _cw_ to keep clear of the
# student's own, and print comes from builtins so a redefined print does not matter. Each answer is
# read by the same read_answer the self-check uses, so only plain, small data leaves the kernel.
EXTRACT_TEMPLATE = """
import builtins as _cw_builtins, json as _cw_json
from lesson_lib.coursework.answers import read_answer as _cw_read, plain_text as _cw_text

_cw_globals = dict(globals())
_cw_builtins.print({mark!r} + _cw_json.dumps({{
    "answers": {{_cw_name: _cw_read(_cw_globals[_cw_name]).to_json()
                for _cw_name in {names!r} if _cw_name in _cw_globals}},
    "student": _cw_text(_cw_globals.get("STUDENT")),
}}), flush=True)
"""


def _extract_code() -> str:
    """Last cell run: ``answer_q1`` ... and ``STUDENT`` readings as JSON after :data:`MARK`."""
    from lesson_lib.coursework.problems import PROBLEMS

    return EXTRACT_TEMPLATE.format(mark=MARK, names=tuple(f"answer_{qid}" for qid in PROBLEMS))


def code_sources(raw: object) -> list[str]:
    """The code cells' sources of a parsed notebook JSON, in order, whatever their shape (a
    source that is neither a string nor a list of strings is an empty cell).

    Parameters
    ----------
    raw : object

    Returns
    -------
    list of str
    """
    cells = raw.get("cells") if isinstance(raw, dict) else None
    if not isinstance(cells, list):
        raise ValueError("the notebook has no list of cells")
    sources = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        sources.append(source if isinstance(source, str) else "")
    return sources


#: Seconds the extraction cell may take when every cell ran; after a time-out, seconds
#: for stopping the cell and the extraction cell together.
AFTER_TIMEOUT_S = 30


def _size(content: object) -> int:
    """Rough size in characters of an output message's text and data."""
    if isinstance(content, dict):
        return sum(_size(v) for v in content.values())
    if isinstance(content, list):
        return sum(_size(v) for v in content)
    return len(content) if isinstance(content, str) else 8


def _client_class() -> type:
    from nbclient import NotebookClient

    class _QuietClient(NotebookClient):
        """Keeps the student's cells' first output and short errors, and the extraction cell's."""

        keep_index: int = -1
        #: The cells that raised, with the exception's name.
        raised: dict[int, str]
        flooded: set[int]
        printed: int = 0
        extracted: int = 0
        interrupting: object = None
        cleared: int = 0
        pollers: list[asyncio.Task[Any]]
        #: The execute request of the cell whose output is read last.
        running_msg_id: str | None = None

        async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):  # type: ignore[no-untyped-def]
            task = asyncio.current_task()
            if task is not None:
                self.pollers.append(task)
            self.running_msg_id = parent_msg_id
            return await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)

        def stop_reading_output(self) -> None:
            """Cancel the output readers of cells that are over: nbclient leaves a timed-out
            cell's IOPub reader running, which would drop the extraction cell's answers."""
            if self.pollers and self.pollers[-1].done():
                self.running_msg_id = None
            for task in self.pollers:
                if not task.done():
                    task.cancel()
            self.pollers.clear()

        def output(self, outs, msg, display_id, cell_index):  # type: ignore[no-untyped-def]
            if cell_index != self.keep_index:
                error = msg.get("msg_type") == "error"
                if error:
                    self.raised[cell_index] = str(msg.get("content", {}).get("ename", ""))[:80]
                size = _size(msg.get("content"))
                self.printed += size
                if self.printed > MAX_OUTPUT and cell_index not in self.flooded:
                    # Stop the cell (KeyboardInterrupt) rather than read output for ever.
                    self.flooded.add(cell_index)
                    self.interrupting = asyncio.ensure_future(self.km.interrupt_kernel())
                if self.printed <= MAX_KEPT_OUTPUT or (error and size <= MAX_KEPT_ERROR):
                    return super().output(outs, msg, display_id, cell_index)
                return None
            # a thread the student started may print here too: keep a bounded amount
            self.extracted += _size(msg.get("content"))
            if self.extracted > MAX_EXTRACT_OUTPUT:
                return None
            return super().output(outs, msg, display_id, cell_index)

    return _QuietClient


def execute(sources: Sequence[str], cwd: Path, timeout: float) -> dict[str, Any]:
    """Run the code cells, then the extraction cell; return the result record.

    Parameters
    ----------
    sources : sequence of str
    cwd : Path
        The kernel's working folder.
    timeout : float
        Seconds for the student's cells, counted once the kernel is ready (a slow start on a busy
        machine is not the student's time: the grader's ``GRACE_S`` allows for it).

    Returns
    -------
    dict
        ``status`` (``"ran"``, ``"timed out"``, ``"kernel died"``), ``raised`` (cells
        that raised), ``payload`` (the extraction cell's JSON, or None) and, when the
        notebook stopped early, ``stopped_at`` (the code cell's index, from 0).
    """
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    quiet = logging.getLogger("lesson_lib.coursework.runner.nbclient")
    quiet.setLevel(logging.CRITICAL)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    extract = nbformat.v4.new_code_cell(_extract_code())
    nb.cells.append(extract)
    client = _client_class()(
        nb,
        timeout=int(max(timeout, 1)),
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
        log=quiet,
        # nothing left to save; a graceful stop can take seconds (tools/lesson_site/kernels.py)
        shutdown_kernel="immediate",
    )
    client.keep_index = len(nb.cells) - 1
    client.raised = {}
    client.flooded = set()
    client.pollers = []
    status = "ran"
    # the code cell that was running when the kernel timed out or died (None: all ran)
    running: int | None = None
    extract_limit = float(AFTER_TIMEOUT_S)
    try:
        with client.setup_kernel():
            deadline = time.monotonic() + timeout
            for index, cell in enumerate(nb.cells[:-1]):
                running = index
                remaining = deadline - time.monotonic()
                if remaining < 1:
                    status = "timed out"
                    break
                client.timeout = int(remaining)
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    status = "timed out"
                    client.stop_reading_output()
                    # Stop the runaway cell (KeyboardInterrupt) and what it started, to read answers
                    stopping = time.monotonic()
                    client.cleared = stop_runaway_cell(client, client.running_msg_id)
                    extract_limit -= time.monotonic() - stopping
                    break
            else:
                running = None
            client.timeout = max(1, int(extract_limit))
            client.execute_cell(extract, client.keep_index)
    except DeadKernelError:
        status, extract = "kernel died", None
    except CellTimeoutError:
        status, extract = "timed out", None
    record: dict[str, Any] = {"status": status, "raised": len(client.raised), "payload": None}
    record["executed"] = {**nb, "cells": nb.cells[:-1]}  # main() writes it apart from the record
    record["errors"] = sorted(set(client.raised.values()))[:5]  # MemoryError, NameError, ...
    if status != "ran" and running is not None:
        record["stopped_at"] = running
    if client.flooded:
        record["flooded"] = len(client.flooded)
    if client.cleared:
        record["cleared"] = client.cleared
    if extract is None:
        return record
    payload = None
    for output in extract.get("outputs", []):
        text = output.get("text", "")
        if output.get("output_type") == "stream" and isinstance(text, str) and MARK in text:
            with contextlib.suppress(ValueError, IndexError, RecursionError):
                payload = json.loads(text.split(MARK, 1)[1].strip().splitlines()[0])
    record["payload"] = payload
    return record


#: Largest result written, bytes (the answers' readings take a few KiB).
MAX_RESULT_BYTES = 2**20
#: Largest executed notebook written, bytes (its output is kept to :data:`MAX_KEPT_OUTPUT`).
MAX_EXECUTED_BYTES = 4 * 2**20
#: A tmpfs with less than this free is counted as full, bytes.
FULL_MARGIN = 256 * 2**10
#: Entries looked at when searching the writable folders for a file at the size limit.
_MAX_SCANNED = 10_000


def _write(path: Path | None, fd: int | None, record: dict[str, Any], limit: int) -> None:
    """Write ``record`` as JSON to the grader's file descriptor, or to ``path`` (by hand); one
    larger than ``limit`` bytes says only that it was too large."""
    data = json.dumps(record).encode("utf-8")
    if len(data) > limit:
        data = json.dumps({"status": record.get("status"), "error": "result too large"}).encode()
    if fd is not None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)
        return
    if path is None:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _keep_to_myself(fd: int | None) -> None:
    """Keep the result descriptor from the kernel, which runs as the same user: not inherited,
    and this process not inspectable (``PR_SET_DUMPABLE`` 0, no ``/proc/<pid>/fd``, no tracing).
    The student's code can then only kill the runner, which the grader sees as no result."""
    if fd is not None:
        os.set_inheritable(fd, False)
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_dumpable = 4
        libc.prctl(pr_set_dumpable, 0, 0, 0, 0)


def _space_report(folders: Sequence[Path]) -> dict[str, Any]:
    """``full``: the writable folders with less than :data:`FULL_MARGIN` free; ``file_limit``:
    whether a file there is as large as ``RLIMIT_FSIZE`` allows."""
    import resource

    full = []
    for folder in folders:
        try:
            info = os.statvfs(folder)
        except OSError:
            continue
        if info.f_blocks and info.f_bavail * info.f_frsize < FULL_MARGIN:
            full.append(str(folder))
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    at_limit = False
    if limit != resource.RLIM_INFINITY:
        seen = 0
        for folder in folders:
            for top, dirs, names in os.walk(folder):
                seen += len(dirs) + len(names)
                for name in names:
                    with contextlib.suppress(OSError):
                        at_limit = at_limit or os.lstat(os.path.join(top, name)).st_size >= limit
                if at_limit or seen > _MAX_SCANNED:
                    break
    return {"full": full, "file_limit": at_limit}


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional

    Returns
    -------
    int
        0 when a result file was written.
    """
    parser = argparse.ArgumentParser(prog="python -m lesson_lib.coursework.runner")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--timeout", type=float, required=True)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--result", type=Path, help="write the result record to this file")
    where.add_argument("--result-fd", type=int, help="write it to this open file descriptor")
    parser.add_argument("--notebook-fd", type=int, help="write the executed notebook to this one")
    args = parser.parse_args(argv)
    _keep_to_myself(args.result_fd)
    _keep_to_myself(args.notebook_fd)
    warnings.simplefilter("ignore")
    try:
        with args.notebook.open(encoding="utf-8", errors="replace") as fh:
            sources = code_sources(json.load(fh))
    except (OSError, ValueError, RecursionError, MemoryError) as err:
        record = {"status": "not a notebook", "error": type(err).__name__}
        _write(args.result, args.result_fd, record, MAX_RESULT_BYTES)
        return 0
    try:
        record = execute(sources, args.notebook.parent, args.timeout)
    except RecursionError:
        record = {"status": "could not run", "error": "RecursionError"}
    except Exception as err:  # a kernel that cannot start, a broken cell ...
        record = {"status": "could not run", "error": f"{type(err).__name__}: {err}"[:200]}
    record["space"] = _space_report([Path("/tmp"), args.notebook.parent.resolve()])
    executed = record.pop("executed", None)
    _write(args.result, args.result_fd, record, MAX_RESULT_BYTES)
    if executed is not None and args.notebook_fd is not None:
        _write(None, args.notebook_fd, executed, MAX_EXECUTED_BYTES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
