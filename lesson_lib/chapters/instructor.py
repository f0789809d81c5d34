"""The instructor page: the problem set's size and tolerances, the grader's time limit, the example
ID."""

from __future__ import annotations

from lesson_lib.chapters.glue import GlueTable
from lesson_lib.coursework.problems import PROBLEMS, mistakes
from lesson_lib.coursework.problems.bank import Problem, mistake_id
from lesson_lib.coursework.student_edition import DEFAULT_TIME_LIMIT_S, EXAMPLE_PREFIX
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import format_seconds


def _instructor_numbers() -> dict[str, str]:
    """Every value the instructor page glues."""
    return {
        "problem_count": str(len(PROBLEMS)),
        "time_limit": format_seconds(DEFAULT_TIME_LIMIT_S, "s", decimals=0),
        "example_id": f"{EXAMPLE_PREFIX}s001",
    }


#: What ``book/instructor.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(_instructor_numbers)

#: Columns of :func:`tolerance_table`.
TOLERANCE_HEADER = ("problem", "answer in", "right", "close", "named mistakes")
#: The variants whose named mistakes the table lists: the book's and 100 students'.
_SAMPLE = (None, *(f"s{i:03d}" for i in range(100)))


def _close(problem: Problem) -> str:
    if problem.kind == "count":
        return "one off, or a fraction above"
    return f"within {problem.close_rtol * 100:g} %" if problem.kind == "number" else "never"


def tolerance_table(caption: str | None = None) -> str:
    """HTML table of every problem's tolerances, as its statement words them, and named mistakes.

    Parameters
    ----------
    caption : str, optional

    Returns
    -------
    str
        Columns :data:`TOLERANCE_HEADER`; the mistakes are those named in the book's version or in
        any of 100 students' variants (a mistake the right answer's precision takes in is right).
    """
    rows = []
    for qid, problem in PROBLEMS.items():
        named = {mistake_id(qid, m.slug): None for s in _SAMPLE for m in mistakes(qid, s)}
        unit = "a letter" if problem.kind == "choice" else problem.unit
        rows.append((qid, unit, problem.precision(), _close(problem), ", ".join(named) or "none"))
    return html_table(TOLERANCE_HEADER, rows, caption)
