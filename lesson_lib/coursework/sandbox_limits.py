"""The resource limits of one sandboxed run, and the code that sets them in its process."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

MiB = 2**20
GiB = 2**30


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    Parameters
    ----------
    memory_bytes : int, default 3 GiB
        Address space of each process (``RLIMIT_AS``), bytes. A larger
        allocation fails with ``MemoryError`` in the student's cell.
    processes : int, default 200
        Processes and threads the sandbox user may have at once
        (``RLIMIT_NPROC``; a Jupyter kernel and its runner use about 30).
        Enforced only in the sandbox (root ignores it).
    file_bytes : int, default 64 MiB
        Largest file the command may write (``RLIMIT_FSIZE``), bytes.
    open_files : int, default 1024
        Open files per process (``RLIMIT_NOFILE``).
    tmp_bytes : int, default 256 MiB
        Size of the tmpfs at ``/tmp`` (memory of the host), bytes.
    home_bytes : int, default 256 MiB
        Size of the tmpfs at the home folder (memory of the host), bytes.
        With ``tmp_bytes``, :attr:`writable_bytes` is all a submission can
        write, on top of the memory its processes use.
    """

    memory_bytes: int = 3 * GiB
    processes: int = 200
    file_bytes: int = 64 * MiB
    open_files: int = 1024
    tmp_bytes: int = 256 * MiB
    home_bytes: int = 256 * MiB

    @property
    def writable_bytes(self) -> int:
        """All the space a sandboxed run can write (``/tmp`` and the home folder), bytes."""
        return self.tmp_bytes + self.home_bytes


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
