"""The instructor page's numbers: the set's size, the grader's limit, the example ID."""

from pathlib import Path

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.coursework.student_edition import write_edition

ROOT = Path(__file__).resolve().parents[1]


def test_numbers_by_hand():
    """The bank's folder holds one qNN_<topic>.py per problem (counted here from the files,
    not the registry); the grader's default --timeout is 30 s (grade_folder's signature: ten times
    a clean run of 2.1 s is 21 s, under the 30 s floor);
    the example ID carries the reserved prefix."""
    files = sorted((ROOT / "lesson_lib" / "coursework" / "problems").glob("q[0-9][0-9]_*.py"))
    assert chapter_numbers("instructor") == {
        "problem_count": str(len(files)),
        "time_limit": "30 s",
        "example_id": "example-s001",
    }


def test_the_example_id_cannot_be_issued(tmp_path):
    """The ID the page prints is refused by the edition, so it is no student's."""
    import pytest

    with pytest.raises(ValueError, match="must not start with"):
        write_edition(tmp_path, ROOT, [chapter_numbers("instructor")["example_id"]], ["problems"])


def test_the_tolerance_table_words_each_statement():
    """One row per problem; each row's tolerance is the one its statement asks for, in its words.

    By hand, from the statements: q1 to 1 decimal (bytes), q19 within 3 % (a measured table read
    by eye), q21 to three significant figures, q10 a whole number; q21's mistakes include leaving
    out the DeltaNet state."""
    import re

    from lesson_lib.chapters.instructor import tolerance_table
    from lesson_lib.coursework.problems import PROBLEMS, statement

    rows = re.findall(
        r"<tr><td>(q\d+)</td><td>[^<]*</td><td>([^<]*)</td>(.*?)</tr>", tolerance_table()
    )
    assert [qid for qid, _, _ in rows] == list(PROBLEMS)
    right = {qid: words for qid, words, _ in rows}
    assert (right["q1"], right["q19"], right["q21"], right["q10"]) == (
        "to 1 decimal place",
        "within 3 %",
        "to 3 significant figures",
        "exactly",
    )
    for qid, words, _ in rows:
        if PROBLEMS[qid].kind == "number":
            assert words in statement(qid), qid
    assert "q21.state-forgotten" in dict((q, rest) for q, _, rest in rows)["q21"]
