"""The self-checker: ``check("q3", answer)`` says right, close or wrong, and why.

The answer is read as the grader reads it (:mod:`~lesson_lib.coursework.answers`,
:mod:`~lesson_lib.coursework.check_reading`) and compared with the reference ``lesson_lib`` computes
for the student's variant by each problem's rules (:mod:`~lesson_lib.coursework.check_rules`, shared
with the static site by :func:`page_contract`): right at the precision the statement asks for,
a usual mistake named only when the answer is nearer it than the reference. It never raises on a
student's input, takes the same short time whatever the answer, and writes messages of at most
:data:`MAX_MESSAGE_CHARS`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lesson_lib.coursework.answers import (
    BLANK,
    MAX_ANSWER_CHARS,
    OTHER,
    Reading,
    read_answer,
    type_name,
)
from lesson_lib.coursework.check_messages import CLOSE as CLOSE
from lesson_lib.coursework.check_messages import LOOK as _LOOK
from lesson_lib.coursework.check_messages import MESSAGES, UNANSWERED, UNREADABLE
from lesson_lib.coursework.check_messages import RIGHT as RIGHT
from lesson_lib.coursework.check_messages import WRONG as WRONG
from lesson_lib.coursework.check_reading import _read_letter, _read_number, _Unreadable
from lesson_lib.coursework.check_rules import _first_match, _problem_contract, _written_unit_verdict
from lesson_lib.coursework.problems import PROBLEMS, get_problem
from lesson_lib.coursework.variants import normalize_student
from lesson_lib.model._safe_io import printable
from lesson_lib.model._validate import require_number

#: Longest message a verdict carries, characters (the longest the problems write is about 250).
MAX_MESSAGE_CHARS = 500

#: Credit of a close answer, as a fraction of the problem's points, unless the
#: caller sets another (``close_credit`` of :func:`check` and of the class report).
CLOSE_CREDIT = 0.5

#: Each status's share of the problem's points at the default close credit (see :func:`credit`).
SCORES: dict[str, float] = {
    RIGHT: 1.0,
    CLOSE: CLOSE_CREDIT,
    WRONG: 0.0,
    UNANSWERED: 0.0,
    UNREADABLE: 0.0,
}


def credit(status: str, close_credit: float = CLOSE_CREDIT) -> float:
    """The fraction of a problem's points a verdict earns: 1 right, ``close_credit`` close, else 0.

    Parameters
    ----------
    status : str
    close_credit : float, default :data:`CLOSE_CREDIT`
        What a close answer earns, from 0 to 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``close_credit`` is outside 0 to 1, or ``status`` is not a status.
    """
    close_credit = require_number("close_credit", close_credit, minimum=0.0, maximum=1.0)
    if status not in SCORES:
        raise ValueError(f"status must be one of {', '.join(SCORES)}, got {status!r}")
    return close_credit if status == CLOSE else SCORES[status]


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one answer."""

    qid: str
    #: ``"right"``, ``"close"``, ``"wrong"``, ``"not answered yet"`` or ``"unreadable"``.
    status: str
    #: What to do next (a confirmation, a hint, or what was expected).
    message: str
    #: 1 for right, 0.5 for close, else 0.
    score: float
    #: The answer as received (its ``repr``, shortened).
    given: str = ""
    #: Which of the problem's rules gave the verdict, ``"right"``, ``"close"``, ``"hint"`` (wrong,
    #: no known mistake), ``"in GiB"`` (another unit), ``"mistake 2"``, ``"round down"``,
    #: ``"off by one"`` or ``"choice b"``; empty when the answer was blank or could not be read.
    rule: str = ""
    #: Stable id of the mistake the answer was taken for (``"q07.us-as-ms"``, ``"q07.unit-kb"``; two
    #: joined by ``+`` when they give the same number in this variant), or empty.
    mistake: str = ""
    #: ``score`` times :attr:`~lesson_lib.coursework.problems.bank.Problem.max_points`.
    points: float = 0.0

    @property
    def right(self) -> bool:
        """True when the answer is right."""
        return self.status == RIGHT

    def __str__(self) -> str:
        return f"{self.qid}: {self.status}. {self.message}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        color, symbol = _LOOK.get(self.status, ("#000000", ""))
        return (
            f'<div style="border-left:4px solid {color};padding:2px 8px;margin:2px 0">'
            f"<strong>{symbol} {html.escape(self.qid)}: {html.escape(self.status)}.</strong> "
            f"{html.escape(self.message)}</div>"
        )


@dataclass(frozen=True)
class Report:
    """Verdicts on several problems (``results``, id -> CheckResult in order), and the total."""

    results: dict[str, CheckResult]

    @property
    def score(self) -> float:
        """Sum of the scores."""
        return sum(r.score for r in self.results.values())

    @property
    def max_score(self) -> float:
        """Number of problems checked (a score of 1 each)."""
        return float(len(self.results))

    @property
    def points(self) -> float:
        """Sum of the points earned."""
        return sum(r.points for r in self.results.values())

    @property
    def max_points(self) -> float:
        """Sum of the checked problems' points."""
        return sum(get_problem(q).max_points for q in self.results if q in PROBLEMS)

    def __str__(self) -> str:
        lines = [str(r) for r in self.results.values()]
        lines.append(f"score: {self.score:g} / {self.max_score:g}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(r.qid)}</td>"
            f'<td style="color:{_LOOK[r.status][0]};background:#ffffff">{_LOOK[r.status][1]} '
            f"{html.escape(r.status)}</td><td>{r.score:g}</td></tr>"
            for r in self.results.values()
        )
        return (
            "<table><thead><tr><th>problem</th><th>status</th><th>score</th></tr></thead>"
            f"<tbody>{rows}</tbody><tfoot><tr><td>total</td><td></td>"
            f"<td>{self.score:g} / {self.max_score:g}</td></tr></tfoot></table>"
        )


def page_contract() -> dict[str, Any]:
    """Everything the static site's self-check needs to give :func:`check`'s verdicts.

    For the book's version of every problem, as JSON-able data with every message in full: the page
    reads a number and a unit, or a letter, and shows the verdict :func:`check` gives by the rules.

    Returns
    -------
    dict
        ``look`` (status -> ``[colour, symbol]``), ``max_chars`` (longer answers get ``too_long``)
        and ``problems``: id -> ``kind``, ``unit``, ``expected`` (in words) and the page's own
        verdicts ``unanswered``, ``unreadable`` and ``too_long``. A verdict has ``status``, ``name``
        (``rule`` of :class:`CheckResult`) and ``message``. Numbers and counts add ``reference`` and
        ``units`` (unit -> size in SI), ``spellings`` (lower-case spelling -> unit), ``rules``
        (verdicts with a ``value`` and a ``tolerance``: an answer gets the first it is within, a
        wrong one only if nearer its value than ``reference``) and ``otherwise``; multiple choice
        adds ``letters`` and ``choices`` (letter -> verdict).
    """
    return {
        "look": {status: list(look) for status, look in _LOOK.items()},
        "max_chars": MAX_ANSWER_CHARS,
        "problems": {qid: _problem_contract(qid, None) for qid in PROBLEMS},
    }


def check(
    qid: object, answer: object, student: object = None, *, close_credit: float = CLOSE_CREDIT
) -> CheckResult:
    """Check one answer against the reference for this student's variant; never raises on an answer.

    Parameters
    ----------
    qid : str
        Problem id, ``"q1"`` ... (``3`` or ``"Q3"`` work too).
    answer : object
        A number in the unit asked for, a string with a unit (``"1.875 MiB"``, converted), or a
        letter for multiple choice; None or ``...``: not answered yet.
    student : str, optional
        Student ID; None checks against the book's version.
    close_credit : float, default :data:`CLOSE_CREDIT`
        The share of the problem's points a close answer earns, 0 to 1 (bad values raise ValueError).

    Returns
    -------
    CheckResult
    """
    close_credit = require_number("close_credit", close_credit, minimum=0.0, maximum=1.0)
    label = _label(qid)
    try:
        reading = answer if type(answer) is Reading else read_answer(answer)
    except (KeyboardInterrupt, CheckTimeout):
        raise
    except BaseException:  # read_answer does not raise; this is belt and braces
        reading = Reading(OTHER, shown="<?>", why="object", type_name="?")
    given = reading.shown
    try:
        return _judge(label, qid, reading, student, given, close_credit)
    except (KeyboardInterrupt, CheckTimeout):
        raise
    except BaseException as err:  # the checker must never crash a student's notebook
        why = f"The checker could not handle this answer ({type_name(err)})"
        return _result(label, UNREADABLE, f"{why}. Please tell your instructor.", given)


def _result(
    qid: str,
    status: str,
    message: str,
    given: str,
    rule: str = "",
    mistake: str = "",
    close_credit: float = CLOSE_CREDIT,
) -> CheckResult:
    """A verdict whose message is capped at :data:`MAX_MESSAGE_CHARS`, with its points."""
    score = credit(status, close_credit)
    points = score * PROBLEMS[qid].max_points if qid in PROBLEMS else 0.0
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[: MAX_MESSAGE_CHARS - 3] + "..."
    return CheckResult(qid, status, message, score, given, rule, mistake, points)


def _judge(
    label: str,
    qid: object,
    reading: Reading,
    student: object,
    given: str,
    close_credit: float = CLOSE_CREDIT,
) -> CheckResult:
    """The verdict on one reading (see :func:`check`)."""
    key = _normalize_qid(qid)
    if key is None:
        message = f"There is no problem {label}; the ids are {', '.join(PROBLEMS)}."
        return _result(label, UNREADABLE, message, given)
    problem = get_problem(key)
    try:
        normalize_student(student)
    except (TypeError, ValueError) as err:
        return _result(key, UNREADABLE, f"Student ID problem: {err}.", given)
    if reading.kind == BLANK:
        message = MESSAGES["unanswered"].format(qid=key, expected=problem.answer_format())
        return _result(key, UNANSWERED, message, given)
    contract = _problem_contract(key, student)
    try:
        if problem.kind == "choice":
            verdict = contract["choices"][_read_letter(reading, contract["letters"])]
            note = ""
        else:
            value, note, written = _read_number(problem, contract, reading)
            verdict = _first_match(contract, value)
            if written and verdict["name"].startswith("in "):
                verdict = _written_unit_verdict(problem, contract, value, written)
    except _Unreadable as err:
        return _result(key, UNREADABLE, str(err)[:1].upper() + str(err)[1:], given)
    return _result(
        key,
        verdict["status"],
        verdict["message"] + note,
        given,
        verdict["name"],
        verdict.get("mistake", ""),
        close_credit,
    )


class CheckTimeout(BaseException):
    """Raised by a caller's timer (the grader's ``signal.setitimer``) to stop :func:`check`, which
    catches everything else an answer can raise and lets this through."""


def _label(qid: object) -> str:
    """``qid`` if a short string or int, else its type: never its own ``repr`` (it could hang)."""
    kind = type(qid)
    if issubclass(kind, str) and str.__len__(qid) <= 20:
        return printable(str.__getitem__(qid, slice(None)), 20)
    if kind is int and -(10**18) < qid < 10**18:
        return str(qid)
    return f"<{type_name(qid)}>"[:20]


def _normalize_qid(qid: object) -> str | None:
    kind = type(qid)
    if issubclass(kind, bool):
        return None
    if issubclass(kind, int):
        number = int.__int__(qid)
        if not 0 < number < 1000:
            return None
        qid = f"q{number}"
    elif issubclass(kind, str) and str.__len__(qid) <= 40:
        qid = str.__getitem__(qid, slice(None))
    else:
        return None
    key = qid.strip().casefold().removeprefix("answer_")
    if not key.startswith("q"):
        key = "q" + key
    return key if key in PROBLEMS else None


def check_all(answers: Mapping[str, Any], student: object = None) -> Report:
    """Check every problem at once, e.g. ``check_all(globals(), student=STUDENT)``.

    Parameters
    ----------
    answers : mapping
        Keyed by ``"answer_q3"`` (a notebook's variables) or ``"q3"``; missing: not answered yet.
    student : str, optional

    Returns
    -------
    Report
    """
    return Report({qid: check(qid, _answer_to(qid, answers), student) for qid in PROBLEMS})


def _answer_to(qid: str, answers: Mapping[str, Any]) -> object:
    """The answer to ``qid`` in a notebook's variables (``answer_q3``) or by id; None if none."""
    try:
        if f"answer_{qid}" in answers:
            return answers[f"answer_{qid}"]
        if qid in answers:
            return answers[qid]
    except KeyboardInterrupt:
        raise
    except BaseException:  # a namespace that is not a plain mapping
        pass
    return None
