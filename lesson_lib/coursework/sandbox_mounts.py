"""What of the host a grading sandbox sees: the files Python needs to run the kernel, no more.

``/usr`` and ``/etc`` are shown whole: they hold the system, not anyone's files. Python may live in
the instructor's home (pyenv, uv, conda) beside other things, so :func:`python_mounts` lists only
the interpreter and every link to it under its own name (a uv venv's ``python`` -> ``python3`` ->
``python3.11``), its standard library (the installation's ``site-packages`` covered when a venv
without system packages runs), the shared libraries directly in its ``lib`` folder, the virtual
environment (or the installation's ``site-packages``) and ``lesson_lib`` itself. Each is shown
read-only at its own path: cheaper than a copy, and unlike an overlay it shows nothing else.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Folders shown whole, read-only, in every sandbox.
SYSTEM = (Path("/usr"), Path("/etc"))


@dataclass(frozen=True)
class Mount:
    """One path of the host shown in the sandbox."""

    #: The host's file or folder (symbolic links resolved).
    source: Path
    #: Where it appears inside the sandbox (its own path, or the unresolved one).
    dest: Path
    #: If True, ``dest`` is covered by an empty read-only folder instead.
    hide: bool = False


def _system_site_packages() -> bool:
    """Whether the virtual environment also imports the installation's own packages."""
    try:
        text = (Path(sys.prefix) / "pyvenv.cfg").read_text()
    except OSError:
        return False
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "include-system-site-packages":
            return value.strip().lower() == "true"
    return False


def _executable_chain(executable: str | os.PathLike[str]) -> list[Path]:
    """``executable`` (absolute), each link it leads through and last the file itself, each by the
    name it is reached under (at most 40 links, as the kernel follows)."""
    path = Path(os.path.abspath(executable))
    chain = [path]
    for _ in range(40):  # the kernel's own limit on nested links (ELOOP)
        if not path.is_symlink():
            break
        path = Path(os.path.normpath(path.parent / os.readlink(path)))
        chain.append(path)
    return chain


def _wanted_paths() -> tuple[list[Path], list[Path]]:
    """The paths the kernel needs as they are on the host (unresolved), and the ones to cover."""
    import lesson_lib

    # sysconfig's paths of the installation itself, not of the virtual environment
    base = dict(base=sys.base_prefix, installed_base=sys.base_prefix)
    base |= dict(platbase=sys.base_exec_prefix, installed_platbase=sys.base_exec_prefix)
    stdlib = Path(sysconfig.get_path("stdlib", vars=base))
    platstdlib = Path(sysconfig.get_path("platstdlib", vars=base))
    show = [*_executable_chain(sys.executable), stdlib, platstdlib]
    libdir = Path(sys.base_prefix) / "lib"
    if libdir.is_dir():
        show += sorted(p for p in libdir.glob("lib*.so*") if p.is_file())
    base_site = {Path(sysconfig.get_path(k, vars=base)) for k in ("purelib", "platlib")}
    hide: list[Path] = []
    if sys.prefix != sys.base_prefix:
        show.append(Path(sys.prefix))
    if sys.prefix == sys.base_prefix or _system_site_packages():
        show += sorted(base_site)
    else:
        hide += sorted(base_site)
    show.append(Path(lesson_lib.__file__).resolve().parent)
    return show, hide


def python_mounts(extra: Sequence[Path] = ()) -> list[Mount]:
    """The read-only mounts of a sandbox beyond ``/usr`` and ``/etc`` (see the module).

    Parameters
    ----------
    extra : sequence of Path, optional
        More files or folders to show read-only.

    Returns
    -------
    list of Mount
        Shown paths first, outer before inner, then the covers; none under ``/usr`` or ``/etc``, none
        inside another shown path unless it comes in under another name.
    """
    show, hide = _wanted_paths()
    mounts: list[Mount] = []
    for path in [*show, *extra]:
        path = Path(os.path.abspath(path))
        if not path.exists():
            continue
        real = path.resolve()
        for dest in dict.fromkeys((real, path)):
            if not any(dest == s or s in dest.parents for s in SYSTEM):
                mounts.append(Mount(real, dest))
    kept = _outermost(mounts)
    shown = [m.dest for m in kept]
    covers = [
        Mount(p.resolve(), p.resolve(), hide=True)
        for p in hide
        if p.is_dir() and any(s in p.resolve().parents for s in shown)
    ]
    return kept + covers


def _outermost(mounts: Iterable[Mount]) -> list[Mount]:
    """Drop a mount whose destination lies inside another's (the outer one shows it)."""
    ordered = sorted(set(mounts), key=lambda m: (len(m.dest.parts), str(m.dest)))
    kept: list[Mount] = []
    for mount in ordered:
        if any(k.dest == mount.dest or k.dest in mount.dest.parents for k in kept):
            continue
        kept.append(mount)
    return kept
