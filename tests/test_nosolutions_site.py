"""The site without solutions, built as ``make book-nosolutions`` builds it: no instructor
page, no link to one, no answer-giving function on the API page, no solution note.

The site is built once per run by the ``site_without_solutions`` fixture
(``tests/conftest.py``), whose execution cache the student edition's tests read too.
"""

from pathlib import Path

import pytest

from lesson_lib.coursework.student_edition import ANSWER_FUNCTIONS


@pytest.fixture(scope="module")
def nosolutions_html(site_without_solutions) -> Path:
    """The built HTML of the site without solutions; its strict build must have passed."""
    built = site_without_solutions
    assert built["returncode"] == 0, built["output"][-3000:]
    return built["html"]


@pytest.mark.slow
def test_no_instructor_page_and_no_link_to_one(nosolutions_html):
    """The page is not built, and no built page links to it (the strict build would also
    fail on a broken reference; this reads the HTML itself)."""
    assert (nosolutions_html / "book" / "problems.html").exists()
    assert not (nosolutions_html / "book" / "instructor.html").exists()
    pages = sorted(nosolutions_html.rglob("*.html"))
    assert len(pages) > 20
    linking = [p.name for p in pages if "instructor.html" in p.read_text()]
    assert linking == []
    overview = (nosolutions_html / "book" / "overview.html").read_text()
    assert "For instructors</em> (not on this site)" in overview


@pytest.mark.slow
def test_api_page_leaves_out_the_answer_key(nosolutions_html):
    """reference, solution, solution_text and get_problem are not documented; the rest of
    the problem bank's module is."""
    api = (nosolutions_html / "book" / "api" / "coursework.html").read_text()
    for name in ANSWER_FUNCTIONS:
        assert f'id="lesson_lib.coursework.problems.{name}"' not in api, name
    assert 'id="lesson_lib.coursework.problems.statement"' in api


@pytest.mark.slow
def test_problem_page_has_no_solution_note(nosolutions_html):
    """The note that solutions sit in dropdowns leaves with the solutions."""
    assert "collapsed dropdowns" not in (nosolutions_html / "book" / "problems.html").read_text()
