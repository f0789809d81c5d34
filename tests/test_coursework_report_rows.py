"""Which grades rows the class report counts, on hand-written rows."""

from __future__ import annotations

import pytest

from lesson_lib.coursework.report_rows import (
    TWO_COPIES,
    counted_rows,
    read_grades,
    rows_of_details,
)


def _grades(student, file, status="ran", notes="", factor="1", **more):
    return {"student": student, "file": file, "status": status, "notes": notes,
            "late factor": factor, **more}  # fmt: skip


def test_identity_failures_and_not_counted_copies_are_left_out():
    """6 rows: 1 counted, 1 of each identity failure, 1 not counted copy of s001; s005's notes
    happen to begin NOT COUNTED, but its status says it ran: it counts."""
    rows = [
        _grades("s001", "s001-2.ipynb", factor="0.8", notes="COUNTED (--keep latest): 1 of 2"),
        _grades("s001", "s001-1.ipynb", status="not counted", notes="NOT COUNTED (--keep latest)"),
        _grades("s005", "s005.ipynb", notes="NOT COUNTED is what the file said"),
        _grades("s002", "s002.ipynb", status="ID mismatch"),
        _grades("s003", "s003.ipynb", status="invalid ID"),
        _grades("x", "x.txt", status="not a notebook"),
    ]
    chosen = counted_rows(rows)
    assert list(chosen.counted) == [("s001", "s001-2.ipynb"), ("s005", "s005.ipynb")]
    assert chosen.counted[("s001", "s001-2.ipynb")].late_factor == 0.8
    assert chosen.left_out == {
        "not counted": 1,
        "ID mismatch": 1,
        "invalid ID": 1,
        "not a notebook": 1,
    }


def test_an_id_counted_twice_is_listed_and_not_counted():
    """IDs compared without case, as the late policy groups them: S004 and s004 are one."""
    chosen = counted_rows([_grades("s004", "b.ipynb"), _grades("S004", "a.ipynb")])
    assert chosen.counted == {}
    assert chosen.two_copies == {"s004": ["a.ipynb", "b.ipynb"]}
    assert chosen.left_out == {TWO_COPIES: 2}


def test_a_blank_late_factor_is_on_time_and_a_ta_s_points_are_read():
    row = _grades("s005", "s005.ipynb", factor="", **{"q12 reasoning": "0.5"})
    (got,) = counted_rows([row]).counted.values()
    assert (got.late_factor, got.manual) == (1.0, {"q12": 0.5})


@pytest.mark.parametrize(
    ("column", "bad"),
    [("late factor", "1.5"), ("late factor", "-0.1"), ("late factor", "x"), ("q12 reasoning", "2")],
)
def test_a_cell_out_of_range_is_refused_by_name(column, bad):
    row = _grades("s006", "s006.ipynb", **{column: bad})
    with pytest.raises(ValueError, match=rf"'{column}' of 's006'.*not a number from 0 to 1"):
        counted_rows([row])


def test_a_grades_file_without_the_columns_is_refused(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text("student,file,q1,total\ns001,s001.ipynb,1,1\n")
    with pytest.raises(ValueError, match=r"late factor.*--grades"):
        read_grades(path)


def test_the_details_alone_count_every_notebook_once():
    details = [
        {"student": "s001", "file": "s001.ipynb", "problem": "q1"},
        {"student": "s001", "file": "s001.ipynb", "problem": "q7"},
        {"student": "s002", "file": "a.ipynb", "problem": "q1"},
        {"student": "s002", "file": "b.ipynb", "problem": "q1"},
    ]
    chosen = rows_of_details(details)
    assert list(chosen.counted) == [("s001", "s001.ipynb")]
    assert chosen.two_copies == {"s002": ["a.ipynb", "b.ipynb"]}
