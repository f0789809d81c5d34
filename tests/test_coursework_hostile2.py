"""The second hostile folder (tests/hostile2), graded as `make grade` would grade it.

The folder is written at test time (it holds a FIFO, a device node, links and
names git cannot keep) from the literal answers in ``tests/hostile2``, and
graded once, in a subprocess, into an output folder that already holds an
earlier ``grades.csv``. Then: every name has exactly one row with the status,
scores and notes ``expected.json`` gives; what the instructor reads (progress
lines, both CSV files) is one line per row with every control character
escaped; the earlier grades are kept; the special files and the folder the
links point to are as they were; no temporary folder and no process of the
run is left.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from sandbox_support import need_sandbox, sandbox_processes
from set_points import POINTS, SET_POINTS

from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.sandbox import SandboxUnavailable, require_sandbox

HERE = Path(__file__).resolve().parent / "hostile2"
TIMEOUT = 60  # generous: every notebook here ends within seconds
EARLIER = "student,total\nearlier-run,16\n"


def _load_build():
    import importlib.util

    spec = importlib.util.spec_from_file_location("hostile2_build", HERE / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SecondHostileRun:
    """One grading run of a freshly written folder, started in the background."""

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="lesson-hostile2-"))
        self.folder = self.work / "submissions"
        self.expected = _load_build().build(self.folder)
        if os.geteuid() != 0:
            self.expected.pop("dev.ipynb")
        self.outside = self.work / "submissions-outside"
        self.outside_digest = hashlib.sha256((self.outside / "s008.ipynb").read_bytes()).hexdigest()
        self.outdir = self.work / "out"
        self.outdir.mkdir()
        (self.outdir / "grades.csv").write_text(EARLIER)
        (self.work / "tmp").mkdir()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lesson_lib.coursework.grade",
                str(self.folder),
                "--out",
                str(self.outdir / "grades.csv"),
                "--details",
                str(self.outdir / "details.csv"),
                "--timeout",
                str(TIMEOUT),
                # two sandboxes at once: one submission must not spoil another beside it
                "--jobs",
                "2",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "TMPDIR": str(self.work / "tmp")},
        )
        self.finished: float | None = None
        self.output = ("", "")
        self._waiter = threading.Thread(target=self._wait, daemon=True)
        self._waiter.start()

    def _wait(self) -> None:
        self.output = self.proc.communicate()
        self.finished = time.monotonic()

    def result(self) -> dict:
        """Wait for the run; gather what the checks need."""
        self._waiter.join(timeout=30 * 60)
        assert self.finished is not None, "the second hostile folder's grading did not end"
        stdout, stderr = self.output
        return {
            "proc": subprocess.CompletedProcess(
                self.proc.args, self.proc.returncode, stdout, stderr
            ),
            "elapsed": self.finished - self.started,
            "run": self,
        }


_BACKGROUND: list[SecondHostileRun] = []


def start_in_background() -> None:
    """Start the grading run now, if a sandbox can be made here (else the fixture says why)."""
    try:
        require_sandbox()
    except SandboxUnavailable:
        return
    if not _BACKGROUND:
        _BACKGROUND.append(SecondHostileRun())


def stop_background() -> None:
    """End a background run the session did not wait for."""
    for run in _BACKGROUND:
        if run.proc.poll() is None:
            run.proc.kill()
        shutil.rmtree(run.work, ignore_errors=True)
    _BACKGROUND.clear()


@pytest.fixture(scope="module")
def graded():
    """Write and grade the second hostile folder once; yields what the checks need."""
    need_sandbox()
    run = _BACKGROUND[0] if _BACKGROUND else SecondHostileRun()
    try:
        yield run.result()
    finally:
        shutil.rmtree(run.work, ignore_errors=True)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _shown(name: str) -> str:
    """A file name as the CSV writes it: escaped, and ASCII if it is not a valid ID."""
    from lesson_lib.coursework.grades_csv import spreadsheet_safe

    return spreadsheet_safe(name)


@pytest.mark.slow
def test_every_name_gets_one_row_with_its_status_scores_and_notes(graded):
    """One row per name in the folder (a FIFO, a device, links and folders included), each
    with the status, the scores, the student and the notes expected.json lists."""
    proc, run = graded["proc"], graded["run"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    rows = _rows(run.outdir / "grades.csv")
    by_file = {r["file"]: r for r in rows}
    assert len(rows) == len(by_file) == len(run.expected)
    for name, want in run.expected.items():
        row = by_file.get(_shown(name))
        assert row is not None, (name, sorted(by_file))
        assert row["status"] == want["status"], (name, row)
        for qid in PROBLEMS:
            assert float(row[qid]) == want["scores"].get(qid, 0.0) * POINTS[qid], (name, qid, row)
        if "student" in want:
            assert row["student"] == want["student"], (name, row)
        for note in want.get("notes", []):
            assert note in row["notes"], (name, note, row["notes"])
    assert all("WARNING" not in r["notes"] and "FORGED" not in r["notes"] for r in rows)


@pytest.mark.slow
def test_odd_answers_get_their_verdicts_and_short_messages(graded):
    """The Fraction, Decimal and float32 are right; the long texts 'too long'; the objects
    named by type; nothing in the details CSV is longer than its cap; the home-folder probe
    saw nothing of the grader's home beyond Python's files."""
    from lesson_lib.coursework.check import MAX_MESSAGE_CHARS

    run = graded["run"]
    details = _rows(run.outdir / "details.csv")
    by_key = {(r["file"], r["problem"]): r for r in details}
    for name, want in run.expected.items():
        for qid, text in want.get("messages", {}).items():
            assert text in by_key[(_shown(name), qid)]["message"], (name, qid)
        for qid, text in want.get("given", {}).items():
            assert by_key[(_shown(name), qid)]["answer"] == text, (name, qid)
    assert max(len(r["message"]) for r in details) <= MAX_MESSAGE_CHARS
    assert max(len(r["answer"]) for r in details) <= 83


@pytest.mark.slow
def test_what_the_instructor_reads_is_one_escaped_line_per_row(graded):
    """A progress line per row, none forged by the name with a newline; no raw control,
    invisible or bidirectional character in the terminal output or either CSV."""
    proc, run = graded["proc"], graded["run"]
    lines = [ln for ln in proc.stdout.splitlines() if f" / {SET_POINTS} points (" in ln]
    assert len(lines) == len(run.expected)
    assert not any(ln.startswith("alice") for ln in lines)
    texts = [
        proc.stdout,
        proc.stderr,
        (run.outdir / "grades.csv").read_text(encoding="utf-8"),
        (run.outdir / "details.csv").read_text(encoding="utf-8"),
    ]
    for text in texts:
        for ch in ("\x1b", "\u200b", "\u202e", "\r"):
            assert ch not in text
    for path in ("grades.csv", "details.csv"):
        with (run.outdir / path).open(newline="", encoding="utf-8") as fh:
            assert not [c for row in csv.reader(fh) for c in row if "\n" in c]


@pytest.mark.slow
def test_earlier_grades_are_kept_and_nothing_outside_changes(graded):
    """The earlier grades.csv is kept under a name with the time; the FIFO and the device are
    still what they were; the notebook the links point to is untouched; nothing is left in
    the run's temporary folder and no process of it lives."""
    run = graded["run"]
    kept = sorted(run.outdir.glob("grades.2*.csv"))
    assert len(kept) == 1 and kept[0].read_text() == EARLIER
    assert stat.S_ISFIFO((run.folder / "pipe.ipynb").lstat().st_mode)
    if os.geteuid() == 0:
        assert stat.S_ISCHR((run.folder / "dev.ipynb").lstat().st_mode)
    assert (run.folder / "link.ipynb").is_symlink() and (run.folder / "linked").is_symlink()
    digest = hashlib.sha256((run.outside / "s008.ipynb").read_bytes()).hexdigest()
    assert digest == run.outside_digest
    assert list((run.work / "tmp").iterdir()) == []
    assert sandbox_processes(run.work.name) == []


@pytest.mark.slow
def test_grading_time_is_reported(graded, capsys):
    """Each progress line gives the seconds a notebook took (printed for the record)."""
    lines = [ln for ln in graded["proc"].stdout.splitlines() if f" / {SET_POINTS} points (" in ln]
    with capsys.disabled():
        print(f"\nsecond hostile folder graded in {graded['elapsed']:.0f} s:")
        print("\n".join("  " + ln for ln in lines))
    assert json.loads((HERE / "expected.json").read_text())
