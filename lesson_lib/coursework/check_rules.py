"""Each problem's verdicts as one table of rules, which the static site's self-check shares.

A number read in SI units gets the first rule it is within the tolerance of (a wrong one only if
nearer its value than the reference): right, the answer in another unit, each known mistake, close
(for a count: right, each known mistake, one off, a fraction above).
:func:`~lesson_lib.coursework.check.page_contract` gives the static page the book's tables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lesson_lib.coursework.answers import MAX_ANSWER_CHARS
from lesson_lib.coursework.check_messages import (
    CLOSE,
    MESSAGES,
    RIGHT,
    UNANSWERED,
    UNREADABLE,
    WRONG,
)
from lesson_lib.coursework.check_reading import _unit_sizes, _unit_spellings
from lesson_lib.coursework.problems import _mistakes, get_problem, params, units_of
from lesson_lib.coursework.problems.bank import LETTERS, Mistake, Params, Problem, mistake_id

_TWINS = {"KB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB"}
_TWINS.update({v: k for k, v in _TWINS.items()})

#: Relative distance within which an answer is taken for a unit mix-up or a
#: known mistake (at least; a problem's own tolerance may be wider).
_MATCH_RTOL = 0.01


def _written_unit_verdict(
    problem: Problem, contract: Mapping[str, Any], value_si: float, written: str
) -> dict[str, str]:
    """The verdict on a number right in one unit but written with another (``"7.23 us"`` for 7.23 ms
    falls on the rule of the answer given in s): it says the number is the answer in ms and the unit
    written is not; without a unit that makes the number right, the general hint."""
    sizes = contract["units"]
    number = value_si / sizes[written]
    ref = contract["reference"]
    for other, size in sizes.items():
        if other != written and abs(number * size - ref) <= _MATCH_RTOL * abs(ref):
            message = MESSAGES["unit_written"].format(other=other, written=written)
            return _verdict(
                WRONG, f"written in {written}", message, mistake_id(problem.qid, "unit-written")
            )
    return contract["otherwise"]


def _verdict(status: str, name: str, message: str, mistake: str = "") -> dict[str, str]:
    """A verdict as :func:`~lesson_lib.coursework.check.page_contract` ships it."""
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


def _overlap(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True when either rule's value lies within the other's tolerance."""
    return abs(a["value"] - b["value"]) <= max(a["tolerance"], b["tolerance"])


def _separated(right: dict[str, Any], wrong: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The wrong rules of one variant, none within another's tolerance or the right answer's.

    A rule the right answer's tolerance takes in is left out (in this variant that mistake is graded
    right; the right rule comes first, so the right answer stays right). A rule whose value meets an
    earlier one's is folded into it, hint added and id joined with ``+``, so a verdict never names
    one mistake when two give the same number."""
    kept: list[dict[str, Any]] = []
    for rule in wrong:
        if abs(rule["value"] - right["value"]) <= right["tolerance"]:
            continue
        twin = next((i for i, other in enumerate(kept) if _overlap(rule, other)), None)
        if twin is None:
            kept.append(dict(rule))
            continue
        earlier = kept[twin]
        earlier["message"] += MESSAGES["coincide"].format(hint=rule["message"])
        earlier["mistake"] += "+" + rule["mistake"]
    return kept


def _unit_mixup_hint(problem: Problem, other: str) -> str:
    """What to tell a student whose number is the answer in ``other`` (bytes or time)."""
    if other == _TWINS.get(problem.unit):
        template = "twin_unit"
    elif units_of(problem.unit)[0] == "time":
        template = "time_unit"
    else:
        template = "other_unit"
    return MESSAGES[template].format(other=other, unit=problem.unit)


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
            mistake_id(problem.qid, f"unit-{other.casefold()}"),
        )
        for other, other_size in sizes.items()
        if other != problem.unit
    ]


def _rules(
    problem: Problem, ref: float, known: list[Mistake], sizes: Mapping[str, float]
) -> list[dict[str, Any]]:
    """In order: right, the answer in another unit, each known mistake, close (for a count, whose
    only unit is its own and whose mistakes are exact: one off, or a fraction above the answer)."""
    size = sizes[problem.unit]
    right = MESSAGES["right"].format(ref=f"{ref / size:.6g}", unit=problem.unit)
    low, high = problem.right_band(ref / size)
    right_rule = _rule(RIGHT, "right", right, (low + high) / 2 * size, (high - low) / 2 * size)
    within = 0.0 if problem.kind == "count" else max(problem.rtol, _MATCH_RTOL)
    wrong = _unit_mixups(problem, ref, sizes) + [
        _near(
            WRONG, f"mistake {i}", m.hint, m.value * size, within, mistake_id(problem.qid, m.slug)
        )
        for i, m in enumerate(known, start=1)
    ]
    rules = [right_rule, *_separated(right_rule, wrong)]
    if problem.kind != "count":
        return [*rules, _near(CLOSE, "close", MESSAGES["close"], ref, problem.close_rtol)]
    off_by_one = MESSAGES["off_by_one"]
    one_off, round_down = (mistake_id(problem.qid, slug) for slug in ("off-by-one", "round-down"))
    return [
        *rules,
        _rule(CLOSE, "off by one", off_by_one, ref + 1, 0.0, one_off),
        _rule(CLOSE, "off by one", off_by_one, ref - 1, 0.0, one_off),
        # Anything strictly between ref and ref + 1 (both ends are taken above).
        _rule(CLOSE, "round down", MESSAGES["round_down"], ref + 0.5, 0.5, round_down),
    ]


def _page_verdicts(qid: str, expected: str, reads: str) -> dict[str, dict[str, str]]:
    """What the static page says to a blank answer, to one it cannot read, and to a long one."""
    said = {
        "unanswered": (UNANSWERED, MESSAGES["page_unanswered"].format(expected=expected)),
        "unreadable": (UNREADABLE, MESSAGES["page_unreadable"].format(reads=reads, qid=qid)),
        "too_long": (UNREADABLE, MESSAGES["page_too_long"].format(limit=MAX_ANSWER_CHARS)),
    }
    return {key: _verdict(status, "", message) for key, (status, message) in said.items()}


def _in_words(items: str) -> str:
    """``"abcd"`` as ``"a, b, c or d"``."""
    return ", ".join(items[:-1]) + f" or {items[-1]}" if len(items) > 1 else items


def _page_number_expected(problem: Problem, sizes: Mapping[str, float]) -> str:
    """How to type a number into the page's box, in the page's words (no Python strings)."""
    if problem.kind == "count":
        return f"a whole number of {problem.unit}, e.g. 3"
    if problem.unit == "x":
        return f"a ratio, {problem.precision()}, e.g. 1.5"
    example = _TWINS.get(problem.unit) or next((u for u in sizes if u != problem.unit), "")
    with_unit = MESSAGES["page_with_unit"].format(example=example) if example else ""
    return MESSAGES["page_number_expected"].format(
        unit=problem.unit, precision=problem.precision(), with_unit=with_unit
    )


def _number_contract(qid: str, problem: Problem, p: Params) -> dict[str, Any]:
    sizes = _unit_sizes(problem)
    answer = float(problem.reference(p))
    ref = answer * sizes[problem.unit]
    expected = _page_number_expected(problem, sizes)
    units = (
        f"the unit {problem.unit}" if len(sizes) == 1 else "one of the units " + ", ".join(sizes)
    )
    reads = MESSAGES["page_reads_number"].format(units=units)
    return {
        "expected": expected,
        "reference": ref,
        "units": sizes,
        "spellings": _unit_spellings(problem, sizes),
        "rules": _rules(problem, ref, _mistakes(problem, p, answer), sizes),
        "unit_written": {
            "message": MESSAGES["unit_written"],
            "name": "written in {written}",
            "mistake": mistake_id(problem.qid, "unit-written"),
            "rtol": _MATCH_RTOL,
        },
        "otherwise": _verdict(WRONG, "hint", MESSAGES["hint"].format(hint=problem.hint)),
        **_page_verdicts(qid, expected, reads),
    }


def _choice_contract(qid: str, problem: Problem, p: Params) -> dict[str, Any]:
    options = problem.choices(p) if problem.choices else []
    letters = LETTERS[: len(options)]
    choices = {}
    for letter, option in zip(letters, options, strict=True):
        why = re.sub(r"^(Right|No): ", "", option.why)
        status = RIGHT if option.correct else WRONG
        choices[letter] = _verdict(status, f"choice {letter}", why[:1].upper() + why[1:])
    expected = MESSAGES["page_choice_expected"].format(letters=_in_words(letters))
    return {
        "expected": expected,
        "letters": letters,
        "choices": choices,
        **_page_verdicts(qid, expected, expected),
    }


def _problem_contract(qid: str, student: object) -> dict[str, Any]:
    """Every verdict problem ``qid`` can give one student, and when (see :func:`page_contract`)."""
    problem = get_problem(qid)
    contract = _choice_contract if problem.kind == "choice" else _number_contract
    own = contract(qid, problem, params(qid, student))
    return {"kind": problem.kind, "unit": problem.unit, **own}


def _first_match(contract: Mapping[str, Any], value: float) -> dict[str, str]:
    """The first of the contract's rules that ``value`` (SI units) meets, else its fallback: within
    its tolerance and, for a wrong one, nearer its value than the reference (a right answer or a
    slip is never taken for a mistake it is farther from)."""
    for rule in contract["rules"]:
        off = abs(value - rule["value"])
        if off <= rule["tolerance"] and (
            rule["status"] != WRONG or off < abs(value - contract["reference"])
        ):
            return rule
    return contract["otherwise"]
