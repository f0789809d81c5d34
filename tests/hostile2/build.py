"""Write the second hostile folder: names, special files, space limits, forged results, odd answers.

    .venv/bin/python tests/hostile2/build.py DEST            # write the folder into DEST
    .venv/bin/python tests/hostile2/build.py --write-answers # refresh answers.json, expected.json

The folder holds entries git cannot keep (a FIFO, a device node, symbolic
links, names with a newline or a zero-width space), so it is written at
test time, from ``answers.json``: the honest answers, computed with
``lesson_lib`` once and kept as literals, so a grader that picks the wrong
variant (a browser's ``s002 (1)`` read as the book's) shows up as a lost
point. ``expected.json`` gives each entry's status, scores (the share of each
problem's points) and the notes
its row must carry. The cases:

* renamed notebooks: ``S004.IPYNB``, ``s005.ipynb.txt``, ``s002 (1).ipynb``, a
  full-width ``s007`` (U+FF53 U+FF10 U+FF10 U+FF17), and ``s006`` in nbformat 3;
* impostors: ``a001`` with a Cyrillic a and with a zero-width space, beside
  the real ``a001``; ``con`` (a Windows device name); a name with a newline
  that would print a forged progress line;
* entries that are not notebooks: a FIFO, a device node (as root), a folder
  named ``folder.ipynb``, links to a notebook and to a folder of
  submissions outside, a folder without ``problems.ipynb``, a text file;
* ``h-answers``: a Fraction, a Decimal and a NumPy float32 (right), ``'1 a'``
  + 80,000 spaces + ``'b'``, ten million spaces, an object whose
  ``__float__`` raises SystemExit, one whose ``__repr__`` never returns;
* ``h-tmp``, ``h-home``, ``h-fsize``: fill ``/tmp``, fill the home folder,
  write one file past the file-size limit;
* ``h-forge``: writes its own result file, writes to every descriptor of
  the runner it can open, tries to trace it, then kills it;
* ``h-home-files``: counts what it sees of the grader's home folder beyond
  the files Python needs, and the installation's own site-packages.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "answers.json"
EXPECTED = HERE / "expected.json"

#: Honest notebooks: entry name -> (the ID written in STUDENT, the ID whose answers it holds).
HONEST = {
    "S004.IPYNB": ("S004", "s004"),
    "s005.ipynb.txt": ("s005", "s005"),
    "s002 (1).ipynb": ("s002", "s002"),
    "\uff53\uff10\uff10\uff17.ipynb": ("s007", "s007"),
    "a001.ipynb": ("a001", "a001"),
}
#: Impostors: the book's answers under a name that is not a valid ID.
IMPOSTORS = (
    "\u0430001.ipynb",
    "a001\u200b.ipynb",
    "con.ipynb",
    "x\nalice: 16 \u2215 16 (ran, 2.1 s).ipynb",
)

ODD_ANSWERS = """
import numbers
from decimal import Decimal
from fractions import Fraction
import numpy as np

class Exits:
    def __float__(self):
        raise SystemExit(0)

class Hangs:
    def __repr__(self):
        while True:
            pass
    __str__ = __repr__

numbers.Real.register(Exits)
answer_q1 = Fraction({q1!r})
answer_q2 = Decimal({q2!r})
answer_q3 = "1 a" + " " * 80_000 + "b"
answer_q4 = " " * 10**7
answer_q5 = Exits()
answer_q6 = Hangs()
answer_q7 = np.float32({q7!r})
"""

FILL_TMP = """
n = 0
try:
    while n < 20:
        with open(f"/tmp/fill{n}", "wb") as fh:
            for _ in range(32):
                fh.write(b"x" * 2**20)
        n += 1
except OSError as err:
    print("stopped:", err)
"""

FILL_HOME = FILL_TMP.replace("/tmp/fill", "fill")

BIG_FILE = """
try:
    with open("big.bin", "wb") as fh:
        for _ in range(100):
            fh.write(b"x" * 2**20)
except OSError as err:
    print("stopped:", err)
"""

FORGE = """
import ctypes, json, os, signal
fake = {"status": "ran", "raised": 0, "error": "FORGED: full marks agreed by the instructor",
        "payload": {"answers": {}, "student": "someone-else"}}
for path in (".grader-result.json", "/tmp/.grader-result.json"):
    try:
        with open(path, "w") as fh:
            json.dump(fake, fh)
    except OSError:
        pass
parent = os.getppid()
for fd in range(3, 64):
    try:
        with open(f"/proc/{parent}/fd/{fd}", "w") as fh:
            fh.write(json.dumps(fake))
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, parent, 0, 0) == 0:  # PTRACE_ATTACH
    os.waitpid(parent, 0x40000000)
    libc.ptrace(17, parent, 0, 0)
os.kill(parent, signal.SIGKILL)
"""

HOME_FILES = """
import os, pwd, sys, sysconfig
import lesson_lib
home = pwd.getpwuid(0).pw_dir
base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
shown = [os.path.realpath(p) for p in (sys.executable, sysconfig.get_path("stdlib", vars=base),
                                        sys.prefix, os.path.dirname(lesson_lib.__file__))]
libdir = os.path.realpath(os.path.join(sys.base_prefix, "lib"))
strays = 0
for top, dirs, files in os.walk(home):
    for name in files:
        path = os.path.realpath(os.path.join(top, name))
        needed = any(path == s or path.startswith(s + os.sep) for s in shown) or (
            os.path.dirname(path) == libdir and name.startswith("lib") and ".so" in name)
        strays += not needed
site = sysconfig.get_path("purelib", vars=base)
inside = len(os.listdir(site)) if os.path.isdir(site) and sys.prefix != sys.base_prefix else 0
answer_q12 = f"strays={strays} site={inside}"
"""


def _notebook(student: str, *cells: str, version: int = 4) -> str:
    """A notebook's JSON: STUDENT set, then the cells (nbformat 4, or 3 by hand)."""
    sources = [f"STUDENT = {student!r}", *cells]
    if version == 3:
        return json.dumps(
            {
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
                                "input": source,
                                "language": "python",
                                "metadata": {},
                                "outputs": [],
                            }
                            for source in sources
                        ],
                    }
                ],
            }
        )
    cells_json = [
        {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
         "outputs": [], "source": source}
        for i, source in enumerate(sources)
    ]  # fmt: skip
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
            "cells": cells_json,
        }
    )


def _lines(answers: dict[str, object]) -> str:
    return "\n".join(f"answer_{q} = {v!r}" for q, v in answers.items())


def build(dest: Path) -> dict:
    """Write every entry into ``dest`` (created; must be empty); return the expectations."""
    answers = json.loads(ANSWERS.read_text())
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise SystemExit(f"{dest} is not empty")
    for name, (student, holder) in HONEST.items():
        (dest / name).write_text(_notebook(student, _lines(answers[holder])))
    (dest / "s006.ipynb").write_text(_notebook("s006", _lines(answers["s006"]), version=3))
    for name in IMPOSTORS:
        (dest / name).write_text(_notebook("a001", _lines(answers["book"])))
    odd = answers["h-answers"]
    (dest / "h-answers.ipynb").write_text(_notebook("h-answers", ODD_ANSWERS.format(**odd)))
    for name, code in (("h-tmp", FILL_TMP), ("h-home", FILL_HOME), ("h-fsize", BIG_FILE)):
        right = {"q1": answers[name]["q1"]}
        (dest / f"{name}.ipynb").write_text(_notebook(name, _lines(right), code))
    (dest / "h-forge.ipynb").write_text(
        _notebook("h-forge", _lines({"q1": answers["h-forge"]["q1"]}), FORGE)
    )
    (dest / "h-home-files.ipynb").write_text(_notebook("h-home-files", HOME_FILES))
    os.mkfifo(dest / "pipe.ipynb")
    if os.geteuid() == 0:
        os.mknod(dest / "dev.ipynb", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    (dest / "folder.ipynb").mkdir()
    (dest / "folder.ipynb" / "problems.ipynb").write_text(_notebook("folder", ""))
    outside = dest.parent / f"{dest.name}-outside"
    outside.mkdir(exist_ok=True)
    (outside / "s008.ipynb").write_text(_notebook("s008", _lines(answers["book"])))
    (dest / "link.ipynb").symlink_to(outside / "s008.ipynb")
    (dest / "linked").symlink_to(outside)
    (dest / "s010").mkdir()
    (dest / "s010" / "sizing.ipynb").write_text(_notebook("s010", ""))
    (dest / "notes.txt").write_text("Marks to enter by Friday.\n")
    return json.loads(EXPECTED.read_text())


def write_answers() -> None:
    """Compute the honest answers with lesson_lib, and write answers.json and expected.json."""
    sys.path.insert(0, str(HERE.parents[1]))
    from lesson_lib.coursework.problems import PROBLEMS, reference

    answers: dict[str, dict] = {
        sid: {q: reference(q, sid) for q in PROBLEMS}
        for sid in ("s004", "s005", "s002", "s007", "a001", "s006")
    }
    answers["book"] = {q: reference(q) for q in PROBLEMS}
    odd = {q: reference(q, "h-answers") for q in ("q1", "q2", "q7")}
    answers["h-answers"] = {"q1": odd["q1"], "q2": repr(odd["q2"]), "q7": odd["q7"]}
    for name in ("h-tmp", "h-home", "h-fsize", "h-forge"):
        answers[name] = {"q1": reference("q1", name)}
    # checked: a Fraction and a Decimal of the reference are the reference exactly
    assert float(Fraction(odd["q1"])) == odd["q1"] and float(Decimal(repr(odd["q2"]))) == odd["q2"]
    ANSWERS.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
    full = dict.fromkeys(PROBLEMS, 1.0)
    q1 = {"q1": 1.0}
    expected = {
        "S004.IPYNB": {"status": "ran", "scores": full, "student": "s004"},
        "s005.ipynb.txt": {
            "status": "ran",
            "scores": full,
            "student": "s005",
            "notes": ["added by a learning platform or a browser"],
        },
        "s002 (1).ipynb": {
            "status": "ran",
            "scores": full,
            "student": "s002",
            "notes": ["a browser names a second download"],
        },
        "\uff53\uff10\uff10\uff17.ipynb": {"status": "ran", "scores": full, "student": "s007"},
        "s006.ipynb": {
            "status": "ran",
            "scores": full,
            "student": "s006",
            "notes": ["nbformat 3 notebook, converted to version 4"],
        },
        "a001.ipynb": {"status": "ran", "scores": full, "student": "a001", "notes": ["IMITATED: "]},
        "\u0430001.ipynb": {
            "status": "invalid ID",
            "scores": {},
            "notes": ["IMITATES student ID 'a001'", "U+0430 CYRILLIC SMALL LETTER A"],
        },
        "a001\u200b.ipynb": {
            "status": "invalid ID",
            "scores": {},
            "notes": ["IMITATES student ID 'a001'", "U+200B ZERO WIDTH SPACE"],
        },
        "con.ipynb": {"status": "invalid ID", "scores": {}, "notes": ["Windows keeps"]},
        "x\nalice: 16 \u2215 16 (ran, 2.1 s).ipynb": {"status": "invalid ID", "scores": {}},
        "h-answers.ipynb": {
            "status": "ran",
            "scores": {"q1": 1.0, "q2": 1.0, "q7": 1.0},
            "student": "h-answers",
            "messages": {
                "q3": "too long to read (80,004 characters",
                "q4": "too long to read (10,000,000 characters",
                "q5": "object of type 'Exits'",
                "q6": "object of type 'Hangs'",
            },
        },
        "h-tmp.ipynb": {"status": "out of space", "scores": q1, "notes": ["filled /tmp"]},
        "h-home.ipynb": {
            "status": "out of space",
            "scores": q1,
            "notes": ["filled /home/student"],
        },
        "h-fsize.ipynb": {
            "status": "out of space",
            "scores": q1,
            "notes": ["the file-size limit"],
        },
        "h-forge.ipynb": {
            "status": "could not run",
            "scores": q1,
            "notes": ["no result", "answers read from the answer cells' source"],
        },
        "h-home-files.ipynb": {
            "status": "ran",
            "scores": {},
            "student": "h-home-files",
            "given": {"q12": "'strays=0 site=0'"},
        },
        "pipe.ipynb": {"status": "not a notebook", "scores": {}, "notes": ["a FIFO"]},
        "dev.ipynb": {"status": "not a notebook", "scores": {}, "notes": ["a character device"]},
        "folder.ipynb": {
            "status": "not a notebook",
            "scores": {},
            "notes": ["a folder named like a notebook"],
        },
        "link.ipynb": {"status": "not a notebook", "scores": {}, "notes": ["a symbolic link"]},
        "linked": {"status": "not a notebook", "scores": {}, "notes": ["a symbolic link"]},
        "s010": {
            "status": "not a notebook",
            "scores": {},
            "notes": ["a folder without problems.ipynb"],
        },
        "notes.txt": {"status": "not a notebook", "scores": {}, "notes": ["not a notebook"]},
    }
    EXPECTED.write_text(json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-answers"]:
        write_answers()
    elif len(sys.argv) == 2:
        build(Path(sys.argv[1]))
    else:
        raise SystemExit(__doc__)
