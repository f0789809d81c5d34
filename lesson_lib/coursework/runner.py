"""Execute one submitted notebook and save the answers it defines (runs inside the sandbox).

The batch grader (:mod:`lesson_lib.coursework.grade`) starts this module in
the submission's sandbox, kernel included::

    python -m lesson_lib.coursework.runner problems.ipynb --timeout 120 --result result.json

It runs the notebook's code cells top to bottom in a fresh kernel (a cell
that raises does not stop it; the time limit does, and interrupts the
running cell), then one extra cell that prints the ``answer_q...``
variables as JSON, and writes ``{"status", "raised", "payload"}`` to the
result file. Nothing here scores anything: the grader reads the result
file, treats it as untrusted input and scores outside the sandbox.

A cell that times out may have started processes (a fork bomb, a runaway
``multiprocessing`` pool). Before the extraction cell runs, every process of
the kernel's process group but the kernel is stopped and killed
(:func:`clear_kernel_group`), so the kernel gets the CPU back and the answers
are read at once instead of after a second time limit.

Only what the grader needs is kept: whether each cell raised, and the output
of the extraction cell. Everything else a cell prints is dropped as it
arrives, so a notebook that prints without end cannot fill the memory.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Characters the student's cells may print in all before the printing cell is interrupted.
MAX_OUTPUT = 16 * 2**20
#: Marker printed before the JSON of the answers.
MARK = "__COURSEWORK_ANSWERS__"

# Runs inside the student's kernel after their cells; names start with _cw_ so
# they do not clash with the student's own, and print comes from builtins so
# a redefined print does not matter.
EXTRACT = f"""
import builtins as _cw_builtins, json as _cw_json

def _cw_plain(value, depth=0):
    if value is None or value is Ellipsis:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -10**300 < value < 10**300 else "a number too large to read"
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, str):
        return value[:200]
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        return _cw_plain(value.item(), depth)
    if isinstance(value, (list, tuple)) and depth < 2:
        return [_cw_plain(v, depth + 1) for v in value[:20]]
    return {{"unreadable object": type(value).__name__[:40]}}

_cw_globals = dict(globals())
_cw_builtins.print({MARK!r} + _cw_json.dumps({{
    "answers": {{k: _cw_plain(v) for k, v in _cw_globals.items()
                if isinstance(k, str) and k.startswith("answer_q")}},
    "student": _cw_plain(_cw_globals.get("STUDENT")),
}}), flush=True)
"""


def code_sources(raw: object) -> list[str]:
    """The code cells' sources of a notebook read as plain JSON, whatever their shape.

    A source may be a string or a list of strings (both valid nbformat);
    anything else (a number, a dict) counts as an empty cell.

    Parameters
    ----------
    raw : object
        The parsed notebook JSON.

    Returns
    -------
    list of str
        One entry per code cell, in order.
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


#: Rounds of stop-and-kill before giving up on a group that keeps growing.
_CLEAR_ROUNDS = 200
#: Seconds after the interrupt within which a stopped cell must stop starting processes.
_QUIET_WITHIN_S = 1.5


def group_members(pgid: int) -> list[int]:
    """Process ids of the process group ``pgid``, read from ``/proc``.

    Parameters
    ----------
    pgid : int
        The process group.

    Returns
    -------
    list of int
        Members that have not ended (zombies, ended but not yet reaped by
        their parent, are left out: they cannot run or be killed again).
    """
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        # after "pid (comm)": state, ppid, pgrp, ...; comm may hold spaces or ")"
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def clear_kernel_group(kernel_pid: int, pgid: int) -> set[int]:
    """Stop the process group ``pgid`` and kill every member but the kernel.

    The whole group is stopped (SIGSTOP) before each round, so processes that
    fork without end cannot outrun the killing; the kernel is left stopped,
    and the caller continues it (SIGCONT) when it is ready.

    Parameters
    ----------
    kernel_pid : int
        The kernel's process id, spared.
    pgid : int
        The kernel's process group (the kernel leads its own session).

    Returns
    -------
    set of int
        The processes killed.
    """
    killed: set[int] = set()
    for _ in range(_CLEAR_ROUNDS):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGSTOP)
        others = [pid for pid in group_members(pgid) if pid != kernel_pid and pid not in killed]
        if not others:
            break
        for pid in others:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(others)
    return killed


def stop_runaway_cell(client: Any) -> tuple[int, bool]:
    """Interrupt the kernel's running cell and kill the processes it started.

    The processes are killed first, with the kernel stopped, then the kernel
    is interrupted (KeyboardInterrupt) and continued. If the cell is still
    starting processes when ``_QUIET_WITHIN_S`` is up (a fork bomb that
    the interrupt did not end: a kernel at its process limit may never see
    it), the whole group is
    killed, kernel included, rather than waiting for an answer that will not
    come; the grader then reads the answers from the cells' source.

    Parameters
    ----------
    client : nbclient.NotebookClient
        The client whose kernel ran the cell.

    Returns
    -------
    tuple of (int, bool)
        How many processes were killed, and whether the kernel is still alive
        to run the extraction cell.
    """
    from jupyter_core.utils import run_sync

    provisioner = client.km.provisioner
    kernel_pid = getattr(provisioner, "pid", None)
    pgid = getattr(provisioner, "pgid", None)
    if kernel_pid is None or pgid is None:  # not a local kernel: interrupt only
        run_sync(client.km.interrupt_kernel)()
        return 0, True
    killed = clear_kernel_group(kernel_pid, pgid)
    # SIGINT to the group (now the kernel alone) waits while the kernel is
    # stopped and arrives as it continues.
    run_sync(client.km.interrupt_kernel)()
    # Rounds until three in a row find nothing new, or time is up. Only a cell
    # still starting processes in the last round is a runaway: on a busy
    # machine fewer rounds fit in the time, and that alone proves nothing.
    quiet, still_forking = 0, False
    deadline = time.monotonic() + _QUIET_WITHIN_S
    while True:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(kernel_pid, signal.SIGCONT)
        time.sleep(0.05)
        more = clear_kernel_group(kernel_pid, pgid)
        killed |= more
        still_forking = bool(more)
        quiet = 0 if still_forking else quiet + 1
        if quiet >= 3 or time.monotonic() >= deadline:
            break
    if still_forking:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        return len(killed), False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(kernel_pid, signal.SIGCONT)
    return len(killed), True


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
        """Keeps only errors of the student's cells and the extraction cell's output."""

        keep_index: int = -1
        raised: set[int]
        flooded: set[int]
        printed: int = 0
        interrupting: object = None
        cleared: int = 0

        def output(self, outs, msg, display_id, cell_index):  # type: ignore[no-untyped-def]
            if cell_index != self.keep_index:
                if msg.get("msg_type") == "error":
                    self.raised.add(cell_index)
                self.printed += _size(msg.get("content"))
                if self.printed > MAX_OUTPUT and cell_index not in self.flooded:
                    # Stop the cell (KeyboardInterrupt) rather than read output for ever.
                    self.flooded.add(cell_index)
                    self.interrupting = asyncio.ensure_future(self.km.interrupt_kernel())
                return None
            return super().output(outs, msg, display_id, cell_index)

    return _QuietClient


def execute(sources: Sequence[str], cwd: Path, timeout: float) -> dict[str, Any]:
    """Run the code cells, then the extraction cell; return the result record.

    Parameters
    ----------
    sources : sequence of str
        Code cell sources.
    cwd : Path
        The kernel's working folder.
    timeout : float
        Seconds for the student's cells, kernel start included.

    Returns
    -------
    dict
        ``status`` (``"ran"``, ``"timed out"``, ``"kernel died"``), ``raised``
        (cells that raised) and ``payload`` (the extraction cell's JSON, or None).
    """
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    quiet = logging.getLogger("lesson_lib.coursework.runner.nbclient")
    quiet.setLevel(logging.CRITICAL)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    extract = nbformat.v4.new_code_cell(EXTRACT)
    nb.cells.append(extract)
    client = _client_class()(
        nb,
        timeout=int(max(timeout, 1)),
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
        log=quiet,
        shutdown_kernel="immediate",
    )
    client.keep_index = len(nb.cells) - 1
    client.raised = set()
    client.flooded = set()
    client.cleared = 0
    status = "ran"
    deadline = time.monotonic() + timeout
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells[:-1]):
                remaining = deadline - time.monotonic()
                if remaining < 1:
                    status = "timed out"
                    break
                client.timeout = int(remaining)
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    status = "timed out"
                    # Stop the runaway cell (KeyboardInterrupt), and whatever it
                    # started, so the answers can be read.
                    client.cleared, alive = stop_runaway_cell(client)
                    if not alive:
                        extract = None
                    break
            if extract is not None:
                client.timeout = 30
                client.execute_cell(extract, client.keep_index)
    except DeadKernelError:
        status, extract = "kernel died", None
    except CellTimeoutError:
        status, extract = "timed out", None
    record: dict[str, Any] = {"status": status, "raised": len(client.raised), "payload": None}
    if client.flooded:
        record["flooded"] = len(client.flooded)
    if client.cleared:
        record["cleared"] = client.cleared
    if extract is None:
        return record
    payload = None
    for output in extract.get("outputs", []):
        text = output.get("text", "")
        if output.get("output_type") == "stream" and MARK in text:
            with contextlib.suppress(ValueError, IndexError, RecursionError):
                payload = json.loads(text.split(MARK, 1)[1].strip().splitlines()[0])
    record["payload"] = payload
    return record


def _write(path: Path, record: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, path)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when a result file was written.
    """
    parser = argparse.ArgumentParser(prog="python -m lesson_lib.coursework.runner")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    try:
        with args.notebook.open(encoding="utf-8", errors="replace") as fh:
            sources = code_sources(json.load(fh))
    except (OSError, ValueError, RecursionError, MemoryError) as err:
        _write(args.result, {"status": "not a notebook", "error": type(err).__name__})
        return 0
    try:
        record = execute(sources, args.notebook.parent, args.timeout)
    except RecursionError:
        record = {"status": "could not run", "error": "RecursionError"}
    except Exception as err:  # a kernel that cannot start, a broken cell ...
        record = {"status": "could not run", "error": f"{type(err).__name__}: {err}"[:200]}
    _write(args.result, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
