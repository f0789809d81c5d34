"""The self-check of a salted notebook: the answer's form with an ID, the full check without."""

import pytest

from lesson_lib.coursework.check import Report, check
from lesson_lib.coursework.own_check import READABLE, FormatReport, check_all
from lesson_lib.coursework.own_check import check as own_check
from lesson_lib.coursework.problems import PROBLEMS, reference


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        (54.0, READABLE),  # any number in the unit asked for: readable, right or not
        (1.0, READABLE),
        ("12 GB", READABLE),
        (None, "not answered yet"),
        ("lots", "unreadable"),
        ([1, 2], "unreadable"),
        ("3 ms", "unreadable"),  # a time where bytes are asked: the grader cannot read it
    ],
)
def test_with_an_id_only_the_form_is_told(answer, status):
    """q1 asks for GB: a number or a byte count is readable, whatever its value."""
    result = own_check("q1", answer, "s001")
    assert result.status == status
    assert result.score == 0.0
    if status == READABLE:
        assert "not in this notebook" in result.message
        assert "check('q1', answer)" in result.message


def test_a_right_and_a_wrong_answer_read_alike():
    """The message cannot be used to search for the answer: right and wrong give the same
    text (the reference is the public variant of s001, for which the check is a format one)."""
    right = own_check("q3", reference("q3", "s001"), "s001")
    wrong = own_check("q3", reference("q3", "s001") * 3, "s001")
    assert (right.status, right.message) == (wrong.status, wrong.message)


def test_without_an_id_it_is_the_books_full_check():
    """No ID: the same verdict as check() on the book's version."""
    for qid in ("q1", "q4", "q5"):
        assert own_check(qid, reference(qid), None) == check(qid, reference(qid))
    assert own_check("q1", reference("q1")).status == "right"


def test_check_all_counts_readable_answers():
    """check_all with an ID: one form verdict per problem and a count; without: the book's Report."""
    report = check_all({"answer_q1": 1.0, "q2": "3 GiB", "answer_q3": "x"}, "s001")
    assert isinstance(report, FormatReport)
    assert list(report.results) == list(PROBLEMS)
    assert report.readable == 2
    assert f"2 of {len(PROBLEMS)} answers can be read" in str(report)
    assert "<table>" in report._repr_html_()
    assert isinstance(check_all({}, None), Report)
