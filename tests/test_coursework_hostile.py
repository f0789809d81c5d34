"""The hostile-submissions folder (tests/hostile), graded as `make grade` would grade it.

One grading run of the whole folder, from a fresh copy, in a subprocess whose
environment holds a planted secret, while this test listens on a 127.0.0.1
port the hostile notebooks try to reach. Then: every honest score is intact,
every file has a row, nothing leaked, nothing outside the run changed and no
process of the run is left.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from sandbox_support import need_sandbox, sandbox_processes
from set_points import POINTS, SET_POINTS

import lesson_lib
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.sandbox import SandboxUnavailable, require_sandbox
from lesson_lib.coursework.submissions import find_submissions

HOSTILE = Path(__file__).resolve().parent / "hostile"
SECRET = "planted-secret-5b1e9d"
TIMEOUT = 30  # generous: honest notebooks take 1-5 s on a 2-core machine, busy or not


def _tree_digest(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder`` (bytecode caches left out)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _listen() -> socket.socket:
    """A listening socket on 127.0.0.1 in the range the hostile notebook scans."""
    for port in range(40000, 41000):
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.listen()
        return sock
    pytest.skip("no free port in 40000-40999 to listen on")


class HostileRun:
    """One grading run of a fresh copy of the folder, started in the background.

    The run spends most of its minute waiting (the fork bomb's time limit,
    kernels starting), so the session starts it as soon as collection ends
    (``pytest_collection_finish`` in ``tests/conftest.py``) and the checks
    below wait for it; with no such start (one test run alone), the fixture
    starts it.
    """

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="lesson-hostile-"))
        self.folder = self.work / "submissions"
        shutil.copytree(HOSTILE / "submissions", self.folder)
        self.out = self.work / "out" / "grades.csv"
        self.details = self.work / "out" / "details.csv"
        self.before = {
            "submissions": _tree_digest(self.folder),
            "package": _tree_digest(Path(lesson_lib.__file__).parent),
        }
        # the grader's scratch folders go under this run's folder, which names its sandboxes
        (self.work / "tmp").mkdir()
        self.listener = _listen()
        self.listener.settimeout(0.2)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lesson_lib.coursework.grade",
                str(self.folder),
                "--out",
                str(self.out),
                "--details",
                str(self.details),
                "--timeout",
                str(TIMEOUT),
                # two sandboxes at once: one submission must not spoil another beside it
                "--jobs",
                "2",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "LESSON_PLANTED_SECRET": SECRET, "TMPDIR": str(self.work / "tmp")},
        )
        self.finished: float | None = None
        self.grades_right_after = b""
        self.output = ("", "")
        self._waiter = threading.Thread(target=self._wait, daemon=True)
        self._waiter.start()

    def _wait(self) -> None:
        self.output = self.proc.communicate()
        self.finished = time.monotonic()
        self.grades_right_after = self.out.read_bytes() if self.out.exists() else b""

    def result(self) -> dict:
        """Wait for the run, then for a late daemon, and gather what the checks need."""
        self._waiter.join(timeout=30 * 60)
        assert self.finished is not None, "the hostile folder's grading did not end in 30 min"
        # the daemon case wakes 3 s after its run; give it 6 s from the end
        time.sleep(max(0.0, self.finished + 6 - time.monotonic()))
        connections = []
        try:
            while True:
                connections.append(self.listener.accept())
        except (TimeoutError, BlockingIOError):
            pass
        self.listener.close()
        stdout, stderr = self.output
        return {
            "proc": subprocess.CompletedProcess(
                self.proc.args, self.proc.returncode, stdout, stderr
            ),
            "elapsed": self.finished - self.started,
            "folder": self.folder,
            "marker": self.work.name,
            "out": self.out,
            "details": self.details,
            "before": self.before,
            "grades_right_after": self.grades_right_after,
            "connections": connections,
            "expected": json.loads((HOSTILE / "expected.json").read_text()),
        }


_BACKGROUND: list[HostileRun] = []


def start_in_background() -> None:
    """Start the grading run now, if a sandbox can be made here (else the fixture says why)."""
    try:
        require_sandbox()
    except SandboxUnavailable:
        return
    if not _BACKGROUND:
        _BACKGROUND.append(HostileRun())


def stop_background() -> None:
    """End a background run the session did not wait for (tests deselected or interrupted)."""
    for run in _BACKGROUND:
        if run.proc.poll() is None:
            run.proc.kill()
        run.listener.close()
        shutil.rmtree(run.work, ignore_errors=True)
    _BACKGROUND.clear()


@pytest.fixture(scope="module")
def hostile_run():
    """Grade a copy of tests/hostile/submissions once; yields what the checks need."""
    need_sandbox()
    run = _BACKGROUND[0] if _BACKGROUND else HostileRun()
    try:
        yield run.result()
    finally:
        shutil.rmtree(run.work, ignore_errors=True)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_every_submission_gets_a_row_and_honest_ones_keep_their_scores(hostile_run):
    """Exit 0, one row per notebook, and every expected point given (honest: full marks)."""
    proc = hostile_run["proc"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    rows = _rows(hostile_run["out"])
    found = find_submissions(HOSTILE / "submissions")
    assert len(rows) == len(found) == len(hostile_run["expected"])
    by_file = {r["file"].removeprefix("'"): r for r in rows}  # '=1+1.ipynb is neutralised
    assert set(by_file) == set(hostile_run["expected"])
    for rel, scores in hostile_run["expected"].items():
        row = by_file[rel]
        for qid in PROBLEMS:
            assert float(row[qid]) == scores.get(qid, 0.0) * POINTS[qid], (rel, qid, row)
    for rel in ("honest1/problems.ipynb", "honest2.ipynb", "honest3.ipynb"):
        assert by_file[rel]["total"] == str(SET_POINTS) and by_file[rel]["status"] == "ran"


@pytest.mark.slow
def test_nothing_leaks_and_nothing_outside_changes(hostile_run):
    """The planted secret is nowhere, the port saw no one, folders and package unchanged."""
    texts = [
        hostile_run["out"].read_text(),
        hostile_run["details"].read_text(),
        hostile_run["proc"].stdout,
        hostile_run["proc"].stderr,
    ]
    assert not any(SECRET in t for t in texts)
    assert hostile_run["connections"] == []
    assert _tree_digest(hostile_run["folder"]) == hostile_run["before"]["submissions"]
    package = _tree_digest(Path(lesson_lib.__file__).parent)
    assert package == hostile_run["before"]["package"]
    assert not (Path(sys.prefix) / "pwned.txt").exists()


@pytest.mark.slow
def test_no_process_survives_and_the_csv_is_not_rewritten_later(hostile_run):
    """After the run (and the daemon's 3 s), no sandbox process lives and grades.csv is as written."""
    assert sandbox_processes(hostile_run["marker"]) == []
    assert hostile_run["out"].read_bytes() == hostile_run["grades_right_after"]
    assert b"h-daemon,,1,1" not in hostile_run["out"].read_bytes()


@pytest.mark.slow
def test_issue_cases_are_reported_not_hidden(hostile_run):
    """Duplicates flagged on every copy, formula names neutralised, limits noted."""
    rows = {r["file"]: r for r in _rows(hostile_run["out"])}
    for rel in ("dup01.ipynb", "DUP01.ipynb", "dup01/problems.ipynb"):
        assert rows[rel]["student"] == "dup01"
        assert rows[rel]["notes"].startswith("DUPLICATE student ID 'dup01': 3 submissions")
    assert "duplicate student IDs" in hostile_run["proc"].stderr
    assert rows["'=1+1.ipynb"]["student"] == "'=1+1"
    for path in (hostile_run["out"], hostile_run["details"]):
        with path.open(newline="") as fh:
            cells = [cell for row in csv.reader(fh) for cell in row]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@"))]
    assert rows["broken.ipynb"]["status"] == rows["deep.ipynb"]["status"] == "not a notebook"
    assert rows["h-exit.ipynb"]["status"] == "kernel died"
    assert rows["h-forkbomb.ipynb"]["status"] == "timed out"
    assert "interrupted" in rows["h-print200.ipynb"]["notes"]
    assert rows["h-memory.ipynb"]["status"] == "ran with errors"
    assert all("WARNING" not in r["notes"] for r in rows.values())


@pytest.mark.slow
def test_grading_time_per_notebook_is_reported(hostile_run, capsys):
    """Each progress line gives the seconds a notebook took (printed for the record)."""
    lines = [
        ln for ln in hostile_run["proc"].stdout.splitlines() if f" / {SET_POINTS} points (" in ln
    ]
    assert len(lines) == len(hostile_run["expected"])
    with capsys.disabled():
        print(f"\nhostile folder graded in {hostile_run['elapsed']:.0f} s:")
        print("\n".join("  " + ln for ln in lines))
