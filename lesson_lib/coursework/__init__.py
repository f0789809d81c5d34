"""Coursework: the problem set, a self-checker, per-student variants and grading.

Students call :func:`show` to read a problem with their own numbers and :func:`check` to test an
answer. Instructors use ``python -m lesson_lib.coursework.student_edition`` to hand out notebooks
without solutions and ``python -m lesson_lib.coursework.grade`` to score a folder of submissions.
"""

from lesson_lib.coursework.check import CheckResult, Report, check, check_all
from lesson_lib.coursework.problems import PROBLEMS, params, reference, show, statement

__all__ = [
    "PROBLEMS",
    "CheckResult",
    "Report",
    "check",
    "check_all",
    "params",
    "reference",
    "show",
    "statement",
]
