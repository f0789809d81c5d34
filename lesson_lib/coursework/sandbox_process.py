"""The sandboxed command's process: its output kept up to a size, and everything it started
killed when it ends (its process group, and any process of the sandbox user still alive)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping the first ``keep`` bytes and dropping the rest."""

    def __init__(self, fd: int, keep: int) -> None:
        super().__init__(name="sandbox output", daemon=True)
        self.fd = fd
        self.keep = keep
        self.kept = bytearray()

    def run(self) -> None:
        try:
            while True:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    return
                room = self.keep - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        except OSError:
            return
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)

    def result(self, wait_s: float = 10.0) -> str:
        """What was kept, once every writer has gone (or ``wait_s`` later)."""
        self.join(wait_s)
        return bytes(self.kept).decode("utf-8", "replace")


def _owners() -> dict[int, int]:
    """Every process id in ``/proc``, with the user id that owns it."""
    owners = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                owners[int(entry)] = os.stat(f"/proc/{entry}").st_uid
    return owners


def processes_of(uid: int) -> list[int]:
    """Process ids owned by ``uid``.

    Parameters
    ----------
    uid : int

    Returns
    -------
    list of int
    """
    return [pid for pid, owner in _owners().items() if owner == uid]


def _kill(proc: subprocess.Popen, uid: int | None) -> None:
    """Kill the command's process group (bwrap kills the sandbox with it)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
    if uid is None:  # no sandbox: the session may still hold children
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def _reap(uid: int, grace_s: float = 2.0, wait_s: float = 5.0) -> list[int]:
    """Kill any process of the sandbox user alive ``grace_s`` after the run; returns them."""
    deadline = time.monotonic() + grace_s
    while processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.05)  # the kernel is still tearing down the PID namespace
    deadline = time.monotonic() + wait_s
    found: list[int] = []
    while True:
        alive = processes_of(uid)
        if not alive:
            return found
        found = sorted(set(found) | set(alive))
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return found
        time.sleep(0.05)
