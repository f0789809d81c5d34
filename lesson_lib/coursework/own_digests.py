"""Salted digests of one variant's verdicts, and the data cells that carry them (with, in one notebook
for the class, each student's statements), keyed by the ID hashed with a pepper drawn from the salt.

Stored: SHA-256 of pepper, key, problem and a number at fixed decimal places, for every grid value
whose whole rounding interval the grader gives one verdict (right, or one named mistake). A typed
answer, written so at a few place counts, matches only such a value: a match is the grader's own
verdict; an answer within a grid step of a tolerance's edge matches nothing ("not matched") though
the grader may call it right. Counts match exactly; multiple choice (five letters) is not digested.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import zlib
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from lesson_lib.coursework.check_messages import RIGHT
from lesson_lib.coursework.check_rules import _MATCH_RTOL, _first_match, _problem_contract
from lesson_lib.coursework.problems import PROBLEMS, get_problem, show
from lesson_lib.coursework.problems.bank import Problem, _exponent
from lesson_lib.coursework.variants import salted

#: Bytes of a stored digest, so a chance match among a problem's hundred is below 1e-9.
DIGEST_BYTES = 5
#: Margin around a grid interval, in grid steps: far below the right band's own widening (half a
#: step x 1e-9), so a value rounded at the stated precision is never refused for float error.
_MARGIN = 1e-12
#: Longest data cell in characters (the grader reads cells of up to 200,000 for answer lookups).
MAX_DATA_CHARS = 150_000


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
    """Decimal places of the grid near ``value`` (None for 0 or a value beyond floats): the stated
    ones, else at least 2 steps in a right answer's tolerance and 1 in a mistake's (a finer grid
    matches answers nearer its edge, a coarser one stores fewer digests)."""
    if problem.kind == "count":
        return 0
    if not math.isfinite(value) or value == 0:
        return None
    if right and problem.decimals is not None:
        return problem.decimals
    if right and problem.sig_figs is not None:
        return problem.sig_figs - 1 - _exponent(value)
    rtol, steps = (problem.rtol, 2) if right else (max(problem.rtol, _MATCH_RTOL), 1)
    return math.ceil(-math.log10(rtol * abs(value) / steps))


def _written(value: float | Decimal, places: int) -> str | None:
    """``value`` rounded half-even to ``places`` decimals (negative: tens...), as plain text."""
    try:
        number = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
        return format(number.quantize(Decimal(1).scaleb(-places), ROUND_HALF_EVEN), "f")
    except (InvalidOperation, ValueError, OverflowError):  # beyond the decimal context
        return None


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
        return [(0, str(round(target)), _first_match(contract, round(target) * size))]
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
    right, mistakes = "", []
    for rule in contract["rules"]:
        is_right = rule["status"] == RIGHT
        if is_right or rule["name"].startswith("mistake"):
            grid = _grid(
                problem, contract, rule["value"] / size, rule["tolerance"] / size, is_right
            )
            found = {_digest(pepper, key, qid, p, t) for p, t, said in grid if t and said is rule}
            if is_right:
                right = "".join(sorted(found))
            else:
                mistakes.append([rule["mistake"], rule["message"], "".join(sorted(found))])
    return {"right": right, "mistakes": mistakes}


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
        width = 2 * DIGEST_BYTES
        held = {digests[i : i + width] for i in range(0, len(digests), width)}
        if any(_digest(pepper, key, qid, *t) in held for t in tried if t[1] is not None):
            return label
    return None


def data_cells(students: Sequence[str], salt: str, *, statements: bool, digests: bool) -> list[str]:
    """The sources that load an edition's data (:func:`~lesson_lib.coursework.own_check.load_edition`),
    each under :data:`MAX_DATA_CHARS`; no salt, answer, name or e-mail is in them.

    Parameters
    ----------
    students : sequence of str
        Normalised student IDs.
    salt : str
        The course salt the variants are drawn with.
    statements, digests : bool
        Store each student's statements (a class notebook), and their :func:`variant_digests`.

    Returns
    -------
    list of str
    """
    # one-way from the salt: the same edition twice is the same file, and the salt stays unknown
    pepper, entries = hashlib.sha256(f"{salt}/self-check pepper".encode()).hexdigest()[:32], {}
    with salted(salt):
        for sid in students:
            entry = {"statements": {q: str(show(q, sid)) for q in PROBLEMS}} if statements else {}
            if digests:
                checks = {qid: variant_digests(qid, sid, pepper) for qid in PROBLEMS}
                entry["checks"] = {qid: c for qid, c in checks.items() if c is not None}
            entries[student_key(pepper, sid)] = entry
    return _cells(pepper, entries) if entries and (statements or digests) else []


def _cells(pepper: str, entries: dict[str, Any]) -> list[str]:
    """``entries`` in as few halvings as keep each cell under :data:`MAX_DATA_CHARS`."""
    raw = json.dumps({"pepper": pepper, "students": entries}, separators=(",", ":"))
    data = base64.encodebytes(zlib.compress(raw.encode(), 9)).decode()  # lines of 76
    if len(data) <= MAX_DATA_CHARS or len(entries) == 1:
        return [f'from {__package__}.own_check import load_edition\n\nload_edition("""\n{data}""")']
    keys = list(entries)
    halves = keys[: len(keys) // 2], keys[len(keys) // 2 :]
    return [cell for half in halves for cell in _cells(pepper, {k: entries[k] for k in half})]
