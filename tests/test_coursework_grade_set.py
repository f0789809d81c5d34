"""The grader's outputs as one set: a run stopped at any moment of writing them leaves the earlier
set or the new one, whole, and ``make report`` refuses a set left mixed.

The real grader's command line runs with grading replaced by ready rows (``_grade``), and the real
signal is sent to this process at the k-th temporary file or the k-th rename, for every k.
"""

import json
import os
import re
import signal
from pathlib import Path

import pytest

from lesson_lib.coursework import files, grade
from lesson_lib.coursework.check import check
from lesson_lib.coursework.class_report import main as report_main
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.problems import PROBLEMS, reference


def _sub(student: str, right: bool) -> Submission:
    """A notebook that ran, every answer right or every one blank."""
    sub = Submission(student, Path(f"{student}.ipynb"), file=f"{student}.ipynb")
    sub.graded_as = student
    sub.results = {q: check(q, reference(q, student) if right else None) for q in PROBLEMS}
    return sub


def _run(tmp_path: Path, monkeypatch, subs: list[Submission], *extra: str) -> int:
    """The grader's main on a folder of these students, grading replaced by ``subs``."""
    folder = tmp_path / "subs"
    folder.mkdir(parents=True, exist_ok=True)
    for sub in subs:
        (folder / sub.file).write_text("{}")
    monkeypatch.setattr(grade, "_grade", lambda args, run: subs)
    monkeypatch.setattr(grade, "_compile_lesson_lib", lambda: True)
    out = tmp_path / "out"
    return grade.main(
        [str(folder), "--out", str(out / "grades.csv"), "--details", str(out / "details.csv"),
         "--manual-export", str(out / "ta"), "--no-sandbox", "--no-roster", "--no-salt",
         "--replace", *extra]
    )  # fmt: skip


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but the manifest (its token is new each run)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".outputs.json")
    }


def _new_only(found: dict[str, bytes]) -> dict[str, bytes]:
    """Without the copies of earlier files kept under a name with the time."""
    return {k: v for k, v in found.items() if not re.search(r"\.\d{8}-\d{6}", k)}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("at", ["mkstemp", "replace"])
def test_a_run_stopped_at_any_write_leaves_one_whole_set(tmp_path, monkeypatch, capsys, at, signum):
    """For every k, the signal at the k-th temporary file or rename: exit 128 + the signal, one
    line, no traceback; the outputs are the earlier set (nothing added) or the new one, whole,
    no temporary file is left, and the report reads each kind of set left."""
    earlier, later = (
        [_sub("s001", False), _sub("s002", False)],
        [_sub("s001", True), _sub("s003", True)],
    )
    assert _run(tmp_path / "new", monkeypatch, later) == 0
    new = _new_only(_files(tmp_path / "new" / "out"))
    assert "feedback/s003.html" in new and "feedback/s002.html" not in new
    real = getattr(files.os if at == "replace" else files.tempfile, at)
    outcomes = set()
    for k in range(1, 200):
        base = tmp_path / f"k{k}"
        assert _run(base, monkeypatch, earlier) == 0
        before = _files(base / "out")
        calls = []

        def hooked(*args, k=k, calls=calls, **kwargs):
            calls.append(1)
            if len(calls) == k:
                os.kill(os.getpid(), signum)
            return real(*args, **kwargs)

        monkeypatch.setattr(files.os if at == "replace" else files.tempfile, at, hooked)
        capsys.readouterr()
        rc = _run(base, monkeypatch, later)
        monkeypatch.setattr(files.os if at == "replace" else files.tempfile, at, real)
        err = capsys.readouterr().err
        after = _files(base / "out")
        assert not [p for p in (base / "out").rglob("*.tmp")]
        if len(calls) < k:  # the run ended before the k-th call: every k was tried
            assert rc == 0
            break
        assert rc == 128 + signum, err
        said = [ln for ln in err.splitlines() if ln and not ln.startswith("WARNING: graded")]
        assert "Traceback" not in err and len(said) == 1 and "interrupted" in said[0]
        if after == before:
            outcome = "earlier"
            assert "earlier outputs are as they were" in err
        else:
            outcome = "new"
            assert _new_only(after) == new and "already in place" in err
        if outcome not in outcomes:  # the same files every time after that, as just asserted
            details = base / "out" / "details.csv"
            assert report_main([str(details), "--out", str(base / "report")]) == 0
        outcomes.add(outcome)
    assert outcomes == ({"new"} if at == "replace" else {"earlier", "new"})


def test_a_set_left_mixed_by_a_kill_is_refused_by_the_report_and_cleaned_by_the_next_run(
    tmp_path, monkeypatch, capsys
):
    """SIGKILL while the files are moved (a rename that never returns, here an exception that
    skips the clean-up): the report refuses the set naming the manifest; the next run removes
    the temporaries left and writes a whole set the report reads."""
    subs = [_sub("s001", True)]
    assert _run(tmp_path, monkeypatch, subs) == 0
    real = files.os.replace
    calls = []

    class Killed(BaseException):
        pass

    def killed(src, dst):
        calls.append(dst)
        if len(calls) == 3:  # the manifest ("moving"), then one output in place
            raise Killed
        return real(src, dst)

    monkeypatch.setattr(files.os, "replace", killed)
    with pytest.raises(Killed):
        _run(tmp_path, monkeypatch, [_sub("s001", False)])
    monkeypatch.undo()
    out = tmp_path / "out"
    assert json.loads((out / "grades.outputs.json").read_text())["state"] == "moving"
    assert list(out.rglob("*.tmp"))
    details = out / "details.csv"
    assert report_main([str(details), "--out", str(tmp_path / "report")]) == 2
    assert "grades.outputs.json" in capsys.readouterr().err
    assert _run(tmp_path, monkeypatch, subs) == 0
    assert not list(out.rglob("*.tmp"))
    assert report_main([str(details), "--out", str(tmp_path / "report")]) == 0


def test_a_full_run_removes_the_feedback_page_of_a_student_it_does_not_have(tmp_path, monkeypatch):
    """s002 handed in to the first run only: the second (--replace) removes s002.html; a
    regrade of s001 removes nothing."""
    assert _run(tmp_path, monkeypatch, [_sub("s001", True), _sub("s002", True)]) == 0
    feedback = tmp_path / "out" / "feedback"
    assert sorted(p.name for p in feedback.iterdir()) == ["s001.html", "s002.html"]
    (tmp_path / "subs" / "s002.ipynb").unlink()
    assert _run(tmp_path, monkeypatch, [_sub("s001", False)]) == 0
    assert sorted(p.name for p in feedback.iterdir()) == ["s001.html"]


def test_a_manual_import_naming_an_unknown_student_writes_nothing(tmp_path, monkeypatch, capsys):
    """The TA's file names s999, whom the run does not have: exit 2, one line saying nothing was
    written, and nothing was (the earlier set as it was)."""
    assert _run(tmp_path, monkeypatch, [_sub("s001", True)]) == 0
    ta = tmp_path / "out" / "ta"
    for part in ta.iterdir():
        lines = part.read_text().splitlines()
        part.write_text("\n".join([*lines, lines[-1].replace("s001", "s999")]) + "\n")
    before = _files(tmp_path / "out")
    capsys.readouterr()
    rc = _run(tmp_path, monkeypatch, [_sub("s001", False)], "--manual-import", str(ta))
    err = capsys.readouterr().err
    assert rc == 2
    assert "s999" in err and "nothing written, the earlier outputs are as they were" in err
    assert _files(tmp_path / "out") == before


def test_a_grades_file_saved_by_a_spreadsheet_is_read_back(tmp_path, monkeypatch, capsys):
    """grades.csv saved as a spreadsheet's "CSV UTF-8" (a byte-order mark, CRLF line ends):
    the report reads it, a TA merge and a regrade of s001 take it as this grader's file."""
    assert _run(tmp_path, monkeypatch, [_sub("s001", True), _sub("s002", True)]) == 0
    grades = tmp_path / "out" / "grades.csv"
    grades.write_bytes(
        b"\xef\xbb\xbf" + grades.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    )
    details = tmp_path / "out" / "details.csv"
    assert report_main([str(details), "--out", str(tmp_path / "report")]) == 0
    ta = tmp_path / "out" / "ta"
    regrade = ["--student", "s001", "--manual-import", str(ta)]
    assert _run(tmp_path, monkeypatch, [_sub("s001", False)], *regrade) == 0
    assert "not a grades file" not in capsys.readouterr().err
    assert report_main([str(details), "--out", str(tmp_path / "report")]) == 0
