"""Stopping a notebook cell that ran past its time, and everything it started.

After the interrupt, every process of the kernel's process group but the
kernel is stopped and killed, so the kernel gets the CPU back, and the
kernel's main thread is interrupted again until the kernel reports the cell
over (:func:`stop_runaway_cell`).
"""

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
#: Seconds the kernel gets to report the interrupted cell over before it is interrupted
#: again: four times the longest wait seen once the interrupt had reached the main thread
#: (0.48 s, 80 runs of the fork-and-sleep cell on the two-CPU build machine at a load
#: average of about 100). Much shorter, a second interrupt could reach the kernel while
#: it is still in its own code after the cell, and land there.
_ROUND_S = 2.0


def group_members(pgid: int) -> list[int]:
    """Process ids of the process group ``pgid`` that can still run, read from ``/proc``.

    Parameters
    ----------
    pgid : int

    Returns
    -------
    list of int
        Zombies (ended, not yet reaped) are left out: they cannot be killed again.
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
    fork without end cannot outrun the killing; the kernel is left stopped for
    the caller to continue (SIGCONT).

    Parameters
    ----------
    kernel_pid, pgid : int
        The kernel's process id, spared, and its process group.

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


def interrupt_main_thread(pid: int) -> None:
    """Send SIGINT to the main thread of process ``pid`` (``tgkill``), not to the process.

    Linux may give a signal sent to a process to any thread that does not
    block it, and to another thread when the main thread is stopped or has a
    signal pending off a CPU, as a kernel just continued after
    :func:`clear_kernel_group` has. Python then only sets a flag; a main
    thread asleep in one system call never sees it, and the cell runs on. A
    signal sent to the main thread can only be taken by it, and ends its sleep.

    Parameters
    ----------
    pid : int
        The process; its main thread's id is the same number.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    tgkill = getattr(libc, "tgkill", None)
    if tgkill is None or tgkill(pid, pid, signal.SIGINT) != 0:
        # no tgkill (glibc before 2.30, not Linux): the process at least
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGINT)


def cell_reported_over(client: Any, msg_id: str | None, timeout: float) -> bool:
    """Read the kernel's IOPub messages until it reports the cell ``msg_id`` over.

    The kernel publishes the status "idle" with the cell's request as parent
    once it has handled it, after it has put SIGINT back to ignored; every
    other message is dropped, as the cell's cancelled reader would have.

    Parameters
    ----------
    client : nbclient.NotebookClient
        The client whose kernel ran the cell.
    msg_id : str or None
        The cell's execute request (None: not known, reported as not over).
    timeout : float
        Most seconds to read for.

    Returns
    -------
    bool
        True once the "idle" arrived, False if ``timeout`` passed first.
    """
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


def stop_runaway_cell(client: Any, msg_id: str | None = None, settle: float = SETTLE_S) -> int:
    """Interrupt the kernel's running cell, kill what it started, and wait until it is over.

    First SIGINT to the kernel's whole process group, so a ``multiprocessing``
    pool or a child can stop cleanly; half a second later every process of the
    group but the kernel is killed with the group stopped
    (:func:`clear_kernel_group`). The kernel is then continued, and until it
    reports the cell over (:func:`cell_reported_over`, at most ``settle``
    seconds) its main thread is interrupted again each ``_ROUND_S``
    (:func:`interrupt_main_thread`) and the group cleared again. Processes that
    left the group (``setsid``) are the sandbox's to kill when the run ends.

    Parameters
    ----------
    client : nbclient.NotebookClient
        The client whose kernel ran the cell.
    msg_id : str, optional
        The timed-out cell's execute request (None: the main thread is
        interrupted once, the cell's end not waited for).
    settle : float, default :data:`SETTLE_S`
        Most seconds to wait for the cell to be reported over.

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
    # Only a kernel leading its own process group (jupyter_client starts it
    # in a new session) can be cleared without touching anything else.
    if kernel_pid is None or pgid != kernel_pid or pgid == os.getpgrp():
        return 0

    def clear() -> set[int]:
        killed = clear_kernel_group(kernel_pid, pgid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(kernel_pid, signal.SIGCONT)
        return killed

    alive = run_sync(client.km.is_alive)
    time.sleep(_GRACE_S)
    killed = clear()
    deadline = time.monotonic() + settle
    while True:
        wait = min(_ROUND_S, deadline - time.monotonic())
        if cell_reported_over(client, msg_id, wait) or not alive():
            break
        interrupt_main_thread(kernel_pid)  # ignored by a kernel that is idle
        time.sleep(_GRACE_S / 2)
        killed |= clear()
        if msg_id is None or time.monotonic() >= deadline:
            break
    # what the main thread started after the first clearing, before its interrupt
    killed |= clear()
    return len(killed)
