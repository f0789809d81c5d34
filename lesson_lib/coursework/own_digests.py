"""Salted digests of one variant's verdicts, so a notebook can check its own numbers without holding
the answers or the course salt.

For each problem the edition digests (SHA-256 of a random per-edition pepper, the student's key, the
problem and a number written at a fixed number of decimal places) every grid value whose whole
rounding interval the grader gives one verdict: right, or one named mistake. A typed answer written
the same way at a few place counts is right, or that mistake, only if one of its digests is stored,
so a match is always the grader's own verdict; an answer within one grid step of a tolerance's edge
matches nothing ("not matched") though the grader may call it right. Counts match exactly; multiple
choice is never digested (five letters are no secret).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from lesson_lib.coursework.check_messages import RIGHT
from lesson_lib.coursework.check_rules import _MATCH_RTOL, _first_match, _problem_contract
from lesson_lib.coursework.problems import get_problem
from lesson_lib.coursework.problems.bank import Problem, _exponent

#: Bytes of a stored digest: a chance match among a problem's hundred is below 1e-9.
DIGEST_BYTES = 5
#: Grid steps per tolerance at least (right answers, then mistakes): a finer grid matches answers
#: nearer the tolerance's edge, a coarser one stores fewer digests.
_RIGHT_STEPS, _MISTAKE_STEPS = 2, 1
#: Margin around a grid interval, in grid steps: far below the right band's own widening (half a
#: step x 1e-9), so a value rounded at the stated precision is never refused for float error.
_MARGIN = 1e-12


def student_key(pepper: str, student: str) -> str:
    """The key a student's entries are stored under: the ID salted with the edition's pepper.

    Parameters
    ----------
    pepper, student : str
        The edition's pepper (hex) and a normalised student ID.

    Returns
    -------
    str
        16 hex digits.
    """
    return hashlib.sha256(f"{pepper}/{student}".encode()).hexdigest()[:16]


def _digest(pepper: str, key: str, qid: str, places: int, text: str) -> str:
    """The digest of one grid value; the places count too ("2000" to the ten or to the unit)."""
    data = f"{pepper}/{key}/{qid}/{places}/{text}".encode()
    return hashlib.sha256(data).hexdigest()[: 2 * DIGEST_BYTES]


def _places(problem: Problem, value: float, right: bool) -> int | None:
    """Decimal places of the grid near ``value`` (None for 0 or a value beyond floats)."""
    if problem.kind == "count":
        return 0
    if not math.isfinite(value) or value == 0:
        return None
    if right and problem.decimals is not None:
        return problem.decimals
    if right and problem.sig_figs is not None:
        return problem.sig_figs - 1 - _exponent(value)
    if right:
        return math.ceil(-math.log10(problem.rtol * abs(value) / _RIGHT_STEPS))
    return math.ceil(-math.log10(max(problem.rtol, _MATCH_RTOL) * abs(value) / _MISTAKE_STEPS))


def _written(value: float | Decimal, places: int) -> str | None:
    """``value`` rounded half-even to ``places`` decimals (negative: tens...), as plain text."""
    try:
        number = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
        text = format(number.quantize(Decimal(1).scaleb(-places), ROUND_HALF_EVEN), "f")
    except (InvalidOperation, ValueError, OverflowError):
        return None
    return "0" if text.strip("-0.") == "" else text


def _one_verdict(contract: dict[str, Any], low: float, high: float, size: float) -> bool:
    """Whether the grader gives every answer from ``low`` to ``high`` (the unit asked) one verdict:
    it is constant between the rules' edges, so the edges inside and the points between are tried."""
    ref = contract["reference"]
    edges = {r["value"] + sign * r["tolerance"] for r in contract["rules"] for sign in (-1, 1)}
    edges |= {(r["value"] + ref) / 2 for r in contract["rules"] if r["status"] != RIGHT}
    points = sorted({low, high, *(e / size for e in edges if low < e / size < high)})
    points += [(a + b) / 2 for a, b in itertools.pairwise(points)]
    return len({id(_first_match(contract, x * size)) for x in points}) == 1


def _grid(
    problem: Problem, contract: dict[str, Any], target: float, width: float, right: bool
) -> list[tuple[int, str, dict[str, Any]]]:
    """Grid values near ``target`` (within ``width`` and a step) with the verdict on all of each
    one's rounding interval, as (places, text, verdict)."""
    size = contract["units"][problem.unit]
    if problem.kind == "count":
        value = round(target)
        return [(0, str(value), _first_match(contract, value * size))]
    places = _places(problem, target, right)
    if places is None:
        return []
    step = Decimal(1).scaleb(-places)
    first = math.floor((target - width) / float(step)) - 1
    found = []
    for k in range(first, math.ceil((target + width) / float(step)) + 2):
        centre = Decimal(k) * step
        low, high = float(centre - step / 2), float(centre + step / 2)
        margin = _MARGIN * float(step)
        if _one_verdict(contract, low - margin, high + margin, size):
            verdict = _first_match(contract, float(centre) * size)
            found.append((places, _written(centre, places), verdict))
    return found


def variant_digests(qid: str, student: str, pepper: str) -> dict[str, Any] | None:
    """The stored self-check of one problem for one student, drawn with the salt in use.

    Parameters
    ----------
    qid, student, pepper : str
        Problem id, normalised student ID, the edition's pepper (hex).

    Returns
    -------
    dict or None
        ``right``: digests of right answers, joined; ``mistakes``: ``[mistake id, hint, digests]``
        each. None for multiple choice.
    """
    problem = get_problem(qid)
    if problem.kind == "choice":
        return None
    contract = _problem_contract(qid, student)
    size = contract["units"][problem.unit]
    key = student_key(pepper, student)
    right: list[str] = []
    named: dict[str, list] = {}
    targets = [(r, r["status"] == RIGHT) for r in contract["rules"]]
    for rule, is_right in (t for t in targets if t[1] or t[0]["name"].startswith("mistake")):
        grid = _grid(problem, contract, rule["value"] / size, rule["tolerance"] / size, is_right)
        for places, text, verdict in grid:
            if text is None or verdict is not rule:
                continue
            digest = _digest(pepper, key, qid, places, text)
            if is_right:
                right.append(digest)
            else:
                named.setdefault(rule["mistake"], [rule["mistake"], rule["message"], []])
                named[rule["mistake"]][2].append(digest)
    mistakes = [[mid, hint, "".join(sorted(set(d)))] for mid, hint, d in named.values()]
    return {"right": "".join(sorted(set(right))), "mistakes": mistakes}


def match(entry: dict[str, Any], qid: str, value: float, pepper: str, key: str) -> str | None:
    """What a stored entry of :func:`variant_digests` says of an answer in the unit asked.

    Parameters
    ----------
    entry : dict
        The problem's stored entry.
    qid : str
    value : float
        The answer, in the problem's unit.
    pepper, key : str
        The edition's pepper and the student's :func:`student_key`.

    Returns
    -------
    str or None
        ``"right"``, the index of the mistake matched (as a string), or None: not matched.
    """
    problem = get_problem(qid)
    if problem.kind == "count" and value != round(value):
        return None
    stored = {"right": entry["right"]}
    stored.update({str(i): m[2] for i, m in enumerate(entry["mistakes"])})
    for label, digests in stored.items():
        places = _places(problem, value, label == "right")
        if places is None:
            continue
        tried = [(p, _written(value, p)) for p in (places - 1, places, places + 1)]
        if any(_found(digests, _digest(pepper, key, qid, *t)) for t in tried if t[1] is not None):
            return label
    return None


def _found(digests: str, digest: str) -> bool:
    """Whether ``digest`` is one of the joined ``digests`` (whole, never across two)."""
    width = 2 * DIGEST_BYTES
    return any(digests[i : i + width] == digest for i in range(0, len(digests), width))
