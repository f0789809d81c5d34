"""Grading throughput: a class of clean submissions graded serially and with ``--jobs``.

Makes ``--students`` notebooks with the student edition (``s001`` ...), types
each student's own reference answers into them, then grades the folder with
``python -m lesson_lib.coursework.grade`` as ``make grade`` does, once per
``--jobs`` value, each run from a fresh output folder. It prints each run's
wall-clock time, the time per notebook, whether every run wrote the same
CSV files, and the median time one clean notebook takes to grade (from the
grader's progress lines of the serial run), with the ``--timeout`` that
follows from it (ten clean runs, at least 30 s;
``lesson_lib.coursework.time_limits.DEFAULT_TIMEOUT_S``).

Goal: a class of 150 graded on two CPUs in at most 3 minutes when nothing
hangs (``CLASS_GOAL_S``). Run from the repository's root::

    .venv/bin/python benchmarks/grading.py                 # 150 students, --jobs 1 and 2
    .venv/bin/python benchmarks/grading.py --students 20 --jobs 2
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
#: At most this many seconds for the class of 150 on two CPUs, nothing hanging.
CLASS_GOAL_S = 180.0
#: The class size the goal is stated for.
CLASS_SIZE = 150
_PROGRESS = re.compile(r"^\S+: [\d.]+ / \d+ \((?P<status>[^,]+), (?P<seconds>[\d.]+) s\)$")


def make_class(folder: Path, count: int) -> list[str]:
    """``count`` student notebooks in ``folder``, each with its own right answers typed in."""
    from lesson_lib.coursework.problems import reference
    from lesson_lib.coursework.student_edition import write_edition

    ids = [f"s{i:03d}" for i in range(1, count + 1)]
    for path in write_edition(folder, ROOT, ids, ["problems"]):
        sid = path.parent.name
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.metadata.get("coursework") == "answer":
                qid = cell.source.split("=")[0].strip()[len("answer_") :]
                cell.source = f"answer_{qid} = {reference(qid, sid)!r}"
        nbformat.write(nb, path)
    return ids


def grade(folder: Path, out: Path, jobs: int) -> tuple[float, list[float], str]:
    """Grade ``folder`` into ``out`` with ``--jobs jobs``; (wall seconds, per-notebook seconds, stdout)."""
    started = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "lesson_lib.coursework.grade",
            str(folder),
            "--out",
            str(out / "grades.csv"),
            "--details",
            str(out / "details.csv"),
            "--jobs",
            str(jobs),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    wall = time.monotonic() - started
    seconds = []
    for line in run.stdout.splitlines():
        match = _PROGRESS.match(line)
        if match and match["status"] == "ran":
            seconds.append(float(match["seconds"]))
    return wall, seconds, run.stdout


def main(argv: list[str] | None = None) -> int:
    """Make the class, grade it once per ``--jobs`` value, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=CLASS_SIZE)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    from lesson_lib.coursework.parallel import available_cpus
    from lesson_lib.coursework.time_limits import MIN_TIMEOUT_S

    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        work = Path(tmp)
        made = time.monotonic()
        make_class(work / "class", args.students)
        print(f"{args.students} clean submissions made in {time.monotonic() - made:.1f} s")
        print(f"CPUs available: {available_cpus()}; load average {os.getloadavg()[0]:.2f}")
        print("| --jobs | wall time | per notebook | goal (150 on 2 CPUs) |")
        print("|---|---|---|---|")
        outs = []
        clean: list[float] = []
        for jobs in args.jobs:
            out = work / f"out-{jobs}"
            wall, seconds, _ = grade(work / "class", out, jobs)
            outs.append(out)
            if jobs == 1:
                clean = seconds
            scaled = wall * CLASS_SIZE / args.students
            verdict = ""
            if jobs == 2:
                verdict = f"{scaled:.0f} s for 150: " + (
                    "met" if scaled <= CLASS_GOAL_S else "missed"
                )
            print(f"| {jobs} | {wall:.1f} s | {wall / args.students:.2f} s | {verdict} |")
            if len(seconds) != args.students:
                print(
                    f"  only {len(seconds)} of {args.students} notebooks ran clean (see statuses)"
                )
        same = all(
            filecmp.cmp(outs[0] / name, other / name, shallow=False)
            for other in outs[1:]
            for name in ("grades.csv", "details.csv")
        )
        print(f"every run wrote the same grades.csv and details.csv: {same}")
        if clean:
            median = statistics.median(clean)
            print(
                f"one clean notebook, serial: median {median:.2f} s, max {max(clean):.2f} s; "
                f"suggested --timeout max({MIN_TIMEOUT_S:g}, 10 x median) = "
                f"{max(MIN_TIMEOUT_S, 10 * median):.0f} s"
            )
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
