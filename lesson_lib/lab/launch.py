"""Start an MPI job safely: find ``mpiexec``, enforce a timeout, leave nothing behind.

MPICH's Hydra starts each rank in its own session, so every process of a job carries
``LESSON_LAB_JOB=<tag>`` and any still holding it afterwards is stopped. ``/dev/shm/mpich_shm_*``
segments that appeared during the job and that no live process maps are removed. The timeout is
enforced here (Hydra's ``MPIEXEC_TIMEOUT`` is a later backstop). Nothing here imports :mod:`mpi4py`.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from lesson_lib.model._validate import require_int, require_number

#: Environment variable that tags every process of a job started here.
JOB_ENV = "LESSON_LAB_JOB"
#: Environment variable naming a folder where ranks leave failure notes.
STATUS_ENV = "LESSON_LAB_STATUS"
#: Environment variable that overrides which ``mpiexec`` is used.
MPIEXEC_ENV = "LESSON_LAB_MPIEXEC"
#: Where MPICH keeps its shared-memory segments on Linux.
SHM_DIR = Path("/dev/shm")
SHM_PATTERN = "mpich_shm_*"
#: Seconds an unmapped segment stays unmapped before it counts as stale, since another job maps a
#: segment right after creating it (MPICH's ``src/mpl/src/shm/mpl_shm_mmap.c``: create, size, map).
SHM_SETTLE_S = 1.0


class MPIUnavailableError(RuntimeError):
    """``mpiexec`` or ``mpi4py`` cannot be found, so no MPI job can start."""


@dataclass
class LaunchResult:
    """What happened to one MPI job."""

    #: The command that was run.
    command: list[str]
    #: ``mpiexec``'s exit status (``-N`` when signal N killed it).
    returncode: int
    #: Everything the job printed (stdout and stderr, merged).
    output: str
    #: True if the job was stopped for exceeding its timeout.
    timed_out: bool
    #: Wall-clock seconds from start to end.
    elapsed_s: float
    #: Failure notes ranks left in the status folder, by rank.
    rank_notes: dict[int, str] = field(default_factory=dict)
    #: Process ids still alive after ``mpiexec`` ended, which were stopped.
    stopped: list[int] = field(default_factory=list)
    #: Leftover shared-memory files, which were removed.
    removed_shm: list[str] = field(default_factory=list)


def under_mpi(environ: dict[str, str] | None = None) -> bool:
    """True if this process is a rank of a running MPI job (Hydra's, Open MPI's or PMIx's).

    Parameters
    ----------
    environ : dict, optional
        Environment to inspect; defaults to ``os.environ``.

    Returns
    -------
    bool
    """
    env = os.environ if environ is None else environ
    return any(k in env for k in ("PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"))


def _find_mpiexec(explicit: str | None = None) -> str:
    """Path of the ``mpiexec`` to use."""
    wanted = explicit or os.environ.get(MPIEXEC_ENV)
    if wanted:
        found = shutil.which(wanted)
        if found is None:
            raise MPIUnavailableError(
                f"mpiexec not found at {wanted!r}: give the path of an existing mpiexec "
                f"(--mpiexec or {MPIEXEC_ENV}), or unset it to use the one installed with "
                "the 'mpich' package"
            )
        return found
    sibling = Path(sys.executable).parent / "mpiexec"
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return str(sibling)
    found = shutil.which("mpiexec")
    if found is None:
        raise MPIUnavailableError(
            "mpiexec not found: no MPI is installed for this Python. Install the lesson's "
            "environment (`make setup`, which pip-installs 'mpi4py' and 'mpich'), or put an "
            "MPI's mpiexec on PATH"
        )
    return found


def require_mpi4py() -> None:
    """Raise :class:`MPIUnavailableError` if :mod:`mpi4py` is not importable (MPI is not started)."""
    import importlib.util

    if importlib.util.find_spec("mpi4py") is None:
        raise MPIUnavailableError(
            f"mpi4py is not installed for {sys.executable}: pip-install 'mpi4py' and "
            "'mpich' (the lesson's requirements.txt pins both)"
        )


def _shm_files() -> set[str]:
    """Paths of MPICH shared-memory segments that exist now."""
    return {str(p) for p in SHM_DIR.glob(SHM_PATTERN)} if SHM_DIR.is_dir() else set()


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()] if os.path.isdir("/proc") else []


def _mapped_shm_files() -> set[str]:
    """MPICH shared-memory files that some live process has mapped."""
    mapped: set[str] = set()
    marker = str(SHM_DIR / SHM_PATTERN.rstrip("*"))
    for pid in _pids():
        with (
            contextlib.suppress(OSError),
            open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as fh,
        ):
            mapped |= {line[line.find(marker) :].split()[0] for line in fh if marker in line}
    return mapped


def _job_processes(tag: str) -> list[int]:
    """Process ids whose environment holds ``LESSON_LAB_JOB=<tag>``."""
    needle = f"{JOB_ENV}={tag}".encode()
    found = []
    for pid in _pids():
        with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as fh:
            if pid != os.getpid() and needle in fh.read().split(b"\0"):
                found.append(pid)
    return found


def _signal_all(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def stop_job(tag: str, grace_s: float = 2.0) -> list[int]:
    """Stop every process tagged ``tag``: SIGTERM, then SIGKILL after ``grace_s``.

    Parameters
    ----------
    tag : str
    grace_s : float, default 2.0
        Seconds to wait between the two signals.

    Returns
    -------
    list of int
        The process ids that were signalled.
    """
    pids = _job_processes(tag)
    if not pids:
        return []
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and set(_job_processes(tag)) & set(pids):
        time.sleep(0.05)
    _signal_all(_job_processes(tag), signal.SIGKILL)
    return pids


def _stale_shm_files(
    before: set[str], settle_s: float = SHM_SETTLE_S, sleep: Callable[[float], None] = time.sleep
) -> list[str]:
    """MPICH segments created since ``before`` that no live process maps, and stay so."""
    new = _shm_files() - before
    candidates = new and new - _mapped_shm_files()  # reading every process's maps takes a while
    if not candidates:
        return []
    sleep(settle_s)
    return sorted((candidates & _shm_files()) - _mapped_shm_files())


def _remove_stale_shm(before: set[str], settle_s: float = SHM_SETTLE_S) -> list[str]:
    """Remove the segments ``_stale_shm_files`` finds."""
    removed = []
    for path in _stale_shm_files(before, settle_s):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
            removed.append(path)
    return removed


def _read_notes(folder: Path) -> dict[int, str]:
    notes = {}
    for path in sorted(folder.glob("rank-*.txt")):
        with contextlib.suppress(OSError, ValueError):
            notes[int(path.stem.split("-")[1])] = path.read_text(encoding="utf-8").strip()
    return notes


def run_mpiexec(
    n: int,
    args: Sequence[str],
    *,
    timeout: float,
    hostfile: str | None = None,
    mpiexec: str | None = None,
    relay: TextIO | None = None,
    tag: str | None = None,
) -> LaunchResult:
    """Run ``mpiexec -n <n> <python> <args...>`` with a hard timeout and clean-up.

    The output is read line by line in the calling thread (a notebook shows
    it in the running cell). However the job ends, leftover tagged processes
    are stopped and stale shared-memory segments removed.

    Parameters
    ----------
    n : int
        Number of ranks (>= 1).
    args : sequence of str
        Arguments after the Python interpreter, e.g. ``["-m", "mpi4py.bench", "pingpong"]``.
    timeout : float
        Seconds before the whole job is stopped (> 0).
    hostfile : str, optional
        Hydra host file (``host`` or ``host:slots`` per line), passed as ``-f``.
    mpiexec : str, optional
        Default ``$LESSON_LAB_MPIEXEC``, else the one beside Python, else the one on ``PATH``.
    relay : text stream, optional
        Where to copy the job's output as it arrives (e.g. ``sys.stderr``).
    tag : str, optional
        Job tag; defaults to ``$LESSON_LAB_JOB`` or a fresh random one.

    Returns
    -------
    LaunchResult

    Raises
    ------
    MPIUnavailableError
        If ``mpiexec`` cannot be found.
    """
    import subprocess
    import tempfile

    n = require_int("n", n)
    timeout = require_number("timeout", timeout, strict=True, unit="s")
    exe = _find_mpiexec(mpiexec)
    tag = tag or os.environ.get(JOB_ENV) or uuid.uuid4().hex
    command = [exe, "-n", str(n)]
    if hostfile is not None:
        if not Path(hostfile).is_file():
            raise FileNotFoundError(f"hostfile {hostfile!r} does not exist")
        command += ["-f", str(hostfile)]
    command += [sys.executable, *args]
    before = _shm_files()
    status_dir = Path(tempfile.mkdtemp(prefix="lesson-lab-"))
    env = {**os.environ, JOB_ENV: tag, STATUS_ENV: str(status_dir), "PYTHONUNBUFFERED": "1"}
    env["MPIEXEC_TIMEOUT"] = str(int(timeout) + 15)  # a backstop, should this process die
    start = time.monotonic()
    timed_out = False
    chunks: list[str] = []
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    pending = b""
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                left = start + timeout - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                if not sel.select(timeout=min(left, 0.2)):
                    if proc.poll() is not None:
                        break
                    continue
                data = os.read(fd, 65536)
                if not data:
                    break
                pending += data
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    text = line.decode("utf-8", "replace") + "\n"
                    chunks.append(text)
                    if relay is not None:
                        relay.write(text)
                        relay.flush()
        if timed_out:
            _terminate(proc)
        else:
            try:
                proc.wait(timeout=max(start + timeout - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                timed_out = True
                _terminate(proc)
    except BaseException:  # Ctrl-C, SIGTERM: nothing of the job is left behind
        _terminate(proc)
        stop_job(tag)
        _remove_stale_shm(before)
        shutil.rmtree(status_dir, ignore_errors=True)
        raise
    finally:
        proc.stdout.close()
    if pending:
        chunks.append(pending.decode("utf-8", "replace"))
    output = "".join(chunks)
    if "APPLICATION TIMED OUT" in output:
        timed_out = True
    stopped = stop_job(tag)
    removed = _remove_stale_shm(before)
    notes = _read_notes(status_dir)
    shutil.rmtree(status_dir, ignore_errors=True)
    return LaunchResult(
        command=command,
        returncode=proc.returncode,
        output=output,
        timed_out=timed_out,
        elapsed_s=time.monotonic() - start,
        rank_notes=notes,
        stopped=stopped,
        removed_shm=removed,
    )


def _terminate(proc: object) -> None:
    """SIGTERM ``mpiexec``'s process group (Hydra passes it on), SIGKILL if it lingers."""
    import subprocess

    assert isinstance(proc, subprocess.Popen)
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
