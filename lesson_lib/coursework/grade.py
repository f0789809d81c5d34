"""Batch grading: run every submitted problem-set notebook and score its answers.

Each notebook is executed top to bottom with nbclient (errors in a cell do
not stop it; a per-notebook time limit does), then one extra cell reads the
``answer_q...`` variables out of the kernel. The answers are scored here, in
the grader's process, with :func:`~lesson_lib.coursework.check.check`
against the variant of the student named by the file, so nothing a
submission redefines can change its grade. If a notebook cannot run at all
(not a notebook, kernel died, timed out before the end) the answers typed as
plain values in its answer cells are read from the source instead, and the
notes column says so.

Command line::

    python -m lesson_lib.coursework.grade submissions/ --out grades.csv
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from lesson_lib.coursework.check import CheckResult, check
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.variants import normalize_student

#: Name of the problem-set notebook inside a per-student folder.
PROBLEM_SET = "problems"

_MARK = "__COURSEWORK_ANSWERS__"

# Runs inside the student's kernel after their cells; names start with _cw_ so
# they do not clash with the student's own.
_EXTRACT = f"""
import json as _cw_json, math as _cw_math

def _cw_plain(value, depth=0):
    if value is None or value is Ellipsis:
        return None
    if isinstance(value, (bool, int, float, str)):
        return value
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        return _cw_plain(value.item(), depth)
    if isinstance(value, (list, tuple)) and depth < 2:
        return [_cw_plain(v, depth + 1) for v in value[:20]]
    return {{"unreadable object": type(value).__name__}}

_cw_globals = dict(globals())
print({_MARK!r} + _cw_json.dumps({{
    "answers": {{k: _cw_plain(v) for k, v in _cw_globals.items() if k.startswith("answer_q")}},
    "student": _cw_plain(_cw_globals.get("STUDENT")),
}}))
"""


@dataclass
class Submission:
    """One graded notebook.

    Attributes
    ----------
    student : str
        Student ID (from the file or folder name), or the file name if it is
        not a valid ID.
    path : Path
        The notebook.
    status : str
        ``"ran"``, ``"ran with errors"``, ``"timed out"``, ``"kernel died"``,
        ``"could not run"`` or ``"not a notebook"``.
    answers : dict
        ``answer_q...`` values found, by problem id.
    results : dict
        Problem id -> CheckResult, the verdict per problem.
    notes : list of str
        Anything the instructor should know about this submission.
    """

    student: str
    path: Path
    status: str = "ran"
    answers: dict[str, Any] = field(default_factory=dict)
    results: dict[str, CheckResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        """Sum of the scores."""
        return sum(r.score for r in self.results.values())


def find_submissions(folder: Path) -> list[tuple[str, Path]]:
    """Submitted notebooks in ``folder`` and the name each is graded under.

    Two layouts are understood, and may be mixed: ``folder/<ID>.ipynb`` and
    ``folder/<ID>/problems.ipynb`` (the student edition's layout; other
    notebooks in that folder are ignored).

    Parameters
    ----------
    folder : Path
        The folder of submissions.

    Returns
    -------
    list of (str, Path)
        Name (the ID as written in the file system) and notebook, sorted by name.
    """
    found = [(p.stem, p) for p in folder.glob("*.ipynb") if p.is_file()]
    found += [
        (p.parent.name, p)
        for p in folder.glob(f"*/{PROBLEM_SET}.ipynb")
        if p.is_file() and not p.parent.name.startswith(".")
    ]
    return sorted(found, key=lambda item: (item[0].casefold(), str(item[1])))


def static_answers(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """Answers typed as plain values (``answer_q3 = 1.5``) in a notebook's code cells.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The notebook (not executed).

    Returns
    -------
    dict
        By problem id; the last assignment wins. Anything that is not a
        literal (an expression, a function call) is left out.
    """
    answers: dict[str, Any] = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(cell.get("source", ""))
        except SyntaxError:
            continue
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id.startswith("answer_q"):
                try:
                    answers[target.id[len("answer_") :]] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    answers.pop(target.id[len("answer_") :], None)
    return answers


def _run(nb: nbformat.NotebookNode, cwd: Path, timeout: float) -> tuple[str, dict | None, int]:
    """Execute ``nb`` plus the extraction cell; return (status, payload, cells that raised)."""
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    quiet = logging.getLogger("lesson_lib.coursework.grade.nbclient")
    quiet.setLevel(logging.CRITICAL)
    extract = nbformat.v4.new_code_cell(_EXTRACT)
    nb.cells.append(extract)
    client = NotebookClient(
        nb,
        timeout=int(max(timeout, 1)),
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
        log=quiet,
        shutdown_kernel="immediate",
    )
    status = "ran"
    deadline = time.monotonic() + timeout
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells[:-1]):
                if cell.cell_type != "code":
                    continue
                remaining = deadline - time.monotonic()
                if remaining < 1:
                    status = "timed out"
                    break
                client.timeout = int(remaining)
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    status = "timed out"
                    # Stop the runaway cell (KeyboardInterrupt) so the answers can be read.
                    run_sync(client.km.interrupt_kernel)()
                    break
            client.timeout = 30
            client.execute_cell(extract, len(nb.cells) - 1)
    except DeadKernelError:
        return "kernel died", None, _raised(nb)
    except CellTimeoutError:
        return "timed out", None, _raised(nb)
    payload = None
    for output in extract.get("outputs", []):
        text = output.get("text", "")
        if output.get("output_type") == "stream" and _MARK in text:
            payload = json.loads(text.split(_MARK, 1)[1].strip().splitlines()[0])
    return status, payload, _raised(nb)


def _raised(nb: nbformat.NotebookNode) -> int:
    return sum(
        any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        for cell in nb.cells
        if cell.cell_type == "code"
    )


def grade_notebook(name: str, path: Path, timeout: float = 120.0) -> Submission:
    """Run one submission and score every problem; never raises on a broken notebook.

    Parameters
    ----------
    name : str
        The ID the file system gives it (file stem or folder name).
    path : Path
        The notebook.
    timeout : float, default 120
        Seconds the whole notebook may run (kernel start-up included).

    Returns
    -------
    Submission
        Status, answers, one result per problem, notes.
    """
    sub = Submission(student=name, path=path)
    try:
        sid = normalize_student(name)
    except (TypeError, ValueError):
        sid = None
        sub.notes.append(
            f"file name {name!r} is not a valid student ID: graded as the book's version"
        )
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:
        sub.status = "not a notebook"
        sub.notes.append(f"could not read the notebook ({type(err).__name__})")
        nb = None
    payload = None
    if nb is not None:
        try:
            sub.status, payload, raised = _run(nbformat.from_dict(nb), path.parent, timeout)
            if sub.status == "timed out":
                sub.notes.append(f"stopped at the {timeout:g} s limit")
            if raised:
                if sub.status == "ran":
                    sub.status = "ran with errors"
                sub.notes.append(f"{raised} cell(s) raised an error")
        except Exception as err:  # a kernel that cannot start, a broken cell structure ...
            sub.status = "could not run"
            sub.notes.append(f"execution failed ({type(err).__name__}: {err})"[:200])
    if payload is not None:
        found = payload.get("answers", {})
        sub.answers = {q: found[f"answer_{q}"] for q in PROBLEMS if f"answer_{q}" in found}
        declared = payload.get("student")
        if isinstance(declared, str) and declared.strip() and sid is not None:
            try:
                if normalize_student(declared) != sid:
                    sub.notes.append(
                        f"the notebook says STUDENT = {declared!r}; graded as {sid!r} (its file name)"
                    )
            except (TypeError, ValueError):
                pass
    elif nb is not None:
        sub.answers = static_answers(nb)
        sub.notes.append("answers read from the answer cells' source, not from running it")
    for qid in PROBLEMS:
        sub.results[qid] = check(qid, sub.answers.get(qid), student=sid)
    return sub


def grade_folder(folder: Path, timeout: float = 120.0) -> list[Submission]:
    """Grade every submission in ``folder`` (see :func:`find_submissions`), one at a time.

    Parameters
    ----------
    folder : Path
        The folder of submissions.
    timeout : float, default 120
        Seconds each notebook may run.

    Returns
    -------
    list of Submission
        In the order of :func:`find_submissions`.
    """
    return [grade_notebook(name, path, timeout) for name, path in find_submissions(folder)]


def write_scores(submissions: Sequence[Submission], path: Path) -> None:
    """Write one row per student: ``student, q1 .. q12, total, max, status, notes``.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks.
    path : Path
        CSV file to write (its folder is created).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *PROBLEMS, "total", "max", "status", "notes"])
        for sub in submissions:
            scores = [f"{sub.results[q].score:g}" for q in PROBLEMS]
            writer.writerow(
                [
                    sub.student,
                    *scores,
                    f"{sub.total:g}",
                    len(PROBLEMS),
                    sub.status,
                    "; ".join(sub.notes),
                ]
            )


def write_details(submissions: Sequence[Submission], path: Path) -> None:
    """Write one row per student and problem: the answer, the verdict and its message.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks.
    path : Path
        CSV file to write (its folder is created).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "problem", "answer", "status", "score", "message"])
        for sub in submissions:
            for qid, result in sub.results.items():
                writer.writerow(
                    [
                        sub.student,
                        qid,
                        result.given,
                        result.status,
                        f"{result.score:g}",
                        result.message,
                    ]
                )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the CSV was written (whatever the submissions contained), 2 on a usage error.
    """
    parser = argparse.ArgumentParser(
        prog="python -m lesson_lib.coursework.grade",
        description="Run submitted problem-set notebooks and write a CSV of scores.",
    )
    parser.add_argument("folder", type=Path, help="folder of submissions")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="scores CSV")
    parser.add_argument("--details", type=Path, help="optional CSV: one row per answer")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per notebook (default 120)"
    )
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"error: {args.folder} is not a folder", file=sys.stderr)
        return 2
    found = find_submissions(args.folder)
    if not found:
        print(f"error: no notebooks in {args.folder}", file=sys.stderr)
        return 2
    submissions = []
    for name, path in found:
        sub = grade_notebook(name, path, args.timeout)
        print(f"{sub.student}: {sub.total:g} / {len(PROBLEMS)} ({sub.status})", flush=True)
        submissions.append(sub)
    write_scores(submissions, args.out)
    print(f"wrote {args.out}")
    if args.details:
        write_details(submissions, args.details)
        print(f"wrote {args.details}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
