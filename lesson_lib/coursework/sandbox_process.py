"""The sandboxed command's process: its resource limits, its output, and its end.

The limits are set in the child before it runs the command; what it prints
is read through a pipe, the first bytes kept and the rest dropped; when it
ends, its process group is killed and so is any process of the sandbox user
still alive.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lesson_lib.coursework.sandbox import Limits


def _limiter(limits: Limits, cpu_seconds: int) -> Callable[[], None]:
    def apply() -> None:
        import resource

        os.umask(0o022)
        for which, value in (
            (resource.RLIMIT_AS, limits.memory_bytes),
            (resource.RLIMIT_NPROC, limits.processes),
            (resource.RLIMIT_FSIZE, limits.file_bytes),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_CPU, cpu_seconds),
            (resource.RLIMIT_CORE, 0),
        ):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (value, value))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)

    return apply


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
