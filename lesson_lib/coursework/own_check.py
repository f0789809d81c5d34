"""Self-check of a student's own notebook: whether an answer can be read, not whether it's right.

A salted edition's statements have answers in no file the student has, so its check cells call
:func:`check`, which with the student's ID says only whether the grader can read the answer.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lesson_lib.coursework.check import UNANSWERED, UNREADABLE, CheckResult, Report, _answer_to
from lesson_lib.coursework.check import check as check_book
from lesson_lib.coursework.check import check_all as check_all_book
from lesson_lib.coursework.problems import PROBLEMS

#: The status of an answer the grader can read (its score is given after hand-in).
READABLE = "readable"

_READABLE_MESSAGE = (
    "The grader can read this answer. Whether it is right is known after hand-in: the "
    "answers to your numbers are not in this notebook. To practise with feedback, solve the "
    "book's version and check it with check({qid!r}, answer), without your ID."
)


def check(qid: object, answer: object, student: object = None) -> CheckResult:
    """Check one answer: its form for a student's own numbers, fully for the book's (never raises).

    Parameters
    ----------
    qid : str
        Problem id (``"q3"``; ``3`` or ``"Q3"`` work too).
    answer : object
        The answer, as for :func:`lesson_lib.coursework.check.check`.
    student : str, optional
        The notebook's student ID: the result is then ``"readable"``, ``"not answered yet"`` or
        ``"unreadable"`` and scores nothing; None checks against the book's version.

    Returns
    -------
    CheckResult
    """
    book = check_book(qid, answer)
    if student is None or book.status in (UNANSWERED, UNREADABLE):
        return book
    message = _READABLE_MESSAGE.format(qid=book.qid)
    return CheckResult(book.qid, READABLE, message, 0.0, book.given, "")


@dataclass(frozen=True)
class FormatReport:
    """Every problem's :func:`check` (``results``, id -> CheckResult) as ``check_all`` shows it."""

    results: dict[str, CheckResult]

    @property
    def readable(self) -> int:
        """How many answers the grader can read."""
        return sum(r.status == READABLE for r in self.results.values())

    def __str__(self) -> str:
        lines = [f"{qid}: {r.status}" for qid, r in self.results.items()]
        lines.append(f"{self.readable} of {len(self.results)} answers can be read by the grader")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(qid)}</td><td>{html.escape(r.status)}</td></tr>"
            for qid, r in self.results.items()
        )
        return (
            "<table><thead><tr><th>problem</th><th>answer</th></tr></thead>"
            f"<tbody>{rows}</tbody></table><p>{self.readable} of {len(self.results)} "
            "answers can be read by the grader; they are scored after hand-in.</p>"
        )


def check_all(answers: Mapping[str, Any], student: object = None) -> FormatReport | Report:
    """:func:`check` for every problem, e.g. ``check_all(globals(), STUDENT)``.

    Parameters
    ----------
    answers : mapping
        Answers keyed by ``"answer_q3"`` or ``"q3"``; missing ones are not answered yet.
    student : str, optional
        The notebook's student ID (None: the book's full report).

    Returns
    -------
    FormatReport or Report
    """
    if student is None:
        return check_all_book(answers)
    return FormatReport({qid: check(qid, _answer_to(qid, answers), student) for qid in PROBLEMS})
