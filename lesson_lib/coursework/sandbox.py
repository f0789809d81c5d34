"""Run one untrusted command in an operating-system sandbox, with resource limits.

:func:`run_isolated` with ``sandbox=True`` wraps the command in bubblewrap (``bwrap``, Flatpak's
sandbox; :mod:`~lesson_lib.coursework.sandbox_bwrap`): no network; read-only, only what Python needs
(:mod:`~lesson_lib.coursework.sandbox_mounts`), so no other submission or grader output; ``/tmp``
and home as sized in-memory tmpfs, the input files read-only there; a clean environment; a new PID
namespace with ``--die-with-parent``, so every process dies with the run; a spare unprivileged user
id without capabilities, so the per-user process limit applies; :class:`Limits` and a wall-clock
timeout; output through a pipe, its start kept; a private channel out (``pass_fds``). Where
bubblewrap cannot run, :func:`require_sandbox` says what to install; ``sandbox=False`` keeps the
throwaway copy, clean environment, limits and timeout, as a spare user where it can
(:func:`spare_user_missing`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lesson_lib.coursework.sandbox_bwrap import SANDBOX_HOME as SANDBOX_HOME
from lesson_lib.coursework.sandbox_bwrap import _bwrap_argv, _environment, _sandboxed
from lesson_lib.coursework.sandbox_mounts import python_mounts
from lesson_lib.coursework.sandbox_process import _Drain, _kill, _owners, _reap
from lesson_lib.coursework.sandbox_process import processes_of as processes_of

#: What to tell someone without a sandbox.
HOW_TO_INSTALL = (
    "install bubblewrap (Debian/Ubuntu: 'sudo apt-get install bubblewrap', Fedora: "
    "'sudo dnf install bubblewrap'; `make grade` does it when run as root), or pass "
    "--no-sandbox to grade without one (only for submissions you trust)"
)
#: First user id tried for the sandboxed command; ids above it are tried if it is in use.
BASE_UID = 2_000_000_000

MiB = 2**20
GiB = 2**30


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox on this machine."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run."""

    #: Address space per process (``RLIMIT_AS``); more raises ``MemoryError`` in the cell.
    memory_bytes: int = 3 * GiB
    #: Processes and threads of the sandbox user (``RLIMIT_NPROC``; a kernel and its runner use
    #: about 30); enforced only in the sandbox (root ignores it).
    processes: int = 200
    #: Largest file the command may write (``RLIMIT_FSIZE``).
    file_bytes: int = 64 * MiB
    #: Open files per process (``RLIMIT_NOFILE``).
    open_files: int = 1024
    #: Size of the ``/tmp`` tmpfs (host memory).
    tmp_bytes: int = 256 * MiB
    #: Size of the home tmpfs (host memory).
    home_bytes: int = 256 * MiB


@dataclass
class RunResult:
    """What happened to one isolated run."""

    #: Exit status of the command (negative when killed by that signal).
    returncode: int
    #: True if it was killed at the wall-clock limit.
    timed_out: bool
    #: Wall-clock seconds.
    elapsed_s: float
    #: The start of what it printed (stdout and stderr), at most ``keep_output`` bytes.
    output: str = ""
    #: True if it ran inside bubblewrap.
    sandboxed: bool = True
    #: Process ids of the sandbox user still alive after the run, killed.
    leftovers: list[int] = field(default_factory=list)
    #: The spare user id it ran as (None without the sandbox).
    uid: int | None = None


def find_bwrap() -> str | None:
    """Path of the ``bwrap`` executable: ``$LESSON_BWRAP`` if set, else ``bwrap`` on ``PATH``.

    Returns
    -------
    str or None
    """
    explicit = os.environ.get("LESSON_BWRAP")
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    return shutil.which("bwrap")


def require_sandbox() -> str:
    """The ``bwrap`` path, once ``true`` ran in a sandbox with a real run's options.

    Returns
    -------
    str

    Raises
    ------
    SandboxUnavailable
        Not Linux, no bubblewrap, not root, or bwrap fails; the message says what to install or do.
    """
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the sandbox needs Linux (this is {sys.platform}); grade on a Linux machine, or "
            "pass --no-sandbox to grade without one (only for submissions you trust)"
        )
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxUnavailable(f"bubblewrap ('bwrap') is not installed: {HOW_TO_INSTALL}")
    if os.geteuid() != 0:
        raise SandboxUnavailable(
            "the grader's sandbox runs bubblewrap as root (it switches each submission to a "
            "spare unprivileged user so the process limit applies): run the grader as root, "
            "for example in a container or CI job, or pass --no-sandbox"
        )
    true = shutil.which("true") or "/usr/bin/true"
    sizes = Limits().tmp_bytes, Limits().home_bytes
    with (
        tempfile.TemporaryDirectory(prefix="lesson-sandbox-probe-") as scratch,
        _reserved_uid() as uid,
    ):
        probe = [*_bwrap_argv(bwrap, Path(scratch), python_mounts(), uid, *sizes), true]
        try:
            proc = subprocess.run(
                probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(
                f"bubblewrap could not start ({exc}): {HOW_TO_INSTALL}"
            ) from None
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise SandboxUnavailable(
            f"bubblewrap is installed but cannot make a sandbox here ({why[0]}); in a container "
            "it needs to run as root with user and network namespaces allowed, or pass "
            "--no-sandbox"
        )
    return bwrap


@contextlib.contextmanager
def _reserved_uid() -> Iterator[int]:
    """A user id no process uses (its ``RLIMIT_NPROC`` count starts at zero, killing its processes
    touches this run alone), held until the context ends: an abstract Unix socket of its name claims
    it atomically against another grader."""
    used = set(_owners().values())
    start = os.getpid() % 100_000
    for offset in range(start, start + 1000):
        uid = BASE_UID + offset
        if uid in used:
            continue
        claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            claim.bind(f"\0lesson-sandbox-uid-{uid}")
        except OSError:  # another grader holds it
            claim.close()
            continue
        try:
            yield uid
        finally:
            claim.close()
        return
    raise SandboxUnavailable("no spare user id found for the sandbox")


def _limiter(limits: Limits, cpu_seconds: int) -> Callable[[], None]:
    import resource  # here: the child may be a user who cannot read this Python's library

    def apply() -> None:
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


def run_isolated(
    argv: Sequence[str],
    scratch: Path,
    *,
    timeout: float,
    limits: Limits = Limits(),
    sandbox: bool = True,
    env: Mapping[str, str] | None = None,
    keep_output: int = 64 * 1024,
    pass_fds: Sequence[int] = (),
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run ``argv`` in the sandbox, its files in ``scratch``, limited and timed.

    Parameters
    ----------
    argv : sequence of str
    scratch : Path
        A throwaway folder of its input files: read-only in
        :data:`~lesson_lib.coursework.sandbox_bwrap.SANDBOX_HOME`, or without the sandbox the home.
    timeout : float
        Wall-clock seconds before everything is killed (> 0).
    limits : Limits, optional
    sandbox : bool, default True
        False: no bubblewrap (clean environment, limits and timeout only).
    env : mapping, optional
        Extra environment variables for the command (nothing else is passed on).
    keep_output : int, default 64 KiB
        Bytes of the command's output kept in ``RunResult.output``.
    pass_fds : sequence of int, optional
        Open file descriptors the command inherits under the same numbers.
    cancel : threading.Event, optional
        Set by another thread to stop the run: everything is killed and :class:`Cancelled` raised.

    Returns
    -------
    RunResult

    Raises
    ------
    SandboxUnavailable
        If ``sandbox`` is True and bubblewrap cannot run here.
    """
    if not (timeout > 0 and timeout < float("inf")):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    # the user id stays claimed until its processes are reaped (_reserved_uid)
    with contextlib.ExitStack() as held:
        scratch = Path(scratch).resolve()
        uid = None
        command = list(argv)
        tag = uuid.uuid4().hex
        if sandbox:
            bwrap = require_sandbox()
            uid = held.enter_context(_reserved_uid())
            sizes = limits.tmp_bytes, limits.home_bytes
            command = _sandboxed(command, bwrap, scratch, python_mounts(), uid, env or {}, *sizes)
        else:
            # No PID namespace: tag every process so leftovers can be found afterwards.
            from lesson_lib.lab.launch import JOB_ENV

            env = {**(env or {}), JOB_ENV: tag}
            if spare_user_missing(command[0]) is None:
                # not as the grader (Gradescope's /autograder): the course salt and the roster
                # stay unreadable to the notebook
                uid = held.enter_context(_reserved_uid())
                _hand_over(scratch, uid)
        # inside bubblewrap, --setenv gives the command its environment
        child_env = {"PATH": "/usr/bin:/bin"} if sandbox else _environment(str(scratch), env or {})
        cpu = int(timeout) + 30
        start = time.monotonic()
        # output through a pipe: keep_output kept, the rest dropped, none on the host's disk
        read_end, write_end = os.pipe()
        drain = _Drain(read_end, keep_output)
        try:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=subprocess.STDOUT,
                cwd=str(scratch),
                env=child_env,
                preexec_fn=_limiter(limits, cpu),
                start_new_session=True,
                **(
                    {}
                    if sandbox or uid is None
                    else {"user": uid, "group": uid, "extra_groups": []}
                ),
                pass_fds=tuple(pass_fds),
            )
        finally:
            os.close(write_end)
        drain.start()
        try:
            timed_out = _wait(proc, start + timeout, cancel)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): leave nothing running
            _kill(proc, uid)
            _left_behind(uid, tag)
            raise
        finally:
            _kill(proc, uid)
        leftovers = _left_behind(uid, tag)
        returncode = proc.returncode if proc.returncode is not None else -9
        elapsed = time.monotonic() - start
        return RunResult(returncode, timed_out, elapsed, drain.result(), sandbox, leftovers, uid)


def spare_user_missing(program: str) -> str | None:
    """What keeps an unsandboxed run of ``program`` from running as a spare unprivileged user.

    Parameters
    ----------
    program : str
        The command's executable (the grader runs its own Python).

    Returns
    -------
    str or None
        None when the switch is possible: the grader is root holding CAP_SETUID, CAP_SETGID and
        CAP_CHOWN (Docker's default keeps them), and any user may run ``program``. Otherwise
        what is missing, and how to give it.
    """
    missing = []
    if os.geteuid() != 0 or not _can_change_user():
        missing.append("the grader to run as root with CAP_SETUID, CAP_SETGID and CAP_CHOWN")
    if not _runs_for_anyone(program):
        missing.append(
            f"a Python any user can run ({program} or a folder above it lacks o+x; "
            "for example one installed under /usr or /opt)"
        )
    return "needs " + " and ".join(missing) if missing else None


def _can_change_user() -> bool:
    """Whether this process holds CAP_CHOWN, CAP_SETGID and CAP_SETUID (bits 0, 6 and 7)."""
    status = Path("/proc/self/status").read_text()
    effective = int(status.split("CapEff:")[1].split()[0], 16)
    return effective & 0b11000001 == 0b11000001


def _runs_for_anyone(program: str) -> bool:
    """Whether any user may run ``program`` (a Python under ``/root`` is root's alone)."""
    path = Path(shutil.which(program) or program).resolve()
    return all(os.stat(p).st_mode & 0o001 for p in [path, *path.parents])


def _hand_over(scratch: Path, uid: int) -> None:
    """Give an unsandboxed run's user its folder, and a way into the private one holding it."""
    os.chmod(scratch.parent, os.stat(scratch.parent).st_mode | 0o111)
    for path in [scratch, *scratch.rglob("*")]:
        os.chown(path, uid, uid, follow_symlinks=False)


def _left_behind(uid: int | None, tag: str) -> list[int]:
    """Kill and list what a run left: the sandbox user's processes, or those ``tag`` marks."""
    if uid is not None:
        return _reap(uid)
    from lesson_lib.lab.launch import stop_job

    return stop_job(tag)


class Cancelled(KeyboardInterrupt):
    """A run stopped from another thread (:func:`run_isolated`'s ``cancel``)."""


#: Seconds between looks at the ``cancel`` event while a sandbox runs.
_CANCEL_POLL_S = 0.2


def _wait(proc: subprocess.Popen, deadline: float, cancel: threading.Event | None) -> bool:
    """Wait for ``proc`` until monotonic ``deadline`` (True if reached), watching ``cancel``."""
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
