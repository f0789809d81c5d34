"""Install Debian packages a check needs, when allowed (shared by the ``ensure_*`` tools).

Standard library only, so it runs before the venv exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess


def can_apt() -> bool:
    """Whether Debian packages can be installed here (root with apt-get).

    Returns
    -------
    bool
        True when running as root and ``apt-get`` is on PATH.
    """
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


def apt_install(tool: str, packages: list[str], how_to: str) -> int:
    """``apt-get update`` then install ``packages``; the exit code the caller should return.

    Parameters
    ----------
    tool : str
        Name of the calling tool, for its messages.
    packages : list of str
        Debian packages to install.
    how_to : str
        What a reader should do instead, printed when apt-get fails.

    Returns
    -------
    int
        0 on success; on failure 1 under ``CI=true`` (a missing tool must fail
        CI) and 0 elsewhere (the checks that need it then skip).
    """
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", *packages],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
    except subprocess.CalledProcessError as exc:
        print(f"{tool}: apt-get failed ({exc}); {how_to}.")
        return 1 if os.environ.get("CI", "").lower() in {"1", "true", "yes"} else 0
    return 0
