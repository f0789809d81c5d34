"""The bubblewrap sandbox: whether it can run here, the spare user it runs as, and its options.

The ``bwrap`` command line gives a command no network, a PID namespace that
dies with the grader, the system and Python's files read-only
(:mod:`~lesson_lib.coursework.sandbox_mounts`), two sized tmpfs with the input
files, and a spare unprivileged user to run as (:func:`reserved_uid`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from lesson_lib.coursework.sandbox_limits import Limits
from lesson_lib.coursework.sandbox_mounts import Mount, python_mounts

#: The home folder inside the sandbox (a sized tmpfs with the input files read-only in it).
SANDBOX_HOME = "/home/student"
#: What to tell someone without a sandbox.
HOW_TO_INSTALL = (
    "install bubblewrap (Debian/Ubuntu: 'sudo apt-get install bubblewrap', Fedora: "
    "'sudo dnf install bubblewrap'; `make grade` does it when run as root), or pass "
    "--no-sandbox to grade without one (only for submissions you trust)"
)
#: First user id tried for the sandboxed command; ids above it are tried if it is in use.
BASE_UID = 2_000_000_000


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox on this machine."""


def find_bwrap() -> str | None:
    """Path of the ``bwrap`` executable, or None.

    Returns
    -------
    str or None
        ``$LESSON_BWRAP`` if set, else ``bwrap`` on ``PATH``.
    """
    explicit = os.environ.get("LESSON_BWRAP")
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    return shutil.which("bwrap")


def require_sandbox() -> str:
    """Check that a sandbox can be made here; return the ``bwrap`` path.

    Runs ``true`` in a sandbox with the same options as a real run.

    Returns
    -------
    str
        The ``bwrap`` executable.

    Raises
    ------
    SandboxUnavailable
        Not Linux, bubblewrap missing, not root, or bwrap fails here; the
        message says what to install or do.
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
    with _scratch_probe() as scratch, reserved_uid() as uid:
        try:
            proc = subprocess.run(
                [*_bwrap_argv(bwrap, scratch, python_mounts(), uid, Limits()), true],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=60,
                check=False,
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
def _scratch_probe() -> Iterator[Path]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="lesson-sandbox-probe-") as folder:
        yield Path(folder)


def _owners() -> dict[int, int]:
    """Every process id in ``/proc``, with the user id that owns it."""
    owners = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                owners[int(entry)] = os.stat(f"/proc/{entry}").st_uid
    return owners


@contextlib.contextmanager
def reserved_uid() -> Iterator[int]:
    """A user id no process uses, held for this process until the context ends.

    A spare id's process count (``RLIMIT_NPROC``) starts at zero, and killing
    its processes afterwards touches this sandbox alone. No process in ``/proc``
    is not enough when two graders start at once, so the id is also claimed by
    binding an abstract Unix socket named after it: atomic, refused while held,
    released when the context ends or the process dies (graders in one network
    namespace see each other's claims).

    Returns
    -------
    contextlib.AbstractContextManager of int

    Raises
    ------
    SandboxUnavailable
        If no spare id is found among the thousand tried.
    """
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


def _bwrap_argv(
    bwrap: str, scratch: Path, mounts: Sequence[Mount], uid: int, limits: Limits
) -> list[str]:
    """bubblewrap's options: system read-only, Python's mounts, two sized tmpfs, the inputs."""
    argv = [
        bwrap,
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
    ]
    for name in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
        top = Path("/", name)
        if top.is_symlink():
            argv += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            argv += ["--ro-bind", str(top), str(top)]
    argv += ["--dev", "/dev", "--proc", "/proc"]
    argv += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    made: set[Path] = {Path("/"), Path("/tmp"), Path("/usr"), Path("/etc"), Path("/dev")}
    for mount in [*mounts, Mount(scratch, Path(SANDBOX_HOME))]:
        for parent in reversed(mount.dest.parents):
            if parent not in made:
                argv += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        made.add(mount.dest)
        if mount.dest == Path(SANDBOX_HOME):
            argv += ["--perms", "1777", "--size", str(limits.home_bytes), "--tmpfs", SANDBOX_HOME]
        elif mount.hide:
            argv += ["--perms", "0555", "--size", "4096", "--tmpfs", str(mount.dest)]
        else:
            argv += ["--ro-bind", str(mount.source), str(mount.dest)]
    # the inputs, read-only, inside the home folder's tmpfs
    for entry in sorted(scratch.iterdir()):
        if entry.is_file() and not entry.is_symlink():
            argv += ["--ro-bind", str(entry), f"{SANDBOX_HOME}/{entry.name}"]
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    argv += [
        "--chdir",
        SANDBOX_HOME,
        setpriv,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]
    return argv
