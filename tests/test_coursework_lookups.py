"""Answer lookups: a submission's code that asks the package for answers is found and named."""

import nbformat
import pytest

from lesson_lib.coursework.lookups import MAX_SOURCE_CHARS, Lookup, find_lookups, lookup_note


def _nb(*sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("reference('q1') in prose is not code")]
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("answer_q1 = reference('q1', 's001')", "reference("),
        ("answer_q1 = reference ('q1')", "reference("),
        ("print(solution_text('q5', 's001'))", "solution_text("),
        ("solution('q5')", "solution("),
        ("p = get_problem('q3')", "get_problem("),
        ("from lesson_lib.coursework import PROBLEMS", "the problem bank (PROBLEMS)"),
        (
            "import lesson_lib.coursework.problems as bank",
            "the problem bank (lesson_lib.coursework.problems)",
        ),
        (
            "from lesson_lib.coursework import check, problems",
            "the problem bank (from lesson_lib.coursework import problems)",
        ),
    ],
)
def test_each_kind_of_lookup_is_named(source, what):
    """Each pattern is found in the cell that holds it (cells counted from 1, code only)."""
    found = find_lookups(_nb("x = 1", source))
    assert Lookup(2, what) in found


def test_an_honest_notebook_has_none():
    """The edition's own calls (check, check_all, STUDENT) and a comment naming reference()
    are not lookups; neither is a name that only ends in 'reference'."""
    nb = _nb(
        "from lesson_lib.coursework.own_check import check, check_all\nSTUDENT = 's001'",
        "answer_q1 = 64.0  # not reference('q1')\n# reference('q1')",
        "check('q1', answer_q1, STUDENT)",
        "my_reference(3)\ncheck_all(globals(), STUDENT)",
    )
    assert find_lookups(nb) == []


def test_a_hash_inside_a_string_does_not_hide_a_call():
    """Only a comment is taken out: '#' inside a string followed by a call still counts."""
    assert find_lookups(_nb('x = "#"; answer_q1 = reference("q1")')) == [Lookup(1, "reference(")]


def test_odd_notebooks_do_not_raise():
    """No list of cells: no lookups; a cell too long to read is named as unread."""
    assert find_lookups({"cells": "no"}) == []
    assert find_lookups(None) == []
    (found,) = find_lookups(_nb("x" * (MAX_SOURCE_CHARS + 1)))
    assert found.cell == 1 and "unread" in found.what


def test_the_note_names_cells_and_says_what_to_do():
    """One note, at most ten lookups named, the rest counted."""
    assert lookup_note([]) == ""
    note = lookup_note([Lookup(5, "reference("), Lookup(7, "solution_text(")])
    assert note.startswith(
        "ANSWER LOOKUP: reference( in code cell 5; solution_text( in code cell 7"
    )
    assert "check the work yourself" in note
    many = lookup_note([Lookup(i, "reference(") for i in range(1, 13)])
    assert many.count("in code cell") == 10 and "and 2 more" in many
