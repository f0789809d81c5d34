"""The instructor page: the problem set's size, the grader's time limit and the example ID."""

from __future__ import annotations

from lesson_lib.chapters.glue import glue_numbers
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.student_edition import DEFAULT_TIME_LIMIT_S, EXAMPLE_PREFIX
from lesson_lib.model.units import format_seconds


def numbers() -> dict[str, str]:
    """Every value the instructor page glues.

    Returns
    -------
    dict of str to str
        ``problem_count`` (problems in the set), ``time_limit`` (the grader's
        default ``--timeout``, as the students' instructions say it) and
        ``example_id`` (the ID the page's examples use, which the edition
        never issues).
    """
    return {
        "problem_count": str(len(PROBLEMS)),
        "time_limit": format_seconds(DEFAULT_TIME_LIMIT_S, "s", decimals=0),
        "example_id": f"{EXAMPLE_PREFIX}s001",
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/instructor.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
