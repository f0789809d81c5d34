"""lesson_lib.coursework.manual_import: the TA's points merged into a grades CSV already written."""

import csv
from pathlib import Path

import pytest

from lesson_lib.coursework.check import CheckResult
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.grades_csv import write_manual_export, write_scores
from lesson_lib.coursework.manual_grading import EXPORT_HEADER, MANUAL_PARTS, ManualImportError
from lesson_lib.coursework.manual_import import main, merge
from lesson_lib.coursework.problems import PROBLEMS


def _sub(student, points, reasoning=None):
    """A graded submission earning ``points`` (problem id -> points) on right answers."""
    sub = Submission(student=student, path=Path(f"{student}.ipynb"), graded_as=student)
    sub.file = f"{student}.ipynb"
    sub.results = {
        q: CheckResult(q, "right", "", 1.0, points=points[q])
        if q in points
        else CheckResult(q, "wrong", "", 0.0)
        for q in PROBLEMS
    }
    sub.reasoning = reasoning or {}
    return sub


def _rows(path):
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_export_then_import_round_trip(tmp_path):
    """s1 answered q1 and q2 right (a point each) and explains; s2 scored nothing and
    wrote nothing. The TA gives s1 0.5 and leaves s2 blank: s1's total is 2 + 0.5 = 2.5
    of the set's 62 + the part's 1 = 63; s2's is 0 of 63 with a blank reasoning cell."""
    subs = [_sub("s1", {"q1": 1.0, "q2": 1.0}, {"q12": "=TP on NVLink"}), _sub("s2", {})]
    grades = tmp_path / "grades.csv"
    write_scores(subs, grades)
    (exported,) = write_manual_export(subs, tmp_path / "manual")
    assert exported.name == "q12-reasoning.csv"
    with exported.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == EXPORT_HEADER
    assert rows[1][:5] == ["s1", "s1.ipynb", "'=TP on NVLink", "", "1"]
    assert rows[2][:4] == ["s2", "s2.ipynb", "", ""] and "NVLink" in rows[2][5]
    rows[1][3] = "0.5"
    with exported.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    assert main([str(tmp_path / "manual"), "--out", str(grades)]) == 0
    s1, s2 = _rows(grades)
    assert (s1["q12 reasoning"], s1["total"], s1["max"]) == ("0.5", "2.5", "63")
    assert (s2["q12 reasoning"], s2["total"], s2["max"]) == ("", "0", "63")


def test_an_import_naming_an_unknown_student_writes_nothing(tmp_path):
    grades = tmp_path / "grades.csv"
    write_scores([_sub("s1", {})], grades)
    before = grades.read_bytes()
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / MANUAL_PARTS["q12"].file_name).write_text(
        ",".join(EXPORT_HEADER) + "\ns1,f,a,1,1,r\ns9,f,b,0,1,r\n"
    )
    with pytest.raises(ManualImportError, match="students the grades do not have: s9"):
        merge(grades, folder)
    assert grades.read_bytes() == before


def test_a_copy_the_keep_policy_did_not_count_gets_no_row_for_the_ta(tmp_path):
    """s3 handed in twice and --keep counted the second: the TA's sheet has one s3 row,
    the counted file's, so filling it in and importing it cannot name s3 twice."""
    first = _sub("s3", {}, {"q12": "first try"})
    first.file, first.counted = "s3_problems.ipynb", False
    second = _sub("s3", {}, {"q12": "second try"})
    second.file = "s3_problems-1.ipynb"
    (exported,) = write_manual_export([first, second], tmp_path / "manual")
    with exported.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[1:]
    assert [r[:3] for r in rows] == [["s3", "s3_problems-1.ipynb", "second try"]]


def test_a_blank_problem_cell_is_refused_naming_the_file_line_and_column(tmp_path, capsys):
    """s2's q3 cell emptied (by hand, in a spreadsheet): exit 2, one line naming grades.csv,
    line 3 (s2) and q3; the grades file as it was."""
    grades = tmp_path / "grades.csv"
    write_scores([_sub("s1", {}), _sub("s2", {})], grades)
    rows = list(csv.reader(grades.read_text(encoding="utf-8").splitlines()))
    rows[2][rows[0].index("q3")] = ""
    with grades.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    before = grades.read_bytes()
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / MANUAL_PARTS["q12"].file_name).write_text(
        ",".join(EXPORT_HEADER) + "\ns1,f,a,1,1,r\ns2,f,b,0,1,r\n"
    )
    assert main([str(folder), "--out", str(grades)]) == 2
    err = capsys.readouterr().err
    assert f"{grades}, line 3 (s2): q3 is '', not a number of points" in err
    assert err.count("\n") == 1 and grades.read_bytes() == before
