"""The instructor page: the problem set's size, the grader's time limit and the example ID."""

from __future__ import annotations

from lesson_lib.chapters.glue import GlueTable
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.student_edition import DEFAULT_TIME_LIMIT_S, EXAMPLE_PREFIX
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
