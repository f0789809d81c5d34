"""lesson_lib.coursework.manual_grading: reasoning exported for a TA, points merged back."""

import os
from pathlib import Path

import nbformat
import pytest

from lesson_lib.coursework.manual_grading import (
    EXPORT_HEADER,
    MANUAL_PARTS,
    ManualImportError,
    _merge_points,
    _read_points,
    read_folder,
    reasoning_answers,
)

ROOT = Path(__file__).resolve().parents[1]


def _nb(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def test_the_reasoning_is_the_last_string_typed_and_nothing_else():
    assert reasoning_answers(_nb('why_q12 = "first"', 'why_q12 = "TP stays on NVLink"')) == {
        "q12": "TP stays on NVLink"
    }
    assert reasoning_answers(_nb('why_q12 = "x"', "why_q12 = open('f').read()")) == {}
    assert reasoning_answers(_nb("why_q12 = (", "why_q12 = 3")) == {}
    assert reasoning_answers({"cells": "not a list"}) == {}


def test_the_problem_page_asks_for_every_manual_part():
    """Each part's variable has a cell of its own in book/problems.md, marked as reasoning."""
    page = (ROOT / "book" / "problems.md").read_text()
    for part in MANUAL_PARTS.values():
        at = page.index(f'{part.variable} = ""')
        assert "coursework: reasoning" in page[at - 80 : at]


def test_points_out_of_range_are_refused_naming_the_row_and_range(tmp_path):
    part = MANUAL_PARTS["q12"]
    path = tmp_path / part.file_name
    path.write_text(",".join(EXPORT_HEADER) + "\ns1,f,why,1.5,1,r\n")
    with pytest.raises(
        ManualImportError, match=r"row 2 \(s1\): points must be a number from 0 to 1"
    ):
        _read_points(path, part)
    path.write_text(",".join(EXPORT_HEADER) + "\ns1,f,why,half,1,r\n")
    with pytest.raises(ManualImportError, match="got 'half'"):
        _read_points(path, part)
    path.write_text(",".join(EXPORT_HEADER) + "\ns1,f,a,1,1,r\nS1,f,b,0,1,r\n")
    with pytest.raises(ManualImportError, match="appears twice"):
        _read_points(path, part)


def test_merge_points_counts_only_given_points():
    """qa is worth 1 point, qb 3: automatic 1 + 0.5 = 1.5; with 1 manual point 2.5 of
    1 + 3 + 1 = 5. s2 has nothing. s3 was late, 0.5 kept: (1 + 3 + 1) x 0.5 = 2.5."""
    header = ["student", "qa", "qb", "total", "max", "late factor", "q12 reasoning"]
    rows = [
        ["s1", "1", "0.5", "1.5", "4", "1", ""],
        ["s2", "0", "0", "0", "4", "1", ""],
        ["s3", "1", "3", "2", "4", "0.5", ""],
    ]
    given = {"q12": {"s1": 1.0, "s2": None, "s3": 1.0}}
    merged = _merge_points(header, rows, given, {"qa": 1.0, "qb": 3.0}, Path("grades.csv"))
    assert merged == [
        ["s1", "1", "0.5", "2.5", "5", "1", "1"],
        ["s2", "0", "0", "0", "5", "1", ""],
        ["s3", "1", "3", "2.5", "5", "0.5", "1"],
    ]


def test_a_ta_file_with_a_cell_too_long_or_in_latin_1_is_named(tmp_path):
    part = next(iter(MANUAL_PARTS.values()))
    path = tmp_path / part.file_name
    path.write_text(",".join(EXPORT_HEADER) + "\ns001,f," + "x" * 131_073 + ",1,2,r\n")
    with pytest.raises(ManualImportError, match=rf"{part.file_name}', line 2: field larger"):
        _read_points(path, part)
    path.write_text(",".join(EXPORT_HEADER) + "\ns001,f,Begründung,1,2,r\n", encoding="latin-1")
    with pytest.raises(ManualImportError, match="is not UTF-8 text"):
        _read_points(path, part)


def test_a_ta_file_that_is_a_fifo_is_refused_not_passed_over(tmp_path):
    """A FIFO under the part's name was skipped ("holds none of the exported files"): it is
    named now, and never opened to wait for a writer."""
    part = next(iter(MANUAL_PARTS.values()))
    os.mkfifo(tmp_path / part.file_name)
    with pytest.raises(ManualImportError, match=r"is a FIFO \(named pipe\), not a regular file"):
        read_folder(tmp_path)
