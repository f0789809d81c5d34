"""A folder of submissions: one entry per name, renamed notebooks recognised, special files
named and never opened, older notebooks converted."""

from __future__ import annotations

import json
import os
import socket
import stat

import pytest

from lesson_lib.coursework.extract import static_student
from lesson_lib.coursework.submissions import (
    find_submissions,
    hidden_names,
    notebook_name,
    read_notebook,
)

NOTEBOOK = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []})

#: A version-3 notebook as written by IPython 2 (worksheets, "input" instead of "source").
V3 = {
    "nbformat": 3,
    "nbformat_minor": 0,
    "metadata": {"name": ""},
    "worksheets": [
        {
            "metadata": {},
            "cells": [
                {
                    "cell_type": "code",
                    "collapsed": False,
                    "input": 'STUDENT = "s006"\nanswer_q1 = 140',
                    "language": "python",
                    "metadata": {},
                    "outputs": [],
                    "prompt_number": 1,
                }
            ],
        }
    ],
}


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("s001.ipynb", "s001"),
        ("S004.IPYNB", "S004"),
        ("s005.ipynb.txt", "s005"),
        ("s005.IPYNB.TXT", "s005"),
        ("s007.ipynb.json", "s007"),
        ("s002 (1).ipynb", "s002"),
        ("s002(12).ipynb", "s002"),
        ("s002 (1).ipynb.txt", "s002"),
    ],
)
def test_renamed_notebooks_are_recognised(name, stem):
    """Any case, an added .txt or .json, a browser's ' (1)': the ID is what is left."""
    found = notebook_name(name)
    assert found is not None and found[0] == stem
    assert bool(found[1]) == (name not in ("s001.ipynb", "S004.IPYNB"))


@pytest.mark.parametrize(
    "name", ["notes.txt", ".ipynb", "s001.ipynb.pdf", "s001.ipynbx", "(1).ipynb"]
)
def test_other_names_are_not_notebooks(name):
    """A text file, a bare extension, a different tail: not a notebook's name."""
    found = notebook_name(name)
    assert found is None or found[0] == "(1)"


def _make(folder, name, kind):
    path = folder / name
    if kind == "file":
        path.write_text(NOTEBOOK)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        return server
    elif kind == "link":
        path.symlink_to("/etc/passwd")
    return None


def test_every_name_gets_exactly_one_entry(tmp_path):
    """Files, folders, links, FIFOs, sockets and devices: one entry each, the special ones
    saying why they cannot be graded; names starting with '.' are left out and listed."""
    names = {
        "S004.IPYNB": "file",
        "s005.ipynb.txt": "file",
        "s002 (1).ipynb": "file",
        "x.ipynb": "dir",
        "pipe.ipynb": "fifo",
        "sock.ipynb": "socket",
        "link.ipynb": "link",
        "notes.txt": "file",
        ".DS_Store": "file",
        ".ipynb_checkpoints": "dir",
        "x\nalice: 16 \u2215 16 (ran, 2.1 s).ipynb": "file",
    }
    held = [_make(tmp_path, name, kind) for name, kind in names.items()]
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "dirlink").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "s009").mkdir()
    (tmp_path / "s009" / "PROBLEMS.IPYNB").write_text(NOTEBOOK)
    (tmp_path / "s010").mkdir()
    (tmp_path / "s010" / "sizing.ipynb").write_text(NOTEBOOK)
    if os.geteuid() == 0:
        os.mknod(tmp_path / "dev.ipynb", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    try:
        found = {e.name: e for e in find_submissions(tmp_path)}
    finally:
        for server in held:
            if server is not None:
                server.close()
    visible = [n for n in os.listdir(tmp_path) if not n.startswith(".")]
    assert sorted(found) == sorted(visible)
    assert hidden_names(tmp_path) == [".DS_Store", ".ipynb_checkpoints"]
    readable = {n for n, e in found.items() if not e.problem}
    assert readable == {
        "S004.IPYNB",
        "s005.ipynb.txt",
        "s002 (1).ipynb",
        "s009",
        "x\nalice: 16 \u2215 16 (ran, 2.1 s).ipynb",
    }
    assert found["s002 (1).ipynb"].stem == "s002" and found["s002 (1).ipynb"].notes
    assert found["s009"].file == "s009/PROBLEMS.IPYNB"
    assert found["x.ipynb"].problem == "a folder named like a notebook"
    assert found["pipe.ipynb"].problem.startswith("a FIFO")
    assert found["sock.ipynb"].problem.startswith("a socket")
    assert (
        found["link.ipynb"].problem == found["dirlink"].problem == "a symbolic link: not followed"
    )
    assert found["s010"].problem == "a folder without problems.ipynb"
    assert found["notes.txt"].problem == "not a notebook (.ipynb) file"
    if os.geteuid() == 0:
        assert found["dev.ipynb"].problem.startswith("a character device")


def test_a_fifo_or_link_is_never_opened(tmp_path):
    """read_notebook refuses a FIFO at once (no reader waiting for a writer) and a link."""
    os.mkfifo(tmp_path / "pipe.ipynb")
    with pytest.raises(ValueError, match="not a regular file"):
        read_notebook(tmp_path / "pipe.ipynb")
    (tmp_path / "real.ipynb").write_text(NOTEBOOK)
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "real.ipynb")
    with pytest.raises(ValueError, match="is a symbolic link, not a regular file"):
        read_notebook(tmp_path / "link.ipynb")


def test_an_nbformat_3_notebook_is_converted(tmp_path):
    """Worksheets and 'input' become version 4's cells and 'source'; the note says so."""
    path = tmp_path / "s006.ipynb"
    path.write_text(json.dumps(V3))
    nb, note = read_notebook(path)
    assert nb["nbformat"] == 4 and "nbformat 3 notebook, converted" in note
    assert [c["source"] for c in nb["cells"] if c["cell_type"] == "code"] == [
        'STUDENT = "s006"\nanswer_q1 = 140'
    ]
    assert static_student(nb) == "s006"
    path.write_text(json.dumps({"nbformat": 3, "worksheets": "broken"}))
    with pytest.raises(ValueError):
        read_notebook(path)


def test_static_student_reads_only_a_plain_string():
    """STUDENT = 's1' is read; an expression or a huge string is not."""
    nb = {"cells": [{"cell_type": "code", "source": 'STUDENT = "s1"'}]}
    assert static_student(nb) == "s1"
    nb["cells"].append({"cell_type": "code", "source": "STUDENT = 's' + '2'"})
    assert static_student(nb) == "s1"
    nb["cells"].append({"cell_type": "code", "source": f"STUDENT = {'x' * 500!r}"})
    assert static_student(nb) is None
