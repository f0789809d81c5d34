"""What the student edition may write into or replace: never a checkout, only with --force
a folder it did not make or a file that changed since it wrote it."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from lesson_lib.coursework.output_folder import (
    MANIFEST,
    FolderRefused,
    _force_reasons,
    _never_reasons,
    _read_manifest,
    check_folder,
    files_in,
    write_manifest,
)


def _book(tmp_path: Path) -> Path:
    root = tmp_path / "book-root"
    root.mkdir()
    (root / "_config.yml").write_text("title: x\n")
    (root / "_toc.yml").write_text("root: index\n")
    return root


def test_the_book_a_folder_holding_it_and_a_checkout_are_never_used(tmp_path):
    """The root itself, its parent, a folder with .git, a link: refused even with --force."""
    root = _book(tmp_path)
    for folder in (root, tmp_path):
        with pytest.raises(FolderRefused, match="book's own folder"):
            check_folder(folder, root, writes=None, force=True)
    repo = tmp_path / "other"
    (repo / ".git").mkdir(parents=True)
    with pytest.raises(FolderRefused, match=r"\.git"):
        check_folder(repo, root, writes={"x.ipynb": None}, force=True)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FolderRefused, match="symbolic link"):
        check_folder(link, root, writes=None, force=True)
    assert sorted(p.name for p in root.iterdir()) == ["_config.yml", "_toc.yml"]


def test_a_site_inside_the_book_must_be_under_build(tmp_path):
    """--site book-root/copy would copy itself; book-root/_build/copy is fine."""
    root = _book(tmp_path)
    assert _never_reasons(root / "copy", root, replaces=True)
    assert _never_reasons(root / "_build" / "copy", root, replaces=True) == []
    assert _never_reasons(root / "copy", root, replaces=False) == []


def test_home_and_file_system_root_are_never_used(tmp_path, monkeypatch):
    """HOME (where ~ points) and / are refused whatever the flags."""
    root = _book(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert any("home folder" in r for r in _never_reasons(home, root, replaces=True))
    assert any(
        "root of the file system" in r for r in _never_reasons(Path("/"), root, replaces=True)
    )


def test_a_foreign_non_empty_folder_needs_force(tmp_path):
    """Files the edition did not make: refused, naming a _config.yml and notebooks; --force goes on."""
    root = _book(tmp_path)
    other = tmp_path / "class"
    other.mkdir()
    (other / "_config.yml").write_text("title: my other book\n")
    (other / "alice.ipynb").write_text("{}")
    with pytest.raises(FolderRefused) as info:
        check_folder(other, root, writes=None, force=False)
    message = str(info.value)
    assert "_config.yml" in message and "notebooks" in message and "--force" in message
    assert "nothing was written or deleted" in message
    assert check_folder(other, root, writes=None, force=True) == {}
    assert _force_reasons(tmp_path / "new", None, replaces=True) == ([], {})
    (tmp_path / "empty").mkdir()
    assert _force_reasons(tmp_path / "empty", None, replaces=True) == ([], {})


def test_a_changed_or_unknown_file_in_a_folder_the_edition_made_needs_force(tmp_path):
    """The manifest's digest tells an untouched notebook from a filled-in one."""
    folder = tmp_path / "out"
    (folder / "s1").mkdir(parents=True)
    (folder / "s1" / "problems.ipynb").write_bytes(b"as written")
    write_manifest(folder, {"s1/problems.ipynb": hashlib.sha256(b"as written").hexdigest()})
    assert (
        _force_reasons(folder, ["s1/problems.ipynb", "s2/problems.ipynb"], replaces=False)[0] == []
    )
    (folder / "s1" / "problems.ipynb").write_bytes(b"answer_q1 = 140")
    (folder / "s1" / "notes.txt").write_text("mine")
    reasons, manifest = _force_reasons(folder, ["s1/problems.ipynb"], replaces=False)
    assert manifest == _read_manifest(folder)
    assert reasons == [
        "s1/problems.ipynb changed since the student edition wrote it (a student's work?)"
    ]
    # replacing the whole folder also looks at files the edition would not write
    reasons, _ = _force_reasons(folder, None, replaces=True)
    assert "s1/notes.txt was not written by the student edition" in reasons


def test_build_output_inside_a_site_copy_is_not_a_change(tmp_path):
    """_build and __pycache__ under a copy are the build's, not someone's work."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "a.md").write_text("x")
    write_manifest(folder, {"a.md": hashlib.sha256(b"x").hexdigest()})
    (folder / "_build" / ".jupyter_cache").mkdir(parents=True)
    (folder / "_build" / ".jupyter_cache" / "db").write_text("cache")
    (folder / "tools" / "__pycache__").mkdir(parents=True)
    (folder / "tools" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert _force_reasons(folder, None, replaces=True)[0] == []
    assert sorted(files_in(folder)) == [
        "_build/.jupyter_cache/db",
        "a.md",
        "tools/__pycache__/x.pyc",
    ]


def test_a_manifest_not_written_by_the_edition_is_not_one(tmp_path):
    """A JSON file with another maker, or broken JSON, does not make a folder the edition's."""
    (tmp_path / MANIFEST).write_text(json.dumps({"made_by": "someone", "files": {}}))
    assert _read_manifest(tmp_path) is None
    (tmp_path / MANIFEST).write_text("{")
    assert _read_manifest(tmp_path) is None
    assert _force_reasons(tmp_path, ["x"], replaces=False)[0]
    (tmp_path / MANIFEST).unlink()
    os.mkfifo(tmp_path / MANIFEST)  # once read as text, waiting for a writer that never came
    assert _read_manifest(tmp_path) is None


def test_many_reasons_are_listed_up_to_five(tmp_path):
    """Seven changed files: five named, then how many more."""
    folder = tmp_path / "out"
    folder.mkdir()
    for i in range(7):
        (folder / f"n{i}.ipynb").write_text("changed")
    write_manifest(folder, {f"n{i}.ipynb": "0" * 64 for i in range(7)})
    reasons, _ = _force_reasons(folder, [f"n{i}.ipynb" for i in range(7)], replaces=False)
    assert len(reasons) == 6 and reasons[-1] == "... and 2 more"
