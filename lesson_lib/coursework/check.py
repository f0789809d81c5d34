"""The self-checker: ``check("q3", answer)`` says right, close or wrong, and why.

It reads plain numbers, fractions, decimals, NumPy scalars and strings with
a unit ("1.875 MiB", "9.3 ms", "1.76x", "b") through
:func:`~lesson_lib.coursework.answers.read_answer`, the one reading the
grader uses too, compares them with the reference answer computed by
``lesson_lib`` for the student's variant, and recognises the usual mistakes
(GB for GiB, payload for wire bytes, ms for us, a forgotten 2(N-1)/N ...).
It never raises on a student's input: None, NaN, lists, gibberish, an
answer of ten million spaces or an object whose methods raise
``SystemExit`` or never return get a message explaining what was expected.
A text answer is read only up to
:data:`~lesson_lib.coursework.answers.MAX_ANSWER_CHARS` characters and every
pattern reads it in one pass, so a verdict takes the same short time
whatever the answer holds; messages are at most :data:`MAX_MESSAGE_CHARS`
long.

Tolerances: byte counts are right when they match to the decimals asked for
(or within 0.1 %); times, rates and speed-ups within the problem's relative
tolerance (1 % unless stated); counts exactly; multiple choice by letter.

Each problem's verdicts are one table of rules (:func:`page_contract` gives
the book's version of it to the static site's self-check): an answer read as
a number in SI units gets the first rule whose value it matches within that
rule's tolerance, and that rule's status and message.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lesson_lib.coursework.answers import (
    BLANK,
    MAX_ANSWER_CHARS,
    NUMBER,
    OTHER,
    TEXT,
    Reading,
    read_answer,
    type_name,
)
from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, params, units_of
from lesson_lib.coursework.problems.bank import LETTERS, Mistake, Params, Problem, mistake_id
from lesson_lib.coursework.variants import normalize_student
from lesson_lib.model._safe_io import printable
from lesson_lib.model._validate import require_number
from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS

RIGHT = "right"
CLOSE = "close"
WRONG = "wrong"
UNANSWERED = "not answered yet"
UNREADABLE = "unreadable"

#: Credit of a close answer, as a fraction of the problem's points, unless the
#: caller sets another (``close_credit`` of :func:`check` and of the class report).
CLOSE_CREDIT = 0.5

#: Credit per status, as a fraction of the problem's points, at the default
#: close credit (see :func:`credit`).
SCORES: dict[str, float] = {
    RIGHT: 1.0,
    CLOSE: CLOSE_CREDIT,
    WRONG: 0.0,
    UNANSWERED: 0.0,
    UNREADABLE: 0.0,
}


def credit(status: str, close_credit: float = CLOSE_CREDIT) -> float:
    """The fraction of a problem's points a verdict earns.

    Parameters
    ----------
    status : str
        A verdict's status (``"right"``, ``"close"`` ...).
    close_credit : float, default :data:`CLOSE_CREDIT`
        What a close answer earns, from 0 (nothing) to 1 (as much as a right one).

    Returns
    -------
    float
        1 for right, ``close_credit`` for close, 0 otherwise.

    Raises
    ------
    ValueError
        If ``close_credit`` is outside 0 to 1, or ``status`` is not a status.
    """
    close_credit = require_number("close_credit", close_credit, minimum=0.0, maximum=1.0)
    if status not in SCORES:
        raise ValueError(f"status must be one of {', '.join(SCORES)}, got {status!r}")
    return close_credit if status == CLOSE else SCORES[status]


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

#: Spellings of the units, each to the unit it names. check() looks up the
#: case-folded text; the static page, which folds only A-Z, finds the micro
#: sign (\u00b5) under its own key.
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

#: The number at the start of an answer (matched after the answer is stripped: every
#: pattern here reads a text in one pass, whatever it holds).
_NUMBER_AT_START = re.compile(_NUMBER)
#: What a number with thousands separators must look like ("1,234.5").
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(,\d{3})+(\.\d*)?([eE][-+]?\d+)?")
_LETTER = re.compile(r"\(?\s*([A-Za-z])\s*[).:]?")
#: Longest message a verdict carries, characters (the longest the problems write is
#: about 250).
MAX_MESSAGE_CHARS = 500
#: Longest form of a student's text quoted inside a message, characters.
_QUOTED_CHARS = 60
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

#: What :func:`check` and the static page say, as ``str.format`` templates.
_MESSAGES: dict[str, str] = {
    "no_number": "could not read a number in {text}; expected {expected}.",
    "decimal_comma": (
        "{text}: write decimals with a point (1.5), not a comma; expected {expected}."
    ),
    "text_not_finite": "{text} is not a finite number; expected {expected}.",
    "unknown_unit": "{text}: unknown unit {unit} (known: {known}); expected {expected}.",
    "wrong_dimension": (
        "{text} is given in {unit}, which does not measure what this problem asks "
        "for; expected {expected}."
    ),
    "converted": " (read {text} as {value:.6g} {unit})",
    "choice_expected": "one letter from {letters} as a string, e.g. 'b'",
    "not_a_choice": "could not read {text} as a choice; expected {expected}.",
    "too_long": (
        "the answer is too long to read ({count:,} characters; at most {limit} are read); "
        "expected {expected}."
    ),
    "page_too_long": (
        "This box reads at most {limit} characters. Type a number with its unit, or a "
        "letter, then press Check."
    ),
    "round_down": "Round down: only whole sequences fit.",
    "off_by_one": "Off by one: round down at the end, and only at the end.",
    "right": "The reference answer is {ref} {unit}.",
    "close": (
        "Nearly there, but outside the tolerance: keep full precision in intermediate "
        "steps and round only the final answer."
    ),
    "hint": "Hint: {hint}",
    "twin_unit": (
        "Your number is the answer in {other}, but the question asks for {unit}: GB, MB, "
        "KB are powers of 10 (1 GB = 10^9 bytes), GiB, MiB, KiB powers of 2 "
        "(1 GiB = 2^30 bytes)."
    ),
    "time_unit": (
        "Your number is the answer in {other}, but the question asks for {unit} "
        "(1 s = 1000 ms = 1,000,000 us)."
    ),
    "other_unit": "Your number is the answer in {other}; the question asks for {unit}.",
    "unit_written": (
        "Your number is the answer in {other}, but you wrote {written} after it: the "
        "arithmetic is right, the unit is not."
    ),
    "coincide": " Another mistake gives the same number here: {hint}",
    "unanswered": "Write your answer in answer_{qid} as {expected}, then run this cell again.",
    "page_unanswered": "Type your answer, then press Check. Expected: {expected}.",
    "page_choice_expected": "one letter: {letters}",
    "page_number_expected": "a number in {unit}{places}{with_unit}",
    "page_with_unit": ", or a number with a unit such as {example} (converted)",
    "page_reads_number": "a plain number, optionally followed by {units}",
    "page_unreadable": (
        'This box reads only {reads}. For any other answer, use check("{qid}", answer) '
        "in a notebook."
    ),
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
    rule : str
        Which of the problem's rules gave the verdict: ``"right"``,
        ``"close"``, ``"hint"`` (wrong, no known mistake), ``"in GiB"`` (the
        answer in another unit), ``"mistake 2"`` (the problem's second known
        mistake), ``"round down"``, ``"off by one"`` or ``"choice b"``;
        empty when the answer was blank or could not be read.
    mistake : str
        The stable id of the mistake the answer was taken for
        (``"q07.us-as-ms"``, ``"q07.unit-kb"`` for the answer in KB, two
        ids joined by ``+`` when the numbers of two mistakes coincide in
        this variant and the checker cannot tell which was made); empty
        when the verdict names no mistake.
    points : float
        The points the answer earns: ``score`` times the problem's
        :attr:`~lesson_lib.coursework.problems.bank.Problem.max_points`.
    """

    qid: str
    status: str
    message: str
    score: float
    given: str = ""
    rule: str = ""
    mistake: str = ""
    points: float = 0.0

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


def _quote(text: str) -> str:
    """A student's text inside a message: its repr, control characters escaped, shortened."""
    return printable(repr(text), _QUOTED_CHARS)


def _capped(message: str) -> str:
    return (
        message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 3] + "..."
    )


# ------------------------------------------------------------ reading answers


def _unit_sizes(problem: Problem) -> dict[str, float]:
    """The units an answer to ``problem`` may carry, each with its size in SI units.

    Bytes and seconds for byte counts and times, 1 for the ratio ``x``; a
    count of things (sequences, tokens/s) has only its own name, of size 1.
    """
    asked = units_of(problem.unit)
    if asked is None:
        return {problem.unit: 1.0}
    if asked[0] == "ratio":
        return {problem.unit: asked[1]}
    return dict(BYTE_UNITS if asked[0] == "bytes" else TIME_UNITS)


def _unit_spellings(problem: Problem, sizes: Mapping[str, float]) -> dict[str, str]:
    """Lower-case spellings of the units in ``sizes`` (``"gib"``, ``"msec"``), each to its unit."""
    spellings = {spelling: unit for spelling, unit in _UNIT_ALIASES.items() if unit in sizes}
    spellings.update(dict.fromkeys(_COUNTING_UNITS.get(problem.unit, ()), problem.unit))
    return spellings


def _read_number(
    problem: Problem, contract: Mapping[str, Any], reading: Reading
) -> tuple[float, str, str]:
    """The answer in SI units, a note when it was given in another unit, and that unit.

    The unit is empty when the answer carries none or carries the one asked.
    """
    expected = problem.answer_format()
    size = contract["units"][problem.unit]
    if reading.kind == NUMBER:
        return float(reading.value) * size, "", ""
    if reading.kind == TEXT:
        return _read_number_text(problem, contract, reading.value, expected)
    raise _Unreadable(_not_read(reading, expected))


def _not_read(reading: Reading, expected: str) -> str:
    """Why an answer that is neither blank, a number nor a text cannot be read."""
    why = reading.why
    if why == "too long":
        return _MESSAGES["too_long"].format(
            count=reading.count, limit=MAX_ANSWER_CHARS, expected=expected
        )
    if why == "yes/no":
        return f"the answer {reading.shown} is a yes/no value; expected {expected}."
    if why == "not finite":
        return f"the answer {reading.shown} is not a finite number; expected {expected}."
    if why == "too large":
        return f"the answer is too large to read; expected {expected}."
    if why == "complex":
        return f"the answer {reading.shown} is a complex number; expected {expected}."
    kind = reading.type_name
    if why == "container":
        count = reading.count
        return (
            f"the answer is a {kind} of {count} item{'' if count == 1 else 's'}; give one "
            f"value on its own, not inside a {kind}; expected {expected}."
        )
    return f"the answer is an object of type {kind!r}; expected {expected}."


def _read_number_text(
    problem: Problem, contract: Mapping[str, Any], text: str, expected: str
) -> tuple[float, str]:
    stripped = text.strip()
    quoted = _quote(text)
    match = _NUMBER_AT_START.match(stripped)
    if not match:
        raise _Unreadable(_MESSAGES["no_number"].format(text=quoted, expected=expected))
    digits, written = match.group(0), stripped[match.end() :].strip()
    if "," in digits:
        if not _THOUSANDS.fullmatch(digits):
            raise _Unreadable(_MESSAGES["decimal_comma"].format(text=quoted, expected=expected))
        digits = digits.replace(",", "")
    value = float(digits.replace("_", ""))
    if not math.isfinite(value):
        raise _Unreadable(_MESSAGES["text_not_finite"].format(text=quoted, expected=expected))
    sizes = contract["units"]
    if not written:
        return value * sizes[problem.unit], "", ""
    unit = contract["spellings"].get(written.casefold())
    if unit is None:
        other = _UNIT_ALIASES.get(written.casefold())
        if other is None:
            raise _Unreadable(
                _MESSAGES["unknown_unit"].format(
                    text=quoted, unit=_quote(written), known=_KNOWN_UNITS, expected=expected
                )
            )
        raise _Unreadable(
            _MESSAGES["wrong_dimension"].format(text=quoted, unit=other, expected=expected)
        )
    value_si = value * sizes[unit]
    if unit == problem.unit:
        return value_si, "", ""
    note = _MESSAGES["converted"].format(
        text=_quote(stripped), value=value_si / sizes[problem.unit], unit=problem.unit
    )
    return value_si, note, unit


def _written_unit_verdict(
    problem: Problem, contract: Mapping[str, Any], value_si: float, written: str
) -> dict[str, str]:
    """The verdict on an answer whose number is right in one unit but written with another.

    ``"7.23 us"`` for an answer of 7.23 ms falls on the rule of the answer
    given in s (its value, 7.23e-6 s, is the answer's number taken in ms).
    That rule speaks of a bare number; this one says what happened: the
    number is the answer in ms, and the unit written after it is not ms.
    Without a unit whose size makes the number right, the general hint.
    """
    sizes = contract["units"]
    number = value_si / sizes[written]
    ref = contract["reference"]
    for other, size in sizes.items():
        if other != written and abs(number * size - ref) <= _MATCH_RTOL * abs(ref):
            message = _MESSAGES["unit_written"].format(other=other, written=written)
            return _verdict(
                WRONG, f"written in {written}", message, _mistake_id(problem, "unit-written")
            )
    return contract["otherwise"]


def _choice_expected(letters: str) -> str:
    """How a multiple-choice answer should be written, in words."""
    return _MESSAGES["choice_expected"].format(letters=", ".join(letters))


def _read_letter(reading: Reading, letters: str) -> str:
    expected = _choice_expected(letters)
    if reading.kind == OTHER and reading.why == "too long":
        raise _Unreadable(_not_read(reading, expected))
    if reading.kind != TEXT:
        raise _Unreadable(f"got {reading.shown}; expected {expected}.")
    match = _LETTER.fullmatch(reading.value.strip())
    if not match or match.group(1).casefold() not in letters:
        raise _Unreadable(
            _MESSAGES["not_a_choice"].format(text=_quote(reading.value), expected=expected)
        )
    return match.group(1).casefold()


# ---------------------------------------------------------------- the rules


def _verdict(status: str, name: str, message: str, mistake: str = "") -> dict[str, str]:
    """A verdict as :func:`page_contract` ships it."""
    return {"status": status, "name": name, "message": message, "mistake": mistake}


def _rule(
    status: str, name: str, message: str, value: float, tolerance: float, mistake: str = ""
) -> dict[str, Any]:
    """A verdict given to any answer (in SI units) within ``tolerance`` of ``value``."""
    return {**_verdict(status, name, message, mistake), "value": value, "tolerance": tolerance}


def _near(
    status: str, name: str, message: str, value: float, rtol: float, mistake: str = ""
) -> dict[str, Any]:
    """A verdict given to any answer within ``rtol`` of ``value``, relative to ``value``."""
    return _rule(status, name, message, value, rtol * abs(value), mistake)


def _mistake_id(problem: Problem, slug: str) -> str:
    """The stable id of a mistake or a unit mix-up of ``problem`` (``"q07.unit-kb"``)."""
    return mistake_id(problem.qid, slug)


def _overlap(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True when either rule's value lies within the other's tolerance."""
    return abs(a["value"] - b["value"]) <= max(a["tolerance"], b["tolerance"])


def _separated(right: dict[str, Any], wrong: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The wrong rules of one variant, none within another's tolerance or the right answer's.

    A rule whose value the right answer's tolerance takes in is left out: in
    this variant that mistake is graded right, so it is no mistake. (A
    mistake's own tolerance may take in the right answer, when a problem asks
    for more precision than the mistake is off by: the right rule comes
    first, so the right answer stays right.) A rule whose value meets an
    earlier one's is folded into it: its hint is added to the earlier
    message and its id joined to the earlier one with ``+``, so the verdict
    never names one mistake when two give the same number.
    """
    kept: list[dict[str, Any]] = []
    for rule in wrong:
        if abs(rule["value"] - right["value"]) <= right["tolerance"]:
            continue
        twin = next((i for i, other in enumerate(kept) if _overlap(rule, other)), None)
        if twin is None:
            kept.append(dict(rule))
            continue
        earlier = kept[twin]
        earlier["message"] += _MESSAGES["coincide"].format(hint=rule["message"])
        earlier["mistake"] += "+" + rule["mistake"]
    return kept


def _right_tolerance(problem: Problem, ref: float, size: float) -> float:
    """How far from the reference (SI units) an answer is right.

    With decimals asked: half a unit in the last place (widened by a hair for
    floating-point error) or 0.1 % of the reference, whichever is wider.
    """
    if problem.decimals is None:
        return problem.rtol * abs(ref)
    half_unit = 0.5 * 10.0 ** (-problem.decimals) * (1 + _HALF_UNIT_SLACK) * size
    return max(half_unit, _DECIMALS_RTOL * abs(ref))


def _unit_mixup_hint(problem: Problem, other: str) -> str:
    """What to tell a student whose number is the answer in ``other`` (bytes or time)."""
    if other == _TWINS.get(problem.unit):
        template = "twin_unit"
    elif units_of(problem.unit)[0] == "time":
        template = "time_unit"
    else:
        template = "other_unit"
    return _MESSAGES[template].format(other=other, unit=problem.unit)


def _unit_mixups(problem: Problem, ref: float, sizes: Mapping[str, float]) -> list[dict[str, Any]]:
    """The answer given in another unit of the same kind, its number taken in the asked unit."""
    size = sizes[problem.unit]
    return [
        _near(
            WRONG,
            f"in {other}",
            _unit_mixup_hint(problem, other),
            ref / other_size * size,
            _MATCH_RTOL,
            _mistake_id(problem, f"unit-{other.casefold()}"),
        )
        for other, other_size in sizes.items()
        if other != problem.unit
    ]


def _number_rules(
    problem: Problem, ref: float, known: list[Mistake], sizes: Mapping[str, float]
) -> list[dict[str, Any]]:
    """In order: right, the answer in another unit, each known mistake, close."""
    size = sizes[problem.unit]
    right = _MESSAGES["right"].format(ref=f"{ref / size:.6g}", unit=problem.unit)
    within = max(problem.rtol, _MATCH_RTOL)
    right_rule = _rule(RIGHT, "right", right, ref, _right_tolerance(problem, ref, size))
    wrong = [
        *_unit_mixups(problem, ref, sizes),
        *(
            _near(
                WRONG, f"mistake {i}", m.hint, m.value * size, within, _mistake_id(problem, m.slug)
            )
            for i, m in enumerate(known, start=1)
        ),
    ]
    return [
        right_rule,
        *_separated(right_rule, wrong),
        _near(CLOSE, "close", _MESSAGES["close"], ref, problem.close_rtol),
    ]


def _count_rules(problem: Problem, ref: float, known: list[Mistake]) -> list[dict[str, Any]]:
    """In order: right, each known mistake, one off, and a fraction above the answer (close)."""
    right = _MESSAGES["right"].format(ref=int(ref), unit=problem.unit)
    off_by_one = _MESSAGES["off_by_one"]
    right_rule = _rule(RIGHT, "right", right, ref, 0.0)
    wrong = [
        _rule(WRONG, f"mistake {i}", m.hint, float(m.value), 0.0, _mistake_id(problem, m.slug))
        for i, m in enumerate(known, 1)
    ]
    return [
        right_rule,
        *_separated(right_rule, wrong),
        _rule(CLOSE, "off by one", off_by_one, ref + 1, 0.0, _mistake_id(problem, "off-by-one")),
        _rule(CLOSE, "off by one", off_by_one, ref - 1, 0.0, _mistake_id(problem, "off-by-one")),
        # Anything strictly between ref and ref + 1 (both ends are taken above).
        _rule(
            CLOSE,
            "round down",
            _MESSAGES["round_down"],
            ref + 0.5,
            0.5,
            _mistake_id(problem, "round-down"),
        ),
    ]


def _page_verdicts(qid: str, expected: str, reads: str) -> dict[str, dict[str, str]]:
    """What the static page says to a blank answer, to one it cannot read, and to a long one."""
    return {
        "unanswered": _verdict(
            UNANSWERED, "", _MESSAGES["page_unanswered"].format(expected=expected)
        ),
        "unreadable": _verdict(
            UNREADABLE, "", _MESSAGES["page_unreadable"].format(reads=reads, qid=qid)
        ),
        "too_long": _verdict(
            UNREADABLE, "", _MESSAGES["page_too_long"].format(limit=MAX_ANSWER_CHARS)
        ),
    }


def _in_words(items: str) -> str:
    """``"abcd"`` as ``"a, b, c or d"``."""
    return ", ".join(items[:-1]) + f" or {items[-1]}" if len(items) > 1 else items


def _page_number_expected(problem: Problem, sizes: Mapping[str, float]) -> str:
    """How to type a number into the page's box, in the page's words (no Python strings)."""
    if problem.kind == "count":
        return f"a whole number of {problem.unit}, e.g. 3"
    if problem.unit == "x":
        return "a ratio, e.g. 1.5"
    places = ""
    if problem.decimals is not None:
        places = f" to {problem.decimals} decimal place{'' if problem.decimals == 1 else 's'}"
    example = _TWINS.get(problem.unit) or next((u for u in sizes if u != problem.unit), "")
    with_unit = _MESSAGES["page_with_unit"].format(example=example) if example else ""
    return _MESSAGES["page_number_expected"].format(
        unit=problem.unit, places=places, with_unit=with_unit
    )


def _number_contract(qid: str, problem: Problem, p: Params, known: list[Mistake]) -> dict[str, Any]:
    sizes = _unit_sizes(problem)
    ref = float(problem.reference(p)) * sizes[problem.unit]
    if problem.kind == "count":
        rules = _count_rules(problem, ref, known)
    else:
        rules = _number_rules(problem, ref, known, sizes)
    expected = _page_number_expected(problem, sizes)
    units = (
        f"the unit {problem.unit}" if len(sizes) == 1 else "one of the units " + ", ".join(sizes)
    )
    reads = _MESSAGES["page_reads_number"].format(units=units)
    return {
        "kind": problem.kind,
        "unit": problem.unit,
        "expected": expected,
        "reference": ref,
        "units": sizes,
        "spellings": _unit_spellings(problem, sizes),
        "rules": rules,
        "unit_written": {
            "message": _MESSAGES["unit_written"],
            "name": "written in {written}",
            "mistake": _mistake_id(problem, "unit-written"),
            "rtol": _MATCH_RTOL,
        },
        "otherwise": _verdict(WRONG, "hint", _MESSAGES["hint"].format(hint=problem.hint)),
        **_page_verdicts(qid, expected, reads),
    }


def _choice_contract(qid: str, problem: Problem, p: Params) -> dict[str, Any]:
    options = problem.choices(p) if problem.choices else []
    letters = _LETTERS[: len(options)]
    choices = {}
    for letter, option in zip(letters, options, strict=True):
        why = re.sub(r"^(Right|No): ", "", option.why)
        status = RIGHT if option.correct else WRONG
        choices[letter] = _verdict(status, f"choice {letter}", why[:1].upper() + why[1:])
    expected = _MESSAGES["page_choice_expected"].format(letters=_in_words(letters))
    return {
        "kind": problem.kind,
        "unit": problem.unit,
        "expected": expected,
        "letters": letters,
        "choices": choices,
        **_page_verdicts(qid, expected, expected),
    }


def _problem_contract(qid: str, student: object) -> dict[str, Any]:
    """Every verdict problem ``qid`` can give one student, and when (see :func:`page_contract`)."""
    problem = get_problem(qid)
    p = params(qid, student)
    if problem.kind == "choice":
        return _choice_contract(qid, problem, p)
    return _number_contract(qid, problem, p, mistakes(qid, student))


def _first_match(contract: Mapping[str, Any], value: float) -> dict[str, str]:
    """The first of the contract's rules that ``value`` (SI units) meets, else its fallback."""
    for rule in contract["rules"]:
        if abs(value - rule["value"]) <= rule["tolerance"]:
            return rule
    return contract["otherwise"]


def page_contract() -> dict[str, Any]:
    """Everything the static site's self-check needs to give :func:`check`'s verdicts.

    For the book's version of every problem (no student ID), as JSON-able
    data: the page reads a number and a unit, or a letter, and shows the
    verdict found here. Every message is written out in full; :func:`check`
    gives the same verdicts from the same rules.

    Returns
    -------
    dict
        ``look``: status -> ``[colour, symbol]``, how a verdict is shown.
        ``max_chars``: the longest answer read (:data:`~lesson_lib.coursework.answers.MAX_ANSWER_CHARS`);
        a longer one gets the problem's ``too_long`` verdict, whatever it holds.
        ``problems``: problem id -> its entry, with ``kind`` (``"number"``,
        ``"count"`` or ``"choice"``), ``unit``, ``expected`` (how to write
        the answer, in words), and the page's own verdicts ``unanswered``
        (a blank answer), ``unreadable`` (an answer the page cannot read:
        use ``check()`` in a notebook) and ``too_long``. A verdict is a dict of ``status``,
        ``name`` (the rule: see ``rule`` of :class:`CheckResult`) and ``message``.

        Numbers and counts add ``reference`` (the answer in SI units: bytes,
        seconds, or the count or ratio itself), ``units`` (unit -> its size
        in SI units, the units an answer may carry), ``spellings``
        (lower-case spelling -> unit), ``rules`` (verdicts with a ``value``
        and a ``tolerance`` in SI units: an answer gets the first rule it is
        within ``tolerance`` of, in order: right, the answer in another unit,
        each known mistake, close; for a count: right, each known mistake,
        one off, a fraction above) and ``otherwise`` (the verdict when no
        rule matches). Multiple choice adds ``letters`` and ``choices``
        (letter -> verdict).

    Examples
    --------
    >>> contract = page_contract()
    >>> contract["problems"]["q1"]["units"]["GB"]
    1000000000.0
    >>> contract["problems"]["q4"]["choices"]["c"]["status"]
    'right'
    """
    return {
        "look": {status: list(look) for status, look in _LOOK.items()},
        "max_chars": MAX_ANSWER_CHARS,
        "problems": {qid: _problem_contract(qid, None) for qid in PROBLEMS},
    }


def check(
    qid: object, answer: object, student: object = None, *, close_credit: float = CLOSE_CREDIT
) -> CheckResult:
    """Check one answer against the reference for this student's variant.

    Never raises: a missing, odd or unreadable answer gets a result that says
    what was expected.

    Parameters
    ----------
    qid : str
        Problem id, ``"q1"`` .. ``"q12"`` (``3`` or ``"Q3"`` work too).
    answer : object
        A number in the unit the problem asks for, a string with a unit
        (``"1.875 MiB"``, converted if it is another unit of the same kind),
        or a letter for multiple choice. None or ``...`` mean not answered yet.
    student : str, optional
        Student ID; None checks against the book's version.
    close_credit : float, default :data:`CLOSE_CREDIT`
        The share of the problem's points a close answer earns, 0 to 1 (the
        instructor's setting; bad values raise, unlike bad answers).

    Returns
    -------
    CheckResult
        Status, message and score; shows itself nicely in a notebook.

    Raises
    ------
    ValueError
        If ``close_credit`` is outside 0 to 1.

    Examples
    --------
    >>> check("q1", None).status
    'not answered yet'
    >>> check("q1", "lots").status
    'unreadable'
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
        return _result(
            label,
            UNREADABLE,
            f"The checker could not handle this answer ({type_name(err)}). "
            "Please tell your instructor.",
            given,
        )


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
    return CheckResult(qid, status, _capped(message), score, given, rule, mistake, points)


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
        return _result(
            label,
            UNREADABLE,
            f"There is no problem {label}; the ids are {', '.join(PROBLEMS)}.",
            given,
        )
    problem = get_problem(key)
    try:
        normalize_student(student)
    except (TypeError, ValueError) as err:
        return _result(key, UNREADABLE, f"Student ID problem: {err}.", given)
    if reading.kind == BLANK:
        expected = problem.answer_format()
        return _result(
            key, UNANSWERED, _MESSAGES["unanswered"].format(qid=key, expected=expected), given
        )
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
    """Raised by a caller's timer to stop :func:`check`, which lets it through.

    The grader checks each answer with a time limit (``signal.setitimer``);
    this is what its handler raises. ``check()`` catches everything else an
    answer can raise, so it must know this one.
    """


def _label(qid: object) -> str:
    """How to name ``qid`` in a result: itself if a short string or int, else its type.

    Never the object's own ``repr`` or ``str``, which could raise or never return.
    """
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
        except KeyboardInterrupt:
            raise
        except BaseException:  # a namespace that is not a plain mapping
            answer = None
        results[qid] = check(qid, answer, student)
    return Report(results)
