"""The Canvas import file, written from a hand-made sample of Canvas's gradebook export."""

import csv
from pathlib import Path

import pytest

from lesson_lib.coursework.canvas import assignment_column, fill_gradebook, read_gradebook

DATA = Path(__file__).parent / "data" / "lms"
EXPORT = DATA / "canvas_gradebook_export.csv"


def _read(path: Path) -> list[list[str]]:
    with path.open(newline="") as fh:
        return list(csv.reader(fh))


def test_the_export_column_is_kept_with_its_canvas_id_and_scores_go_by_canvas_user(tmp_path):
    """Three scores by Canvas ID; the others empty; a user not in the export is reported."""
    out = tmp_path / "import.csv"
    summary = fill_gradebook(
        EXPORT, out, {"12345": 16.0, "12347": 12.5, "12350": 3.25, "55555": 1.0}, 16.0
    )
    assert _read(out) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Problem set (987654)"],
        ["    Points Possible", "", "", "", "", "16"],
        ["Smith, Jane", "12345", "A0001", "jsmith", "Section 01", "16"],
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


def test_the_assignment_column_is_found_by_name_or_made_new():
    header = read_gradebook(EXPORT)[0]
    assert assignment_column(header, "Problem set") == "Problem set (987654)"
    assert assignment_column(header, "Lab report (987655)") == "Lab report (987655)"
    assert assignment_column(header, "Problem set 2") == "Problem set 2"  # a new assignment
    with pytest.raises(ValueError, match="matches 2 columns"):
        assignment_column(["Quiz (1)", "Quiz (2)"], "Quiz")


def test_an_export_without_the_identity_columns_is_refused(tmp_path):
    bad = tmp_path / "grades.csv"
    bad.write_text("student,file,total\ns001,s001.ipynb,16\n")
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['Student', 'ID'"):
        fill_gradebook(bad, tmp_path / "out.csv", {}, 16.0)


def test_a_formula_in_a_name_is_written_as_text(tmp_path):
    export = tmp_path / "export.csv"
    export.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n=HYPERLINK(1),7,,,S1\n")
    fill_gradebook(export, tmp_path / "out.csv", {"7": 2.0}, 16.0)
    assert _read(tmp_path / "out.csv")[1] == ["'=HYPERLINK(1)", "7", "", "", "S1", "2"]
