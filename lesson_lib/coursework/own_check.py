"""Self-check of a student's own notebook, which holds neither the answers nor the course salt.

A salted edition's check cells call :func:`check`. With the student's ID it says whether the grader
can read the answer and, when the edition stored its digests (:func:`load_edition`,
:mod:`~lesson_lib.coursework.own_digests`), whether it is right, a named mistake or not matched for
that student's numbers. A class notebook also shows each student's statements with :func:`show`.
"""

from __future__ import annotations

import base64
import html
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lesson_lib.coursework.answers import NUMBER, TEXT, read_answer
from lesson_lib.coursework.check import CheckResult, Report, _answer_to, _normalize_qid
from lesson_lib.coursework.check import check as check_book
from lesson_lib.coursework.check import check_all as check_all_book
from lesson_lib.coursework.check_messages import RIGHT, UNANSWERED, UNREADABLE, WRONG
from lesson_lib.coursework.check_reading import _read_number, _unit_sizes, _unit_spellings
from lesson_lib.coursework.own_digests import match, student_key
from lesson_lib.coursework.problems import PROBLEMS, MarkdownText, get_problem
from lesson_lib.coursework.student_ids import normalize_student

#: The status of an answer the grader can read (its score is given after hand-in).
READABLE = "readable"
#: The status of a readable answer that is neither right nor a named mistake for one's numbers.
NOT_MATCHED = "not matched"

_NOT_MATCHED_MESSAGE = (
    "For your numbers this is not the right answer at the precision asked, nor one of the usual "
    "mistakes (an answer at the very edge of the tolerance can say this and still be graded right)."
)
_EXAMPLE = 'e.g. STUDENT = "s1234567"'

#: What the loaded edition holds: its pepper and, by student key, statements and digests.
_EDITION: dict[str, Any] = {"pepper": "", "students": {}}


def load_edition(data: str) -> None:
    """Add the data cell of a salted edition (written by the student edition) to this kernel.

    Parameters
    ----------
    data : str
        Base64 of zlib-compressed JSON (:func:`~lesson_lib.coursework.own_digests.data_cells`):
        ``pepper`` and ``students``, key -> ``statements`` and ``checks`` by problem.
    """
    loaded = json.loads(zlib.decompress(base64.b64decode(data)))
    _EDITION["pepper"] = loaded["pepper"]
    _EDITION["students"].update(loaded["students"])


def _entry(student: object) -> tuple[dict[str, Any] | None, str]:
    """The loaded entry of ``student`` and its key, or None and what to type instead."""
    try:
        sid = normalize_student(student)
    except (TypeError, ValueError) as err:
        return None, f"STUDENT: {err}; type the ID you were issued, {_EXAMPLE}."
    if sid is None:
        return None, f"STUDENT is empty: type the student ID you were issued, {_EXAMPLE}."
    key = student_key(_EDITION["pepper"], sid)
    if key not in _EDITION["students"]:
        return None, (
            f"STUDENT = {sid!r} is not an ID this notebook was made for: type the student ID you "
            f"were issued ({_EXAMPLE}), then run every cell again."
        )
    return _EDITION["students"][key], key


def show(qid: str, student: object) -> MarkdownText:
    """Problem ``qid``'s statement with this student's numbers, from the loaded edition.

    Parameters
    ----------
    qid : str
    student : str
        The notebook's ``STUDENT``.

    Returns
    -------
    MarkdownText
        The statement, or what ``STUDENT`` should be.
    """
    entry, why = _entry(student)
    if entry is None:
        return MarkdownText(f"**{qid}**: {why}")
    return MarkdownText(entry["statements"][qid])


def _own_verdict(qid: str, answer: object, student: object, given: str) -> CheckResult | None:
    """Right, a named mistake or not matched, from the loaded digests (None without them)."""
    if not _EDITION["students"]:
        return None
    entry, key = _entry(student)
    if entry is None:
        return CheckResult(qid, UNREADABLE, key, 0.0, given)
    stored = entry.get("checks", {}).get(qid)
    reading = read_answer(answer)
    if stored is None or reading.kind not in (NUMBER, TEXT):
        return None
    problem = get_problem(qid)
    sizes = _unit_sizes(problem)
    contract = {"units": sizes, "spellings": _unit_spellings(problem, sizes)}
    value = _read_number(problem, contract, reading)[0] / sizes[problem.unit]
    found = match(stored, qid, value, _EDITION["pepper"], key)
    if found == RIGHT:
        return CheckResult(qid, RIGHT, "Right for your numbers.", 0.0, given)
    if found is None:
        return CheckResult(qid, NOT_MATCHED, _NOT_MATCHED_MESSAGE, 0.0, given)
    mistake, hint, _ = stored["mistakes"][int(found)]
    return CheckResult(qid, WRONG, hint, 0.0, given, "mistake", mistake)


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
        The notebook's student ID: the result is then ``"not answered yet"``, ``"unreadable"``
        or, with the edition's digests loaded, ``"right"``, ``"wrong"`` (a named mistake) or
        ``"not matched"``, else ``"readable"``; it scores nothing. None checks against the
        book's version.

    Returns
    -------
    CheckResult
    """
    book = check_book(qid, answer)
    if student is None or book.status in (UNANSWERED, UNREADABLE):
        return book
    try:
        own = _own_verdict(_normalize_qid(qid), answer, student, book.given)
    except Exception:  # the self-check must never stop a notebook: it says readable
        own = None
    if own is not None:
        return own
    message = _READABLE_MESSAGE.format(qid=book.qid)
    return CheckResult(book.qid, READABLE, message, 0.0, book.given, "")


@dataclass(frozen=True)
class FormatReport:
    """Every problem's :func:`check` (``results``, id -> CheckResult) as ``check_all`` shows it."""

    results: dict[str, CheckResult]

    @property
    def readable(self) -> int:
        """How many answers the grader can read."""
        return sum(r.status not in (UNANSWERED, UNREADABLE) for r in self.results.values())

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
