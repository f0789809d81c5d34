"""What of the host a sandbox is shown: Python's files by name, never a whole installation."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from lesson_lib.coursework.sandbox_mounts import (
    Mount,
    _executable_chain,
    _outermost,
    _wanted_paths,
    python_mounts,
)


def test_no_mount_of_the_whole_python_installation():
    """The installation folder (sys.base_prefix) itself is never shown, only files in it."""
    shown = [m.dest for m in python_mounts() if not m.hide]
    base = Path(sys.base_prefix).resolve()
    assert base not in shown and Path(sys.base_prefix) not in shown
    if not any(base == s or s in base.parents for s in (Path("/usr"), Path("/etc"))):
        assert all(p != base for p in shown)
        assert not any(p == base / "include" or p == base / "bin" for p in shown)


def test_nothing_under_usr_or_etc_and_no_mount_inside_another():
    """/usr and /etc are bound whole already; no shown path lies inside another shown one."""
    shown = [m.dest for m in python_mounts() if not m.hide]
    for path in shown:
        assert not (path.is_relative_to("/usr") or path.is_relative_to("/etc")), path
        assert not any(other in path.parents for other in shown), path


def test_the_installations_own_packages_are_covered_in_a_virtual_environment():
    """With a venv that does not include system packages, base site-packages is covered."""
    show, hide = _wanted_paths()
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    site = Path(sysconfig.get_path("purelib", vars=base))
    venv_cfg = Path(sys.prefix, "pyvenv.cfg")
    if sys.prefix != sys.base_prefix and "include-system-site-packages = false" in (
        venv_cfg.read_text()
    ):
        assert site in hide and site not in show
        stdlib = Path(sysconfig.get_path("stdlib", vars=base)).resolve()
        if stdlib in site.resolve().parents:
            covers = [m for m in python_mounts() if m.hide]
            assert [m.dest for m in covers] == [site.resolve()]


def test_a_path_behind_a_symbolic_link_is_shown_under_both_names(tmp_path):
    """An extra folder reached through a link appears at the link's path and its own."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    extra = [m for m in python_mounts([link]) if m.source == real]
    assert {m.dest for m in extra} == {real, Path(os.path.abspath(link))}


def test_outermost_keeps_the_outer_of_two_nested_mounts():
    """/a and /a/b: only /a; /a and /ab: both."""
    mounts = [Mount(Path("/a/b"), Path("/a/b")), Mount(Path("/a"), Path("/a"))]
    mounts.append(Mount(Path("/ab"), Path("/ab")))
    assert [m.dest for m in _outermost(mounts)] == [Path("/a"), Path("/ab")]


def _uv_like_venv(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A venv as uv makes it: venv/bin/python -> inst/bin/python3 -> python3.11 (a file)."""
    real = tmp_path / "inst" / "bin" / "python3.11"
    real.parent.mkdir(parents=True)
    real.write_bytes(b"")
    middle = real.parent / "python3"
    middle.symlink_to("python3.11")
    venv_python = tmp_path / "venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(middle)
    return venv_python, middle, real


def test_the_executable_chain_names_every_link_on_the_way_to_the_file(tmp_path):
    """Three names by hand: the venv's python, the absolute link it holds, and the relative
    link's target beside it."""
    venv_python, middle, real = _uv_like_venv(tmp_path)
    assert _executable_chain(venv_python) == [venv_python, middle, real]
    assert _executable_chain(real) == [real]


def test_the_middle_link_of_a_uv_venv_is_shown_as_the_real_interpreter(tmp_path, monkeypatch):
    """The sandbox must show inst/bin/python3 too (bound to the file python3.11), or
    venv/bin/python dangles there and the kernel cannot start (exit status 127)."""
    venv_python, middle, real = _uv_like_venv(tmp_path)
    monkeypatch.setattr(sys, "executable", str(venv_python))
    mounts = {m.dest: m.source for m in python_mounts() if not m.hide}
    assert mounts[middle] == real and mounts[real] == real
