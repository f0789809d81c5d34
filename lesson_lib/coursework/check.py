"""The self-checker: ``check("q3", answer)`` says right, close or wrong, and why.

It reads plain numbers, NumPy scalars and strings with a unit ("1.875 MiB",
"9.3 ms", "1.76x", "b"), compares them with the reference answer computed by
``lesson_lib`` for the student's variant, and recognises the usual mistakes
(GB for GiB, payload for wire bytes, ms for us, a forgotten 2(N-1)/N ...).
It never raises on a student's input: None, NaN, lists or gibberish get a
message explaining what was expected.

Tolerances: byte counts are right when they match to the decimals asked for
(or within 0.1 %); times, rates and speed-ups within the problem's relative
tolerance (1 % unless stated); counts exactly; multiple choice by letter.
"""

from __future__ import annotations

import html
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, params, units_of
from lesson_lib.coursework.problems.bank import LETTERS, Problem
from lesson_lib.coursework.variants import normalize_student
from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS

RIGHT = "right"
CLOSE = "close"
WRONG = "wrong"
UNANSWERED = "not answered yet"
UNREADABLE = "unreadable"

#: Points per status; "close" earns half.
SCORES: dict[str, float] = {RIGHT: 1.0, CLOSE: 0.5, WRONG: 0.0, UNANSWERED: 0.0, UNREADABLE: 0.0}

# Darkened Okabe-Ito hues: text on white needs a 4.5:1 contrast (WCAG AA),
# which the plain palette's green, orange and grey miss. A symbol goes with
# each colour so colour is not the only cue. Text in these colours gets its
# own white background, so a dark theme keeps the contrast.
_LOOK = {
    RIGHT: ("#007A5A", "\u2714"),
    CLOSE: ("#8A5A00", "\u2248"),
    WRONG: ("#A14A00", "\u2718"),
    UNANSWERED: ("#666666", "\u2026"),
    UNREADABLE: ("#005A8C", "?"),
}

_TWINS = {"KB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB"}
_TWINS.update({v: k for k, v in _TWINS.items()})

_UNIT_ALIASES: dict[str, str] = {
    "b": "B",
    "byte": "B",
    "bytes": "B",
    "kb": "KB",
    "mb": "MB",
    "gb": "GB",
    "tb": "TB",
    "kib": "KiB",
    "mib": "MiB",
    "gib": "GiB",
    "tib": "TiB",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "ms": "ms",
    "msec": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
    "us": "us",
    "\u00b5s": "us",
    "\u03bcs": "us",
    "usec": "us",
    "microsecond": "us",
    "microseconds": "us",
    "ns": "ns",
    "x": "x",
    "\u00d7": "x",
    "times": "x",
}

_NUMBER = r"[-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
#: Units that count things rather than measure bytes or time, with the spellings a
#: student may write after the number (none of them converts the value).
_COUNTING_UNITS: dict[str, tuple[str, ...]] = {
    "sequences": ("sequence", "sequences", "seq", "seqs"),
    "tokens/s": ("tokens/s", "token/s", "tok/s", "tokens per second"),
}

_ANSWER = re.compile(rf"\s*({_NUMBER})\s*(\S.*?)?\s*")
#: What a number with thousands separators must look like ("1,234.5").
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(,\d{3})+(\.\d*)?([eE][-+]?\d+)?")
_LETTER = re.compile(r"\s*\(?\s*([A-Za-z])\s*[).:]?\s*")
#: The units a student may write, as listed in the unknown-unit message.
_KNOWN_UNITS = ", ".join([*BYTE_UNITS, *TIME_UNITS, "x"])
#: Multiple-choice options are lettered in this order (the problem bank's letters).
_LETTERS = LETTERS

#: An answer rounded to the decimals asked for is right within half a unit in
#: the last place, widened by this relative slack for floating-point error ...
_HALF_UNIT_SLACK = 1e-9
#: ... or within this relative distance of the reference.
_DECIMALS_RTOL = 1e-3
#: Relative distance within which an answer is taken for a unit mix-up or a
#: known mistake (at least; a problem's own tolerance may be wider).
_MATCH_RTOL = 0.01

#: What :func:`check` says, as ``str.format`` templates. The static site's
#: self-check (:mod:`lesson_lib.coursework.static_check`) fills the same
#: templates in the browser, so a reader gets the very same words there.
MESSAGES: dict[str, str] = {
    "no_number": "could not read a number in {text!r}; expected {expected}.",
    "decimal_comma": (
        "{text!r}: write decimals with a point (1.5), not a comma; expected {expected}."
    ),
    "text_not_finite": "{text!r} is not a finite number; expected {expected}.",
    "unknown_unit": "{text!r}: unknown unit {unit!r} (known: {known}); expected {expected}.",
    "wrong_dimension": (
        "{text!r} is given in {unit}, which does not measure what this problem asks "
        "for; expected {expected}."
    ),
    "converted": " (read {text!r} as {value:.6g} {unit})",
    "choice_expected": "one letter from {letters} as a string, e.g. 'b'",
    "not_a_choice": "could not read {text!r} as a choice; expected {expected}.",
    "count_right": "{ref} {unit}.",
    "round_down": "Round down: only whole sequences fit.",
    "off_by_one": "Off by one: round down at the end, and only at the end.",
    "right": "{value:.6g} {unit} (reference {ref:.6g} {unit}).",
    "close": (
        "Nearly there, but outside the tolerance: keep full precision in intermediate "
        "steps and round only the final answer."
    ),
    "hint": "Hint: {hint}",
}


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one answer.

    Attributes
    ----------
    qid : str
        The problem.
    status : str
        ``"right"``, ``"close"``, ``"wrong"``, ``"not answered yet"`` or ``"unreadable"``.
    message : str
        What to do next: a confirmation, a hint, or what was expected.
    score : float
        1 for right, 0.5 for close, else 0.
    given : str
        The answer as received (its ``repr``, shortened).
    """

    qid: str
    status: str
    message: str
    score: float
    given: str = ""

    @property
    def right(self) -> bool:
        """True when the answer is right."""
        return self.status == RIGHT

    def __str__(self) -> str:
        return f"{self.qid}: {self.status}. {self.message}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        color, symbol = _LOOK.get(self.status, ("#000000", ""))
        return (
            f'<div style="border-left:4px solid {color};padding:2px 8px;margin:2px 0">'
            f"<strong>{symbol} {html.escape(self.qid)}: {html.escape(self.status)}.</strong> "
            f"{html.escape(self.message)}</div>"
        )


@dataclass(frozen=True)
class Report:
    """Verdicts on several problems, with the total score.

    Attributes
    ----------
    results : dict
        Problem id -> CheckResult, in the set's order.
    """

    results: dict[str, CheckResult]

    @property
    def score(self) -> float:
        """Sum of the scores."""
        return sum(r.score for r in self.results.values())

    @property
    def max_score(self) -> float:
        """Number of problems checked (1 point each)."""
        return float(len(self.results))

    def __str__(self) -> str:
        lines = [str(r) for r in self.results.values()]
        lines.append(f"score: {self.score:g} / {self.max_score:g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

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


class _Unreadable(Exception):
    """The answer cannot be read as the kind of value the problem asks for."""


def _short_repr(value: object, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:  # a student's object with a broken __repr__
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_blank(answer: object) -> bool:
    return answer is None or answer is Ellipsis or (isinstance(answer, str) and not answer.strip())


def _unwrap_numpy(answer: object) -> object:
    """NumPy scalars and 0-d arrays become Python values; other objects pass through."""
    if type(answer).__module__ == "numpy":
        shape = getattr(answer, "shape", None)
        if shape == () and hasattr(answer, "item"):
            return answer.item()
    return answer


def _read_number(problem: Problem, answer: object) -> tuple[float, str]:
    """The answer as a float in the problem's unit, and a note when a unit was converted."""
    expected = problem.answer_format()
    answer = _unwrap_numpy(answer)
    if isinstance(answer, bool):
        raise _Unreadable(f"the answer {answer!r} is a yes/no value; expected {expected}.")
    if isinstance(answer, numbers.Real):
        try:
            value = float(answer)
        except (OverflowError, ValueError, TypeError):
            raise _Unreadable(f"the answer is too large to read; expected {expected}.") from None
        if not math.isfinite(value):
            raise _Unreadable(f"the answer {value!r} is not a finite number; expected {expected}.")
        return value, ""
    if isinstance(answer, str):
        return _read_number_text(problem, answer, expected)
    if isinstance(answer, numbers.Complex):
        raise _Unreadable(f"the answer {answer!r} is a complex number; expected {expected}.")
    kind = type(answer).__name__
    try:
        count = len(answer)  # type: ignore[arg-type]
    except Exception:
        raise _Unreadable(
            f"the answer is an object of type {kind!r}; expected {expected}."
        ) from None
    raise _Unreadable(
        f"the answer is a {kind} of {count} item{'' if count == 1 else 's'}; give one value "
        f"on its own, not inside a {kind}; expected {expected}."
    )


def _read_number_text(problem: Problem, text: str, expected: str) -> tuple[float, str]:
    match = _ANSWER.fullmatch(text)
    if not match:
        raise _Unreadable(MESSAGES["no_number"].format(text=text, expected=expected))
    digits, unit_text = match.group(1), match.group(2)
    if "," in digits:
        if not _THOUSANDS.fullmatch(digits):
            raise _Unreadable(MESSAGES["decimal_comma"].format(text=text, expected=expected))
        digits = digits.replace(",", "")
    value = float(digits.replace("_", ""))
    if not math.isfinite(value):
        raise _Unreadable(MESSAGES["text_not_finite"].format(text=text, expected=expected))
    if not unit_text:
        return value, ""
    unit = _UNIT_ALIASES.get(unit_text.strip().casefold())
    if unit_text.strip().casefold() in _COUNTING_UNITS.get(problem.unit, ()):
        return value, ""
    asked = units_of(problem.unit)
    if unit is None:
        raise _Unreadable(
            MESSAGES["unknown_unit"].format(
                text=text, unit=unit_text.strip(), known=_KNOWN_UNITS, expected=expected
            )
        )
    given = units_of(unit)
    if asked is None or given is None or given[0] != asked[0]:
        raise _Unreadable(
            MESSAGES["wrong_dimension"].format(text=text, unit=unit, expected=expected)
        )
    converted = value * given[1] / asked[1]
    note = (
        ""
        if unit == problem.unit
        else MESSAGES["converted"].format(text=text.strip(), value=converted, unit=problem.unit)
    )
    return converted, note


def _choice_letters(problem: Problem, qid: str, student: object) -> str:
    """The letters of a multiple-choice problem's options, e.g. ``"abcd"``."""
    return _LETTERS[: len(problem.choices(params(qid, student)))]


def _choice_expected(letters: str) -> str:
    """How a multiple-choice answer should be written, in words."""
    return MESSAGES["choice_expected"].format(letters=", ".join(letters))


def _read_letter(problem: Problem, answer: object, letters: str) -> str:
    expected = _choice_expected(letters)
    answer = _unwrap_numpy(answer)
    if not isinstance(answer, str):
        raise _Unreadable(f"got {_short_repr(answer)}; expected {expected}.")
    match = _LETTER.fullmatch(answer)
    if not match or match.group(1).casefold() not in letters:
        raise _Unreadable(MESSAGES["not_a_choice"].format(text=answer, expected=expected))
    return match.group(1).casefold()


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else abs(a - b)


def _abs_tolerance(problem: Problem) -> float | None:
    """Half a unit in the last decimal asked for (with slack), or None if no decimals are asked."""
    if problem.decimals is None:
        return None
    half_unit = 0.5 * 10.0 ** (-problem.decimals)
    return half_unit * (1 + _HALF_UNIT_SLACK)


def _is_right(problem: Problem, value: float, ref: float) -> bool:
    tolerance = _abs_tolerance(problem)
    if tolerance is not None:
        return abs(value - ref) <= tolerance or _rel(value, ref) <= _DECIMALS_RTOL
    return _rel(value, ref) <= problem.rtol


def _unit_mixups(problem: Problem, ref: float) -> list[tuple[float, str]]:
    """Answers the student would give in another unit of the same kind, with a hint."""
    asked = units_of(problem.unit)
    if asked is None or asked[0] == "ratio":
        return []
    table = BYTE_UNITS if asked[0] == "bytes" else TIME_UNITS
    out = []
    for other, size in table.items():
        if other == problem.unit:
            continue
        value = ref * asked[1] / size
        if other == _TWINS.get(problem.unit):
            hint = (
                f"Your number is the answer in {other}, but the question asks for "
                f"{problem.unit}: GB, MB, KB are powers of 10 (1 GB = 10^9 bytes), "
                "GiB, MiB, KiB powers of 2 (1 GiB = 2^30 bytes)."
            )
        elif asked[0] == "time":
            hint = (
                f"Your number is the answer in {other}, but the question asks for "
                f"{problem.unit} (1 s = 1000 ms = 1,000,000 us)."
            )
        else:
            hint = f"Your number is the answer in {other}; the question asks for {problem.unit}."
        out.append((value, hint))
    return out


def _grade_number(problem: Problem, qid: str, student: object, value: float) -> tuple[str, str]:
    ref = problem.reference(params(qid, student))
    unit = problem.unit
    if problem.kind == "count":
        if value == ref:
            return RIGHT, MESSAGES["count_right"].format(ref=int(ref), unit=unit)
        for m in mistakes(qid, student):
            if value == m.value:
                return WRONG, m.hint
        if not value.is_integer() and math.floor(value) == ref:
            return CLOSE, MESSAGES["round_down"]
        if abs(value - ref) == 1:
            return CLOSE, MESSAGES["off_by_one"]
        return WRONG, MESSAGES["hint"].format(hint=problem.hint)
    if _is_right(problem, value, ref):
        return RIGHT, MESSAGES["right"].format(value=value, unit=unit, ref=ref)
    for other_value, hint in _unit_mixups(problem, ref):
        if _rel(value, other_value) <= _MATCH_RTOL:
            return WRONG, hint
    for m in mistakes(qid, student):
        if _rel(value, m.value) <= max(problem.rtol, _MATCH_RTOL):
            return WRONG, m.hint
    if _rel(value, ref) <= problem.close_rtol:
        return CLOSE, MESSAGES["close"]
    return WRONG, MESSAGES["hint"].format(hint=problem.hint)


def _grade_choice(problem: Problem, qid: str, student: object, letter: str) -> tuple[str, str]:
    p = params(qid, student)
    options = problem.choices(p) if problem.choices else []
    chosen = options[_LETTERS.index(letter)]
    why = re.sub(r"^(Right|No): ", "", chosen.why)
    return (RIGHT if chosen.correct else WRONG), why[:1].upper() + why[1:]


def check(qid: object, answer: object, student: object = None) -> CheckResult:
    """Check one answer against the reference for this student's variant.

    Never raises: a missing, odd or unreadable answer gets a result that says
    what was expected.

    Parameters
    ----------
    qid : str
        Problem id, a key of ``PROBLEMS`` such as ``"q3"`` (``3`` or ``"Q3"``
        work too).
    answer : object
        A number in the unit the problem asks for, a string with a unit
        (``"1.875 MiB"``, converted if it is another unit of the same kind),
        or a letter for multiple choice. None or ``...`` mean not answered yet.
    student : str, optional
        Student ID; None checks against the book's version.

    Returns
    -------
    CheckResult
        Status, message and score; shows itself nicely in a notebook.

    Examples
    --------
    >>> check("q1", None).status
    'not answered yet'
    >>> check("q1", "lots").status
    'unreadable'
    """
    label = _label(qid)
    given = _short_repr(answer)
    try:
        qid = _normalize_qid(qid)
        if qid is None:
            return CheckResult(
                label,
                UNREADABLE,
                f"There is no problem {label}; the ids are {', '.join(PROBLEMS)}.",
                0.0,
                given,
            )
        problem = get_problem(qid)
        try:
            normalize_student(student)
        except (TypeError, ValueError) as err:
            return CheckResult(qid, UNREADABLE, f"Student ID problem: {err}.", 0.0, given)
        if _is_blank(answer):
            return CheckResult(
                qid,
                UNANSWERED,
                f"Write your answer in answer_{qid} as {problem.answer_format()}, "
                "then run this cell again.",
                0.0,
                given,
            )
        try:
            if problem.kind == "choice":
                letters = _choice_letters(problem, qid, student)
                status, message = _grade_choice(
                    problem, qid, student, _read_letter(problem, answer, letters)
                )
            else:
                value, note = _read_number(problem, answer)
                status, message = _grade_number(problem, qid, student, value)
                message = (message + note) if note else message
        except _Unreadable as err:
            return CheckResult(qid, UNREADABLE, str(err)[:1].upper() + str(err)[1:], 0.0, given)
        return CheckResult(qid, status, message, SCORES[status], given)
    except Exception as err:  # the checker must never crash a student's notebook
        return CheckResult(
            label,
            UNREADABLE,
            f"The checker could not handle this answer ({_short_repr(err, 120)}). "
            "Please tell your instructor.",
            0.0,
            given,
        )


def _label(qid: object) -> str:
    """How to name ``qid`` in a result: itself if a short plain string or int, else its repr."""
    if type(qid) is str and len(qid) <= 20:
        return qid
    if type(qid) is int and -(10**18) < qid < 10**18:
        return str(qid)
    return _short_repr(qid, 20)


def _normalize_qid(qid: object) -> str | None:
    if isinstance(qid, bool):
        return None
    if isinstance(qid, int):
        if not 0 < qid < 1000:
            return None
        qid = f"q{int(qid)}"
    if not isinstance(qid, str):
        return None
    key = qid.strip().casefold()
    if key.startswith("answer_"):
        key = key[len("answer_") :]
    if not key.startswith("q"):
        key = "q" + key
    return key if key in PROBLEMS else None


def check_all(answers: Mapping[str, Any], student: object = None) -> Report:
    """Check every problem at once, e.g. ``check_all(globals(), student=STUDENT)``.

    Parameters
    ----------
    answers : mapping
        Answers keyed by ``"answer_q3"`` (a notebook's variables) or ``"q3"``;
        missing problems count as not answered yet.
    student : str, optional
        Student ID; None checks against the book's version.

    Returns
    -------
    Report
        One result per problem and the total; shows itself as a table.
    """
    results = {}
    for qid in PROBLEMS:
        answer = None
        try:
            if f"answer_{qid}" in answers:
                answer = answers[f"answer_{qid}"]
            elif qid in answers:
                answer = answers[qid]
        except Exception:
            answer = None
        results[qid] = check(qid, answer, student)
    return Report(results)
