"""lesson_lib.coursework.regrade: a regrade's rows merged into the class's, the rest untouched."""

import pytest

from lesson_lib.coursework.regrade import (
    RegradeRefused,
    WouldShrink,
    _students_in,
    merge_rows,
    read_rows,
    refuse_shrinking,
)

HEADER = ["student", "file", "q1", "total"]


def test_a_regraded_student_replaces_only_their_row_in_place():
    old = [["s1", "a", "1", "1"], ["s2", "b", "0", "0"], ["s3", "c", "1", "1"]]
    assert merge_rows(old, [["s2", "b", "1", "1"]], {"s2"}) == [
        ["s1", "a", "1", "1"],
        ["s2", "b", "1", "1"],
        ["s3", "c", "1", "1"],
    ]


def test_every_old_row_of_a_duplicated_student_goes_and_the_new_ones_take_the_first_place():
    """s2 had two rows (two notebooks); the regrade has two new ones: both where the first was."""
    old = [["s2", "x", "0"], ["s1", "a", "1"], ["S2", "y", "0"]]
    new = [["s2", "x", "1"], ["s2", "y", "1"]]
    assert merge_rows(old, new, {"s2"}) == [["s2", "x", "1"], ["s2", "y", "1"], ["s1", "a", "1"]]


def test_a_student_new_to_the_file_is_added_at_the_end():
    assert merge_rows([["s1", "a"]], [["s9", "z"]], {"s9"}) == [["s1", "a"], ["s9", "z"]]


def test_case_is_ignored_when_matching_students():
    assert merge_rows([["S1", "old"]], [["s1", "new"]], {"s1"}) == [["s1", "new"]]


def test_rows_are_read_back_as_written_and_a_foreign_header_is_refused(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("student,file,q1,total\r\ns1,a,'=1,1\r\n", encoding="utf-8")
    assert read_rows(path, HEADER) == [["s1", "a", "'=1", "1"]]
    assert read_rows(tmp_path / "absent.csv", HEADER) == []
    path.write_text("student,total\r\ns1,16\r\n")
    with pytest.raises(RegradeRefused, match="does not have the columns this grader writes"):
        read_rows(path, HEADER)


def test_students_in_keeps_the_order_of_first_rows():
    assert _students_in([["s2"], ["s1"], ["S2"], []]) == ["s2", "s1"]


def test_a_full_run_of_fewer_students_than_the_file_is_refused(tmp_path):
    """A file of s1, s2, s3 and a run of s2 alone would lose two students: refused, naming them
    and the ways out; a run of all three, or a file of another layout, is not."""
    path = tmp_path / "g.csv"
    path.write_text("student,file,q1,total\r\ns1,a,1,1\r\ns2,b,0,0\r\ns3,c,1,1\r\n")
    with pytest.raises(WouldShrink) as refused:
        refuse_shrinking(path, HEADER, {"s2"})
    why = str(refused.value)
    assert "2 student(s)" in why and "s1, s3" in why
    assert "--student" in why and "--replace" in why
    refuse_shrinking(path, HEADER, {"s1", "S2", "s3"})
    path.write_text("student,total\r\nearlier,16\r\n")
    refuse_shrinking(path, HEADER, {"s2"})
    refuse_shrinking(tmp_path / "absent.csv", HEADER, {"s2"})


def test_a_grades_file_in_latin_1_or_with_a_cell_too_long_is_refused_naming_it(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text(",".join(HEADER) + "\nRené,f,1,1\n", encoding="latin-1")
    with pytest.raises(RegradeRefused, match=r"grades\.csv' is not UTF-8 text"):
        read_rows(path, HEADER)
    path.write_text(",".join(HEADER) + "\ns001," + "x" * 131_073 + ",1,1\n")
    with pytest.raises(RegradeRefused, match=r"grades\.csv', line 2: field larger"):
        read_rows(path, HEADER)
