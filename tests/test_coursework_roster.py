"""The roster CSV: read, looked up by issued ID and by platform user, refused when wrong."""

from pathlib import Path

import pytest

from lesson_lib.coursework.grade import main
from lesson_lib.coursework.roster import read_roster

DATA = Path(__file__).parent / "data" / "lms"


def test_the_sample_roster_is_looked_up_both_ways():
    roster = read_roster(DATA / "roster.csv")
    assert len(roster.entries) == 6
    jane = roster.student("s001")
    assert (jane.lms_user_id, jane.name, jane.section) == ("12345", "Smith, Jane", "Section 01")
    assert roster.user("12350").student_id == "s006"
    assert roster.user("nobody", "Dana.Fox@example.edu ").student_id == "s006"
    assert roster.user("99999") is None and roster.student("s999") is None


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("lms_user_id,name,student_id\n1,A,s001\n", r"lacks the column\(s\) \['section'\]"),
        ("lms_user_id,name,section,student_id\n,A,S1,s001\n", "row 2: lms_user_id must not"),
        ("lms_user_id,name,section,student_id\n1,A,S1,\n", "row 2: student_id must not"),
        ("lms_user_id,name,section,student_id\n1,A,S1,s 01\n", "row 2: student_id: student must"),
        (
            "lms_user_id,name,section,student_id\n1,A,S1,s001\n2,B,S1,S001\n",
            "student_id 's001' is given twice",
        ),
        (
            "lms_user_id,name,section,student_id\n1,A,S1,s001\n1,B,S1,s002\n",
            "lms_user_id '1' is given twice",
        ),
    ],
)
def test_a_wrong_roster_is_refused_naming_row_and_column(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_roster(_write(tmp_path, text))


def test_headers_in_any_case_a_bom_and_blank_lines_are_accepted(tmp_path):
    path = _write(tmp_path, "\ufeffLMS_User_ID,Name,Section,Student_ID\n\n7,Ann,S2, A7 \n")
    (entry,) = read_roster(path).entries
    assert (entry.lms_user_id, entry.student_id, entry.email) == ("7", "a7", "")


def test_the_grader_refuses_a_broken_roster_before_grading(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "s001.ipynb").write_text("{}")
    roster = _write(tmp_path, "id,name\n1,A\n")
    out = tmp_path / "grades.csv"
    assert main([str(tmp_path / "in"), "--out", str(out), "--roster", str(roster)]) == 2
    assert "lacks the column(s)" in capsys.readouterr().err
    assert not out.exists()
