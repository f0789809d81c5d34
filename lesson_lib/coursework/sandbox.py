"""Run one untrusted command in an operating-system sandbox, with resource limits.

The batch grader runs each submission through :func:`run_isolated`, which
with ``sandbox=True`` wraps the command in bubblewrap (``bwrap``, the sandbox
Flatpak uses; :mod:`~lesson_lib.coursework.sandbox_bwrap`):

* no network (a new network namespace with its own loopback only);
* a read-only view of just what Python needs (``/usr``, ``/etc``, and the
  files of Python, the virtual environment and ``lesson_lib`` the kernel
  imports: :mod:`~lesson_lib.coursework.sandbox_mounts`): no other
  submission, no grader output, nothing else of the grader's home folder;
* writable space of a fixed size, in memory: ``/tmp`` and the home folder
  ``/home/student`` are each a sized tmpfs, the input files shown read-only
  in the home folder; nothing written reaches the host's disk;
* a clean environment (``--clearenv``) with a few fixed variables;
* a new PID namespace with ``--die-with-parent``: when the command ends, or
  the grader stops or dies, every process it started is killed;
* a spare unprivileged user id with no capabilities (``setpriv``), so the
  per-user process limit applies (root ignores it);
* limits on address space, processes, file size, CPU seconds and open files
  (:class:`~lesson_lib.coursework.sandbox_limits.Limits`), and a wall-clock
  timeout; its output is read through a pipe, the first ``keep_output``
  bytes kept;
* a private channel out: file descriptors passed with ``pass_fds`` (the
  grader's result file, opened outside) reach the command, nothing else can
  name them from inside.

Where bubblewrap cannot run, :func:`require_sandbox` raises
:class:`SandboxUnavailable` naming what to install. ``sandbox=False`` keeps
only the throwaway copy, the clean environment, the limits that work for the
current user and the timeout, for machines without the sandbox and with the
risks the instructor page lists.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lesson_lib.coursework.sandbox_bwrap import BASE_UID as BASE_UID
from lesson_lib.coursework.sandbox_bwrap import HOW_TO_INSTALL as HOW_TO_INSTALL
from lesson_lib.coursework.sandbox_bwrap import (
    SANDBOX_HOME,
    _bwrap_argv,
    processes_of,
    require_sandbox,
    reserved_uid,
)
from lesson_lib.coursework.sandbox_bwrap import SandboxUnavailable as SandboxUnavailable
from lesson_lib.coursework.sandbox_bwrap import find_bwrap as find_bwrap
from lesson_lib.coursework.sandbox_limits import GiB as GiB
from lesson_lib.coursework.sandbox_limits import Limits, _limiter
from lesson_lib.coursework.sandbox_limits import MiB as MiB
from lesson_lib.coursework.sandbox_mounts import python_mounts


@dataclass
class RunResult:
    """What happened to one isolated run.

    Attributes
    ----------
    returncode : int
        Exit status of the command (negative: killed by that signal).
    timed_out : bool
        True if it was killed at the wall-clock limit.
    elapsed_s : float
        Wall-clock seconds.
    output : str
        The start of what it printed (stdout and stderr), at most ``keep_output`` bytes.
    sandboxed : bool
        True if it ran inside bubblewrap.
    leftovers : list of int
        Process ids of the sandbox user still alive after the run, which were killed.
    uid : int or None
        The spare user id the command ran as (None without the sandbox).
    """

    returncode: int
    timed_out: bool
    elapsed_s: float
    output: str = ""
    sandboxed: bool = True
    leftovers: list[int] = field(default_factory=list)
    uid: int | None = None


def _environment(home: str, extra: Mapping[str, str]) -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "USER": "student",
        "LOGNAME": "student",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": "/tmp" if home == SANDBOX_HOME else home,
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "IPYTHONDIR": f"{home}/.ipython",
        "JUPYTER_CONFIG_DIR": f"{home}/.jupyter",
        "JUPYTER_DATA_DIR": f"{home}/.local/share/jupyter",
        "JUPYTER_RUNTIME_DIR": f"{home}/.local/share/jupyter/runtime",
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    env.update(extra)
    return env


def run_isolated(
    argv: Sequence[str],
    scratch: Path,
    *,
    timeout: float,
    limits: Limits | None = None,
    sandbox: bool = True,
    env: Mapping[str, str] | None = None,
    readonly: Sequence[Path] = (),
    keep_output: int = 64 * 1024,
    pass_fds: Sequence[int] = (),
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run ``argv`` in the sandbox, its files in ``scratch``, limited and timed.

    Parameters
    ----------
    argv : sequence of str
        The command. Inside the sandbox the files of ``scratch`` are read-only in
        :data:`SANDBOX_HOME`; without it, ``scratch`` itself is the home folder.
    scratch : Path
        A throwaway folder holding the command's input files.
    timeout : float
        Wall-clock seconds before everything is killed (> 0).
    limits : Limits, optional
        Memory, process, file-size and open-file limits (default :class:`Limits`).
    sandbox : bool, default True
        False: no bubblewrap (clean environment, limits and timeout only).
    env : mapping, optional
        Extra environment variables for the command (nothing else is passed on).
    readonly : sequence of Path, optional
        More folders to show read-only inside the sandbox.
    keep_output : int, default 64 KiB
        Bytes of the command's output kept in ``RunResult.output``.
    pass_fds : sequence of int, optional
        Open file descriptors the command inherits under the same numbers.
    cancel : threading.Event, optional
        Set by another thread to stop the run: everything is killed and
        :class:`Cancelled` raised.

    Returns
    -------
    RunResult

    Raises
    ------
    SandboxUnavailable
        If ``sandbox`` is True and bubblewrap cannot run here.
    Cancelled
        If ``cancel`` was set before the command ended.
    """
    if not (timeout > 0 and timeout < float("inf")):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    limits = Limits() if limits is None else limits
    # the user id stays claimed until its processes are reaped (reserved_uid)
    with contextlib.ExitStack() as held:
        scratch = Path(scratch).resolve()
        uid = None
        home = str(scratch)
        command = list(argv)
        if sandbox:
            bwrap = require_sandbox()
            uid = held.enter_context(reserved_uid())
            home = SANDBOX_HOME
            argv_env = [
                arg
                for key, value in _environment(home, env or {}).items()
                for arg in ("--setenv", key, value)
            ]
            wrapper = _bwrap_argv(bwrap, scratch, python_mounts(readonly), uid, limits)
            # --clearenv empties the environment; --setenv (before the command) refills it.
            at = wrapper.index("--chdir")
            command = [*wrapper[:at], *argv_env, *wrapper[at:], *command]
        else:
            # No PID namespace: tag every process so leftovers can be found afterwards.
            from lesson_lib.lab.launch import JOB_ENV

            tag = uuid.uuid4().hex
            env = {**(env or {}), JOB_ENV: tag}
        cpu = int(timeout) + 30
        start = time.monotonic()
        timed_out = False
        # what it prints goes through a pipe: kept up to keep_output, the rest dropped,
        # nothing of it on the host's disk
        read_end, write_end = os.pipe()
        drain = _Drain(read_end, keep_output)
        try:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=subprocess.STDOUT,
                cwd=str(scratch),
                env=_environment(home, env or {}) if uid is None else {"PATH": "/usr/bin:/bin"},
                preexec_fn=_limiter(limits, cpu),
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
        finally:
            os.close(write_end)
        drain.start()
        try:
            timed_out = _wait(proc, start + timeout, cancel)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): leave nothing running
            _kill(proc, uid)
            if uid is not None:
                _reap(uid)
            else:
                from lesson_lib.lab.launch import stop_job

                stop_job(tag)
            raise
        finally:
            _kill(proc, uid)
        if uid is not None:
            leftovers = _reap(uid)
        else:
            from lesson_lib.lab.launch import stop_job

            leftovers = stop_job(tag)
        output = drain.result()
        return RunResult(
            returncode=proc.returncode if proc.returncode is not None else -9,
            timed_out=timed_out,
            elapsed_s=time.monotonic() - start,
            output=output,
            sandboxed=sandbox,
            leftovers=leftovers,
            uid=uid,
        )


class Cancelled(KeyboardInterrupt):
    """A run stopped from another thread (:func:`run_isolated`'s ``cancel``)."""


#: Seconds between looks at the ``cancel`` event while a sandbox runs.
_CANCEL_POLL_S = 0.2


def _wait(proc: subprocess.Popen, deadline: float, cancel: threading.Event | None) -> bool:
    """Wait for ``proc`` until the monotonic ``deadline``; True if it was reached.

    With a ``cancel`` event the wait is cut into short slices (the process's
    end is still seen at once), so another thread can stop the run.
    """
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return proc.poll() is None
        try:
            proc.wait(timeout=left if cancel is None else min(left, _CANCEL_POLL_S))
            return False
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.is_set():
                raise Cancelled from None


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
