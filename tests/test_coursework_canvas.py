"""The Canvas import file, written from a hand-made sample of Canvas's gradebook export."""

import csv
from pathlib import Path

import pytest

from lesson_lib.coursework.canvas import (
    _assignment_column,
    _assignment_columns,
    _read_gradebook,
    check_gradebook,
    fill_gradebook,
)
from lesson_lib.coursework.grade import main
from lesson_lib.coursework.grade_outputs import Outputs, Run, write_for_people
from lesson_lib.coursework.late_policy import LatePolicy

DATA = Path(__file__).parent / "data" / "lms"
EXPORT = DATA / "canvas_gradebook_export.csv"


def _read(path: Path) -> list[list[str]]:
    with path.open(newline="") as fh:
        return list(csv.reader(fh))


def test_the_export_column_is_kept_with_its_canvas_id_and_scores_go_by_canvas_user(tmp_path):
    """Three scores by Canvas ID; the others empty; a user not in the export is reported."""
    out = tmp_path / "import.csv"
    summary = fill_gradebook(
        EXPORT, out, {"12345": 62.0, "12347": 12.5, "12350": 3.25, "55555": 1.0}, 62.0
    )
    assert _read(out) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Problem set (987654)"],
        ["    Points Possible", "", "", "", "", "62"],
        ["Smith, Jane", "12345", "A0001", "jsmith", "Section 01", "62"],
        ["Doe, John", "12346", "A0002", "jdoe", "Section 01", ""],
        ["Lee, Anna", "12347", "A0003", "alee", "Section 02", "12.5"],
        ["Roe, Bob", "12348", "A0004", "broe", "Section 02", ""],
        ["Poe, Carl", "12349", "A0005", "cpoe", "Section 01", ""],
        ["Fox, Dana", "12350", "A0006", "dfox", "Section 02", "3.25"],
        ["Student, Test", "99999", "", "8f3c2a9e1b7d4c6a", "Section 01", ""],
    ]
    assert summary.column == "Problem set (987654)" and summary.filled == 3
    assert summary.empty == ["Doe, John", "Roe, Bob", "Poe, Carl", "Student, Test"]
    assert summary.unmatched == ["55555"]
    assert summary.warnings == []  # the export's 62.00 is the set's 62


def test_the_assignment_column_is_found_by_name_without_case_or_outer_spaces():
    header = _read_gradebook(EXPORT)[0]
    assert _assignment_columns(header) == ["Problem set (987654)", "Lab report (987655)"]
    assert _assignment_column(header, "Problem set") == "Problem set (987654)"
    assert _assignment_column(header, "Problem Set") == "Problem set (987654)"
    assert _assignment_column(header, "  PROBLEM SET ") == "Problem set (987654)"
    assert _assignment_column(header, "lab report (987655)") == "Lab report (987655)"
    with pytest.raises(ValueError, match="matches 2 columns"):
        _assignment_column(["Quiz (1)", "Quiz (2)"], "Quiz")


def test_a_name_no_column_has_is_refused_unless_a_new_assignment_is_asked_for():
    header = _read_gradebook(EXPORT)[0]
    with pytest.raises(ValueError) as refused:
        _assignment_column(header, "Problem set 2")
    message = str(refused.value)
    assert "canvas_assignment 'Problem set 2' is not a column of the gradebook export" in message
    assert "'Problem set (987654)', 'Lab report (987655)'" in message
    assert "--canvas-new-assignment" in message
    assert _assignment_column(header, " Problem set 2 ", new_assignment=True) == "Problem set 2"
    assert check_gradebook(EXPORT, "problem set") == "Problem set (987654)"


def test_the_grader_refuses_an_unknown_assignment_before_grading(tmp_path, capsys):
    """Exit status 2, the export's columns named, nothing written."""
    (tmp_path / "s001.ipynb").write_text("{}")
    out = tmp_path / "grades.csv"
    args = [str(tmp_path), "--out", str(out), "--no-sandbox", "--canvas-gradebook", str(EXPORT)]
    assert main([*args, "--canvas-assignment", "Homework 1"]) == 2
    assert "'Homework 1' is not a column of the gradebook export" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "canvas-import.csv").exists()


def test_points_possible_that_differ_keep_canvass_and_say_both(tmp_path):
    """The export says 50.00, the set is worth 62: the file keeps 50 and the warning names both."""
    export = tmp_path / "export.csv"
    lines = EXPORT.read_text().splitlines()
    lines[1] = lines[1].replace(",62.00,", ",50.00,", 1)
    export.write_text("\n".join(lines) + "\n")
    summary = fill_gradebook(export, tmp_path / "out.csv", {"12345": 62.0}, 62.0)
    assert _read(tmp_path / "out.csv")[1] == ["    Points Possible", "", "", "", "", "50"]
    assert summary.points_possible == 50.0
    (warning,) = summary.warnings
    assert "Points Possible for 'Problem set (987654)' is 50" in warning
    assert "the problem set's points are 62" in warning and "keeps Canvas's 50" in warning
    new = fill_gradebook(export, tmp_path / "new.csv", {}, 62.0, "Problem set 2", True)
    assert new.warnings == [] and _read(tmp_path / "new.csv")[1][-1] == "62"  # nothing to keep


def test_only_canvass_own_points_row_is_the_points_row_and_a_student_so_named_is_left_out(
    tmp_path,
):
    """The points row comes before the students, its ID cells empty; Canvas's importer takes any
    Student cell holding 'Points Possible' for it, so such a student is left out, with a warning."""
    export = tmp_path / "export.csv"
    export.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Problem set (987654)\n"
        "    Points Possible,,,,,62.00\n"
        '"Smith, Jane",12345,A0001,jsmith,Section 01,\n'
        "Points Possible,12351,A0007,pp,Section 01,\n"
        '"Points Possible, Eve",12352,A0008,eve,Section 01,\n'
    )
    out = tmp_path / "import.csv"
    summary = fill_gradebook(export, out, {"12345": 50.0, "12351": 40.0, "12352": 30.0}, 62.0)
    assert _read(out) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Problem set (987654)"],
        ["    Points Possible", "", "", "", "", "62"],
        ["Smith, Jane", "12345", "A0001", "jsmith", "Section 01", "50"],
    ]
    assert (summary.filled, summary.unmatched, len(summary.warnings)) == (1, [], 2)
    assert "'Points Possible, Eve' (ID 12352) is left out of the import file" in summary.warnings[1]


def test_an_export_without_the_identity_columns_is_refused(tmp_path):
    bad = tmp_path / "grades.csv"
    bad.write_text("student,file,total\ns001,s001.ipynb,16\n")
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['Student', 'ID'"):
        fill_gradebook(bad, tmp_path / "out.csv", {}, 16.0)


def test_a_formula_in_a_name_is_written_as_text(tmp_path):
    export = tmp_path / "export.csv"
    export.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n=HYPERLINK(1),7,,,S1\n")
    fill_gradebook(export, tmp_path / "out.csv", {"7": 2.0}, 16.0, new_assignment=True)
    assert _read(tmp_path / "out.csv")[1] == ["'=HYPERLINK(1)", "7", "", "", "S1", "2"]


def test_the_grader_prints_the_points_warning(tmp_path, capsys):
    """The grader's Canvas step passes the summary's warnings to stderr (no submissions: the
    set's own points, 62, against the export's 50)."""
    export = tmp_path / "export.csv"
    lines = EXPORT.read_text().splitlines()
    lines[1] = lines[1].replace(",62.00,", ",50.00,", 1)
    export.write_text("\n".join(lines) + "\n")
    outputs = Outputs(
        folder=tmp_path,
        out=tmp_path / "grades.csv",  # none written: no rows
        canvas_gradebook=export,
        canvas_out=tmp_path / "canvas-import.csv",
        canvas_assignment="problem set",
    )
    write_for_people(outputs, Run(None, LatePolicy(), {}, [], None), [])
    err = capsys.readouterr().err
    assert "warning: the export's Points Possible for 'Problem set (987654)' is 50" in err
    assert "the problem set's points are 62" in err


def test_an_export_cell_too_long_or_a_link_to_dev_zero_is_refused_utf_16_read(tmp_path, capsys):
    """One line naming the file, exit status 2: never a csv traceback or a read without end. A
    UTF-16 export with its byte-order mark (a spreadsheet's 'Unicode text') is read; one cut
    short is refused naming UTF-16."""
    export = tmp_path / "export.csv"
    export.write_text(EXPORT.read_text() + "x" * 131_073 + "\n")
    args = [str(tmp_path), "--out", str(tmp_path / "g.csv"), "--canvas-gradebook", str(export)]
    assert main([*args, "--canvas-assignment", "problem set"]) == 2
    assert f"canvas_gradebook '{export}', line" in capsys.readouterr().err
    export.write_text(EXPORT.read_text(), encoding="utf-16")
    assert check_gradebook(export, "problem set") == check_gradebook(EXPORT, "problem set")
    export.write_bytes(export.read_bytes()[:-1])
    with pytest.raises(ValueError, match=r"export\.csv' is not UTF-16 text \(byte "):
        check_gradebook(export, "problem set")
    export.unlink()
    export.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"export\.csv' is a character device"):
        check_gradebook(export, "problem set")


@pytest.mark.parametrize(
    ("canvas_out", "named"),
    [("export", "--canvas-gradebook"), ("grades", "--out"), ("roster", "--roster")],
)
def test_canvas_out_never_replaces_an_input_or_another_output(tmp_path, capsys, canvas_out, named):
    """--canvas-out naming the export, the grades file or the roster is refused before grading,
    exit status 2, every file as it was (no submission is run: the folder holds none)."""
    export, grades, roster = tmp_path / "export.csv", tmp_path / "g.csv", tmp_path / "roster.csv"
    export.write_text(EXPORT.read_text())
    grades.write_text("kept\n")
    roster.write_text('lms_user_id,name,section,student_id\n12345,"Smith, Jane",A,s001\n')
    before = {p: p.read_bytes() for p in (export, grades, roster)}
    target = {"export": export, "grades": grades, "roster": roster}[canvas_out]
    args = [str(tmp_path), "--out", str(grades), "--roster", str(roster), "--no-sandbox"]
    args += ["--canvas-gradebook", str(export), "--canvas-assignment", "problem set"]
    assert main([*args, "--canvas-out", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--canvas-out and {named} name the same file ({target})" in err
    assert {p: p.read_bytes() for p in before} == before
