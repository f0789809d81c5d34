"""Copy detection between variants: a salted class of six, flags worked out by hand."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from lesson_lib.coursework.check import check
from lesson_lib.coursework.class_report import main
from lesson_lib.coursework.copies import MARGIN, find_copies
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.grades_csv import write_details, write_scores
from lesson_lib.coursework.problems import PROBLEMS, reference
from lesson_lib.coursework.run_options import record_options, salt_fingerprint
from lesson_lib.coursework.variants import SALT_FILE_ENV, create_salt_file, salted

SALT = "5a" * 32
#: Problems with a number for an answer (the copy check reads only these).
NUMERIC = [q for q, p in PROBLEMS.items() if p.kind != "choice"]


def _own(sid: str, qids: list[str]) -> dict[str, str]:
    """``sid``'s right answers to ``qids``, as the details CSV shows them (their repr)."""
    return {q: repr(reference(q, sid)) for q in qids}


def _class() -> dict[str, dict[str, str]]:
    """Six students: s001 right everywhere; s002 hands in s001's answers; s003 right on half
    and blank on the rest; s004 right on all but three, which are 1.0 (wrong for everyone);
    s005 and s006 hand in the same made-up numbers (1.0, 2.0, ...) to six problems."""
    made_up = {q: repr(float(i)) for i, q in enumerate(NUMERIC[:6], start=1)}
    s004 = _own("s004", list(PROBLEMS))
    s004.update(dict.fromkeys(NUMERIC[:3], "1.0"))
    return {
        "s001": _own("s001", list(PROBLEMS)),
        "s002": _own("s001", list(PROBLEMS)),
        "s003": _own("s003", list(PROBLEMS)[::2]),
        "s004": s004,
        "s005": dict(made_up),
        "s006": dict(made_up),
    }


def test_a_copy_fits_the_other_variant_and_identical_sets_are_paired():
    """s002's numbers are right for s001's variant: every numeric answer of s001 (all of them)
    against at most a few for s002's own (where two variants share a number); s001 itself fits
    its own best and is not flagged; s005 and s006 fit nobody, but are the same."""
    with salted(SALT):
        answers = _class()
        found = find_copies(answers)
        own_right = sum(check(q, answers["s002"][q], "s002").right for q in NUMERIC)
    (flag,) = found.fits_other
    assert (flag.student, flag.other, flag.fits, flag.answered) == (
        "s002",
        "s001",
        len(NUMERIC),
        len(NUMERIC),
    )
    assert flag.own == own_right  # the grader's own verdicts, counted the same way
    assert flag.fits >= flag.own + MARGIN
    assert found.identical == [(("s001", "s002"), len(PROBLEMS)), (("s005", "s006"), 6)]
    rows = found.rows()
    assert ["identical answers", "s005", "s006", "", "", "6"] in rows
    assert rows[0][:3] == ["fits another variant", "s002", "s001"]


def test_a_roster_variant_nobody_handed_in_is_tried_too():
    """s002 copies s009, who is on the roster but handed nothing in: found only with ``issued``."""
    with salted(SALT):
        answers = {"s001": _own("s001", NUMERIC), "s002": _own("s009", NUMERIC)}
        assert find_copies(answers).fits_other == []
        (flag,) = find_copies(answers, issued=["s009", "not an id!"]).fits_other
    assert (flag.student, flag.other) == ("s002", "s009")


def test_too_few_answers_or_units_and_blanks():
    """Three identical answers are too few to pair; an answer with a unit is read as the checker
    reads it (s001's q1 in its own unit, written out), so two spellings of one number match."""
    with salted(SALT):
        q1_unit = PROBLEMS["q1"].unit
        few = {s: {q: "1.0" for q in NUMERIC[:3]} for s in ("s001", "s002")}
        assert find_copies(few).identical == []
        four = {s: {q: "2.5" for q in NUMERIC[:4]} for s in ("s001", "s002")}
        four["s002"]["q1"] = f"'2.50 {q1_unit}'"
        assert find_copies(four).identical == [(("s001", "s002"), 4)]


def test_identical_right_answers_of_variants_that_share_them_are_not_paired():
    """Under this salt s001's and s010's variants have the same answers to q6, q11, q17 and q22:
    both right on those four is no sign of anything; the same four wrong numbers are."""
    shared = ["q6", "q11", "q17", "q22"]
    with salted(SALT):
        assert _own("s001", shared) == _own("s010", shared)
        both_right = {sid: _own(sid, shared) for sid in ("s001", "s010")}
        assert find_copies(both_right).identical == []
        both_wrong = {sid: dict.fromkeys(shared, "7.0") for sid in ("s001", "s010")}
        assert find_copies(both_wrong).identical == [(("s001", "s010"), 4)]


def _graded(folder: Path, monkeypatch: pytest.MonkeyPatch, copy_of: dict[str, str]) -> str:
    """The grader's grades and details CSVs of a class, salted by a salt file; each student
    ``sid`` hands in the right answers of ``copy_of[sid]``, the class's of :func:`_class`."""
    salt = create_salt_file(folder / "salt")
    monkeypatch.setenv(SALT_FILE_ENV, str(folder / "salt"))
    subs = []
    with salted(salt):
        handed = {s: _own(o, list(PROBLEMS)) for s, o in copy_of.items()} or _class()
        for sid, answers in handed.items():
            sub = Submission(sid, folder / f"{sid}.ipynb", file=f"{sid}.ipynb", graded_as=sid)
            sub.results = {q: check(q, answers.get(q), sid) for q in PROBLEMS}
            subs.append(sub)
        write_scores(subs, folder / "grades.csv")
        write_details(subs, folder / "grades-details.csv")
    return salt


def _report(folder: Path) -> Path:
    """``make report`` on the class in ``folder``: the report's folder."""
    details, grades = folder / "grades-details.csv", folder / "grades.csv"
    assert main([str(details), "--grades", str(grades), "--out", str(folder / "report")]) == 0
    return folder / "report"


def test_the_class_report_lists_them_and_writes_copies_csv(tmp_path, monkeypatch):
    """Through ``make report``'s command: the details CSV's answers, read back, flag as above."""
    _graded(tmp_path, monkeypatch, {})
    out = _report(tmp_path)
    text = (out / "class_report.md").read_text()
    section = text[text.index("## Possible copies") :]
    assert "s002's numbers fit s001's variant better than their own" in section
    assert "identical answers to 6 problems: s005, s006." in section
    assert "s003" not in section and "s004" not in section  # the honest students
    with (out / "copies.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["kind"], r["student"], r["other"]) for r in rows] == [
        ("fits another variant", "s002", "s001"),
        ("identical answers", "s001", "s002"),
        ("identical answers", "s005", "s006"),
    ]


def test_the_report_tries_the_roster_the_grades_were_graded_with(tmp_path, monkeypatch):
    """s002 hands in s009's answers; s009 is on the roster the run recorded, handed nothing in."""
    salt = _graded(tmp_path, monkeypatch, {"s001": "s001", "s002": "s009"})
    roster = tmp_path / "roster.csv"
    roster.write_text("lms_user_id,name,section,student_id\n,,,s001\n,,,s002\n,,,s009\n")
    options = {"roster": str(roster), "salt": salt_fingerprint(salt)}
    record_options(tmp_path / "grades.csv", options)
    with (_report(tmp_path) / "copies.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["kind"], r["student"], r["other"]) for r in rows] == [
        ("fits another variant", "s002", "s009")
    ]
