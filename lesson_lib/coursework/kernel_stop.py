"""Stopping a cell that ran past its time, and all it started (:func:`stop_runaway_cell`)."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import time
from pathlib import Path
from typing import Any

#: Rounds of stop-and-kill before giving up on a group that keeps growing.
_CLEAR_ROUNDS = 200
#: Seconds a cell's processes get to end on the interrupt before they are killed.
_GRACE_S = 0.5
#: Most seconds spent waiting for a timed-out cell to be reported over (its kernel's
#: "idle"), interrupting it again each ``_ROUND_S``, before the answers are asked for.
SETTLE_S = 10.0
#: Seconds the kernel gets to report the interrupted cell over before another interrupt: four times
#: the longest wait seen once the interrupt reached the main thread (0.48 s, 80 runs of the
#: fork-and-sleep cell on the two-CPU build machine at a load average of about 100). Much shorter,
#: a second interrupt could land in the kernel's own code after the cell.
_ROUND_S = 2.0


def _group_members(pgid: int) -> list[int]:
    """Process ids of the process group ``pgid`` that can still run (no zombies), from ``/proc``."""
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


def _clear_kernel_group(kernel_pid: int, pgid: int) -> set[int]:
    """Kill and return every member of group ``pgid`` but the kernel; the group is SIGSTOPped each
    round so endless forks cannot outrun the killing, the kernel left stopped for the caller."""
    killed: set[int] = set()
    for _ in range(_CLEAR_ROUNDS):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGSTOP)
        others = [pid for pid in _group_members(pgid) if pid != kernel_pid and pid not in killed]
        if not others:
            break
        for pid in others:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(others)
    return killed


def _interrupt_main_thread(pid: int) -> None:
    """SIGINT to the main thread of process ``pid`` (``tgkill``), not to the process: Linux may give
    a process's signal to another thread (when the main thread is stopped, as just continued after
    :func:`_clear_kernel_group`), and a main thread asleep in a system call would never see it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)  # kept while its function is called
    tgkill = getattr(libc, "tgkill", None)
    if tgkill is None or tgkill(pid, pid, signal.SIGINT) != 0:
        # no tgkill (glibc before 2.30, not Linux): the process at least
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGINT)


def _cell_reported_over(client: Any, msg_id: str | None, timeout: float) -> bool:
    """Read the kernel's IOPub messages (dropped, as the cell's cancelled reader would have) until
    the status "idle" of the cell ``msg_id``; False if ``timeout`` seconds pass first."""
    from jupyter_core.utils import run_sync

    if msg_id is None or client.kc is None:
        return False
    get_msg = run_sync(client.kc.iopub_channel.get_msg)
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > 0:
        try:
            msg = get_msg(timeout=left)
        except queue.Empty:
            return False
        parent = msg.get("parent_header") or {}
        content = msg.get("content") or {}
        if (
            parent.get("msg_id") == msg_id
            and msg.get("msg_type") == "status"
            and content.get("execution_state") == "idle"
        ):
            return True
    return False


def stop_runaway_cell(client: Any, msg_id: str | None = None) -> int:
    """Interrupt the kernel's running cell, kill what it started, and wait until it is over.

    SIGINT goes to the kernel's whole group first, so a ``multiprocessing`` pool or child can stop
    cleanly; 0.5 s later the group is stopped and all but the kernel killed. Until the cell is
    reported over (at most :data:`SETTLE_S`) its main thread is re-interrupted each ``_ROUND_S``
    and the group cleared. Processes that left it (``setsid``) the sandbox kills at the end.

    Parameters
    ----------
    client : nbclient.NotebookClient
        The client whose kernel ran the cell.
    msg_id : str, optional
        The timed-out cell's request (None: interrupt the main thread once, not awaiting its end).

    Returns
    -------
    int
        How many processes were killed.
    """
    from jupyter_core.utils import run_sync

    run_sync(client.km.interrupt_kernel)()
    provisioner = client.km.provisioner
    kernel_pid = getattr(provisioner, "pid", None)
    pgid = getattr(provisioner, "pgid", None)
    # Only a kernel leading its own group (jupyter_client's new session) can be cleared harmlessly
    if kernel_pid is None or pgid != kernel_pid or pgid == os.getpgrp():
        return 0

    def clear() -> set[int]:
        killed = _clear_kernel_group(kernel_pid, pgid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(kernel_pid, signal.SIGCONT)
        return killed

    alive = run_sync(client.km.is_alive)
    time.sleep(_GRACE_S)
    killed = clear()
    deadline = time.monotonic() + SETTLE_S
    while True:
        wait = min(_ROUND_S, deadline - time.monotonic())
        if _cell_reported_over(client, msg_id, wait) or not alive():
            break
        _interrupt_main_thread(kernel_pid)  # ignored by a kernel that is idle
        time.sleep(_GRACE_S / 2)
        killed |= clear()
        if msg_id is None or time.monotonic() >= deadline:
            break
    # what the main thread started after the first clearing, before its interrupt
    killed |= clear()
    return len(killed)
