"""Start JupyterLab on the lesson with the chapters opening as notebooks: ``make lab``.

Everything JupyterLab, IPython and matplotlib would write under the user's
home goes to a folder of the project instead (``_build/jupyter`` by default):
configuration, data, runtime files, user settings, workspaces. So do the
files of the tools it starts: npm's cache and debug logs (jupyter-lsp runs
``npm prefix`` when the server starts) and whatever follows the XDG base
directories (``XDG_CACHE_HOME``, ``XDG_CONFIG_HOME``, ``XDG_DATA_HOME``,
``XDG_STATE_HOME``). The jupytext default-viewer setting that makes
``book/*.md`` open as notebooks (the same one Binder's ``postBuild``
writes) is copied from ``tools/jupyter/default_setting_overrides.json``
into that folder's ``labconfig``. Nothing is read from or written to
``~/.jupyter``. The folder and each folder in it are private (0700), and the
server runs with umask 077: its runtime files hold the login token.

JupyterLab opens on ``_build/lab``, where the chapters are written afresh
each time with their numbers filled in and their cross-references as links
(:mod:`lesson_lib.chapters.notebook`), so a chapter reads as it does on the
site before any cell runs. Edit the chapters themselves in ``book/``.

Usage::

    python tools/lab.py [--state DIR] [jupyter lab options ...]

A ``--state`` without a folder is a usage error (exit status 2).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OVERRIDES = ROOT / "tools" / "jupyter" / "default_setting_overrides.json"
DEFAULT_STATE = ROOT / "_build" / "jupyter"
#: Where ``make lab`` writes the chapters it opens.
LAB_ROOT = ROOT / "_build" / "lab"


def lab_env(state: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a project-local JupyterLab, with its folders created.

    Parameters
    ----------
    state : pathlib.Path
        Folder for everything JupyterLab writes.
    base : dict, optional
        Environment to extend (default ``os.environ``).

    Returns
    -------
    dict of str to str
        ``JUPYTER_CONFIG_DIR``, ``JUPYTER_DATA_DIR``, ``JUPYTER_RUNTIME_DIR``,
        ``JUPYTERLAB_SETTINGS_DIR``, ``JUPYTERLAB_WORKSPACES_DIR``,
        ``IPYTHONDIR``, ``MPLCONFIGDIR``, ``npm_config_cache`` and the four
        ``XDG_*_HOME`` inside ``state``, and the Python's folder first on
        ``PATH`` (so the kernel and ``mpiexec`` are the venv's).
    """
    state = state.resolve()
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o700)  # the runtime files hold the login token
    folders = {
        "JUPYTER_CONFIG_DIR": state / "config",
        "JUPYTER_DATA_DIR": state / "data",
        "JUPYTER_RUNTIME_DIR": state / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": state / "user-settings",
        "JUPYTERLAB_WORKSPACES_DIR": state / "workspaces",
        "IPYTHONDIR": state / "ipython",
        "MPLCONFIGDIR": state / "matplotlib",
        # npm keeps its debug logs in its cache folder (default ~/.npm)
        "npm_config_cache": state / "npm",
        "XDG_CACHE_HOME": state / "xdg" / "cache",
        "XDG_CONFIG_HOME": state / "xdg" / "config",
        "XDG_DATA_HOME": state / "xdg" / "data",
        "XDG_STATE_HOME": state / "xdg" / "state",
    }
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)  # Jupyter makes runtime/ private only when it creates it itself
    labconfig = folders["JUPYTER_CONFIG_DIR"] / "labconfig"
    labconfig.mkdir(exist_ok=True)
    shutil.copyfile(OVERRIDES, labconfig / "default_setting_overrides.json")
    env = dict(os.environ if base is None else base)
    env.update({k: str(v) for k, v in folders.items()})
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def command(args: list[str], root: Path = LAB_ROOT) -> list[str]:
    """The ``jupyter lab`` command line, on ``root`` unless ``args`` name a root.

    Parameters
    ----------
    args : list of str
        Extra ``jupyter lab`` options.
    root : pathlib.Path, optional
        The folder JupyterLab serves (default the written chapters, :data:`LAB_ROOT`).

    Returns
    -------
    list of str
        The command.
    """
    exe = str(Path(sys.executable).with_name("jupyter"))
    cmd = [exe, "lab"]
    if not names_root(args):
        cmd.append(f"--ServerApp.root_dir={root}")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in args:
        cmd.append("--allow-root")
    return cmd + args


def names_root(args: list[str]) -> bool:
    """Whether ``jupyter lab`` options name the folder to serve."""
    return any(a.startswith(("--ServerApp.root_dir", "--notebook-dir")) for a in args)


USAGE = (
    "usage: python tools/lab.py [--state DIR] [jupyter lab options ...]  (make lab LAB_ARGS=...)"
)


def split_state(args: list[str]) -> tuple[Path, list[str]]:
    """The state folder (``--state DIR`` or ``--state=DIR`` first) and the other options.

    Parameters
    ----------
    args : list of str
        The command line after ``tools/lab.py``.

    Returns
    -------
    (pathlib.Path, list of str)
        The folder (:data:`DEFAULT_STATE` if not given) and JupyterLab's options.

    Raises
    ------
    ValueError
        If ``--state`` has no folder after it.
    """
    first = args[0] if args else ""
    if first.startswith("--state="):
        value = first.split("=", 1)[1]
        if not value:
            raise ValueError("--state= needs a folder, e.g. --state=_build/jupyter")
        return Path(value), args[1:]
    if first == "--state":
        if len(args) < 2 or args[1].startswith("-"):
            raise ValueError("--state needs a folder after it, e.g. --state _build/jupyter")
        return Path(args[1]), args[2:]
    return DEFAULT_STATE, args


def main(argv: list[str] | None = None) -> int:
    """Set up the project-local folders and replace this process with JupyterLab.

    Parameters
    ----------
    argv : list of str, optional
        ``[--state DIR] [jupyter lab options]`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        2 for a usage error; otherwise only returned if JupyterLab could not be started.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        state, args = split_state(args)
    except ValueError as err:
        print(f"{USAGE}\nlab: error: {err}", file=sys.stderr)
        return 2
    env = lab_env(state)
    cmd = command(args)
    if not names_root(args):  # another folder served: the chapters are not written
        sys.path.insert(0, str(ROOT))
        from lesson_lib.chapters.notebook import write_notebook_book

        pages = write_notebook_book(LAB_ROOT)
        print(
            f"lab: {len(pages)} pages written to {LAB_ROOT / 'book'} with their numbers filled in"
        )
    print(f"lab: JupyterLab with its settings in {state} (chapters open as notebooks)", flush=True)
    os.umask(0o077)  # what the server writes is private: jpserver-*-open.html holds the token
    os.execve(cmd[0], cmd, env)
    return 1  # pragma: no cover - execve does not return


if __name__ == "__main__":
    sys.exit(main())
