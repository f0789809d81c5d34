"""The bubblewrap command line of a sandboxed run, and the environment its command sees.

What the options isolate is listed in :mod:`~lesson_lib.coursework.sandbox`.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from lesson_lib.coursework.sandbox_mounts import Mount

#: The home folder inside the sandbox (a sized tmpfs with the input files read-only in it).
SANDBOX_HOME = "/home/student"


def _bwrap_argv(
    bwrap: str, scratch: Path, mounts: Sequence[Mount], uid: int, tmp_bytes: int, home_bytes: int
) -> list[str]:
    """bubblewrap's options: system read-only, Python's mounts, two sized tmpfs, the inputs."""
    argv = [
        bwrap,
        *"--unshare-ipc --unshare-pid --unshare-net --unshare-uts --unshare-cgroup-try".split(),
        *"--die-with-parent --new-session --clearenv --hostname sandbox".split(),
        *"--ro-bind /usr /usr --ro-bind /etc /etc".split(),
    ]
    for name in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
        top = Path("/", name)
        if top.is_symlink():
            argv += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            argv += ["--ro-bind", str(top), str(top)]
    argv += ["--dev", "/dev", "--proc", "/proc"]
    argv += ["--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    made: set[Path] = {Path("/"), Path("/tmp"), Path("/usr"), Path("/etc"), Path("/dev")}
    for mount in [*mounts, Mount(scratch, Path(SANDBOX_HOME))]:
        for parent in reversed(mount.dest.parents):
            if parent not in made:
                argv += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        made.add(mount.dest)
        if mount.dest == Path(SANDBOX_HOME):
            argv += ["--perms", "1777", "--size", str(home_bytes), "--tmpfs", SANDBOX_HOME]
        elif mount.hide:
            argv += ["--perms", "0555", "--size", "4096", "--tmpfs", str(mount.dest)]
        else:
            argv += ["--ro-bind", str(mount.source), str(mount.dest)]
    # the inputs, read-only, inside the home folder's tmpfs
    for entry in sorted(scratch.iterdir()):
        if entry.is_file() and not entry.is_symlink():
            argv += ["--ro-bind", str(entry), f"{SANDBOX_HOME}/{entry.name}"]
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    argv += ["--chdir", SANDBOX_HOME, setpriv, f"--reuid={uid}", f"--regid={uid}"]
    return [*argv, *"--clear-groups --inh-caps=-all --bounding-set=-all --".split()]


def _environment(home: str, extra: Mapping[str, str]) -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    return {
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
        **extra,
    }


def _sandboxed(
    command: Sequence[str],
    bwrap: str,
    scratch: Path,
    mounts: Sequence[Mount],
    uid: int,
    env: Mapping[str, str],
    tmp_bytes: int,
    home_bytes: int,
) -> list[str]:
    """``command`` inside bubblewrap, with :func:`_environment`'s variables and ``env``."""
    wrapper = _bwrap_argv(bwrap, scratch, mounts, uid, tmp_bytes, home_bytes)
    variables = _environment(SANDBOX_HOME, env).items()
    setenv = [arg for key, value in variables for arg in ("--setenv", key, value)]
    # --clearenv empties the environment; --setenv (before the command) refills it.
    at = wrapper.index("--chdir")
    return [*wrapper[:at], *setenv, *wrapper[at:], *command]
