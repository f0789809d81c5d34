"""The self-check on the static site: what the browser needs to give ``check()``'s verdicts.

On the built site's Problem set page each problem has a box where a reader
types an answer and presses Check; ``tools/site/selfcheck.js`` then gives the
verdict and message :func:`~lesson_lib.coursework.check.check` gives for that
text with ``student=None`` (the book's version), with no kernel and no
network. :func:`selfcheck_data` gathers everything that script needs, computed
here by ``lesson_lib`` and written into the page as JSON by the site's Sphinx
extension (``tools/lesson_site.py``):

* per problem: the reference answer, its unit, the tolerances, the unit
  mix-ups and known mistakes with their hints, the general hint, what a
  blank answer is told, and for multiple choice the verdict on each letter;
* shared: the checker's message templates
  (:data:`~lesson_lib.coursework.check.MESSAGES`), unit names and sizes,
  the spellings it reads, its regular expressions rewritten for JavaScript,
  and the character tables Python uses to read them (Unicode white space and
  digits, case folding), so the browser reads text exactly as Python does.

Only the book's version is shipped: per-student variants still need a
notebook (``check(qid, answer, STUDENT)``).
"""

from __future__ import annotations

import json
import string
import sys
import unicodedata
from functools import cache
from typing import Any

from lesson_lib.coursework.check import (
    _ANSWER,
    _COUNTING_UNITS,
    _DECIMALS_RTOL,
    _KNOWN_UNITS,
    _LETTER,
    _LOOK,
    _MATCH_RTOL,
    _THOUSANDS,
    _UNIT_ALIASES,
    CLOSE,
    MESSAGES,
    RIGHT,
    UNANSWERED,
    UNREADABLE,
    WRONG,
    _abs_tolerance,
    _choice_expected,
    _choice_letters,
    _unit_mixups,
    check,
)
from lesson_lib.coursework.problems import PROBLEMS, mistakes, reference, units_of
from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS

__all__ = ["js_pattern", "selfcheck_data", "selfcheck_json", "template_fields"]

#: Format specs and conversions the browser's template filler understands.
SUPPORTED_SPECS = ("", ".6g")
SUPPORTED_CONVERSIONS = (None, "r")


@cache
def _whitespace() -> str:
    """Every character Python's ``str.isspace`` (and so ``\\s`` and ``str.strip``) accepts."""
    return "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())


@cache
def _digit_zeros() -> tuple[int, ...]:
    """Code points of the Unicode digit zeros; each is followed by its digits 1 to 9.

    These are the characters Python's ``\\d`` matches and ``float`` reads.
    """
    decimals = [c for c in range(sys.maxunicode + 1) if chr(c).isdecimal()]
    zeros = tuple(c for c in decimals if unicodedata.decimal(chr(c)) == 0)
    blocks = {z + i for z in zeros for i in range(10)}
    if blocks != set(decimals) or any(
        unicodedata.decimal(chr(z + i)) != i for z in zeros for i in range(10)
    ):  # pragma: no cover - true of every Unicode version so far
        raise RuntimeError("Unicode digits no longer come in runs of ten from zero")
    return zeros


def _ranges(codes: list[int]) -> str:
    """A regex character-class body (without brackets) matching exactly ``codes``."""
    out = []
    codes = sorted(codes)
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        first, last = chr(codes[i]), chr(codes[j])
        for ch in (first, last):
            if ch in "\\]^-[":  # pragma: no cover - no digit or space is one of these
                raise ValueError(f"{ch!r} needs escaping in a character class")
        out.append(first if i == j else f"{first}-{last}")
        i = j + 1
    return "".join(out)


def _digit_class() -> str:
    return _ranges([z + i for z in _digit_zeros() for i in range(10)])


def _space_class() -> str:
    return _ranges([ord(c) for c in _whitespace()])


def js_pattern(pattern: str) -> str:
    """Rewrite one of the checker's regular expressions so JavaScript reads it as Python does.

    Python's ``\\d`` and ``\\s`` match Unicode digits and white space, and
    ``.`` anything but a newline; JavaScript's differ. They become explicit
    character classes built from Python's own tables. The result is valid in
    both languages (for JavaScript with the ``u`` flag) and matches the same
    strings; it is used with a full match.

    Parameters
    ----------
    pattern : str
        A Python pattern using only ``\\d``, ``\\s``, ``\\S``, ``.``, escaped
        punctuation, groups, classes and quantifiers.

    Returns
    -------
    str
        The same pattern with those classes spelled out.

    Raises
    ------
    ValueError
        For an escape this rewrite does not know.
    """
    digits, spaces = _digit_class(), _space_class()
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt == "d":
                out.append(digits if in_class else f"[{digits}]")
            elif nxt == "s":
                out.append(spaces if in_class else f"[{spaces}]")
            elif nxt == "S" and not in_class:
                out.append(f"[^{spaces}]")
            elif nxt and nxt in "().[]{}?*+|^$\\/":
                out.append("\\" + nxt)
            else:
                raise ValueError(f"no JavaScript twin for \\{nxt} in {pattern!r}")
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
        elif ch == ".":
            out.append("[^\\n]")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


@cache
def _case_folds() -> dict[str, str]:
    """``str.casefold`` for the characters that matter to reading a unit.

    A unit is looked up by the case-folded text. Every character whose fold
    uses only characters of the known spellings is listed (``"M"`` -> ``"m"``,
    ``"\\u017f"`` -> ``"s"``), and so is every such character itself that
    folds to something else; the browser keeps any other character as it is,
    which can match no spelling, as its fold could not either.
    """
    spellings = set(_UNIT_ALIASES) | {s for names in _COUNTING_UNITS.values() for s in names}
    alphabet = set("".join(spellings))
    folds = {}
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        folded = ch.casefold()
        if folded != ch and (set(folded) <= alphabet or ch in alphabet):
            folds[ch] = folded
    return folds


def _number_problem(qid: str) -> dict[str, Any]:
    problem = PROBLEMS[qid]
    ref = reference(qid)
    return {
        "reference": float(ref) if problem.kind == "number" else ref,
        "abs_tol": _abs_tolerance(problem),
        "rtol": problem.rtol,
        "close_rtol": problem.close_rtol,
        "mixups": [[value, hint] for value, hint in _unit_mixups(problem, ref)],
        "mistakes": [[m.value, m.hint] for m in mistakes(qid)],
        "counting": list(_COUNTING_UNITS.get(problem.unit, ())),
        "hint": problem.hint,
    }


def _choice_problem(qid: str) -> dict[str, Any]:
    problem = PROBLEMS[qid]
    letters = _choice_letters(problem, qid, None)
    verdicts = {}
    for letter in letters:
        result = check(qid, letter)
        verdicts[letter] = [result.status, result.message]
    return {"letters": letters, "verdicts": verdicts, "expected": _choice_expected(letters)}


def selfcheck_data() -> dict[str, Any]:
    """Everything the static site's self-check needs, for the book's version of every problem.

    Returns
    -------
    dict
        JSON-able. ``problems`` maps each id to its ``kind``, ``unit``,
        ``expected`` (how to write the answer) and ``unanswered`` (what a
        blank answer is told), and

        * for numbers and counts: ``reference``, ``abs_tol`` (None unless
          decimals are asked), ``rtol``, ``close_rtol``, ``mixups`` and
          ``mistakes`` (``[value, hint]`` pairs, in the order the checker
          tries them), ``counting`` (spellings of a counting unit) and
          ``hint``;
        * for multiple choice: ``letters`` and ``verdicts`` (letter ->
          ``[status, message]``).

        Shared: ``status`` (the five status words), ``look`` (status ->
        ``[colour, symbol]``), ``messages`` (the checker's templates),
        ``units`` (name -> ``[dimension, size]``), ``aliases``,
        ``known_units``, ``folds``, ``whitespace``, ``digit_zeros``,
        ``patterns`` (``answer``, ``thousands``, ``letter``: regular
        expressions for a full match, see :func:`js_pattern`),
        ``decimals_rtol`` and ``match_rtol``.

    Examples
    --------
    >>> data = selfcheck_data()
    >>> data["problems"]["q1"]["unit"]
    'GB'
    """
    problems: dict[str, dict[str, Any]] = {}
    for qid, problem in PROBLEMS.items():
        entry: dict[str, Any] = {
            "kind": problem.kind,
            "unit": problem.unit,
            "expected": problem.answer_format(),
            "unanswered": check(qid, None).message,
        }
        if problem.kind == "choice":
            entry.update(_choice_problem(qid))
        else:
            entry.update(_number_problem(qid))
        problems[qid] = entry
    names = [*BYTE_UNITS, *TIME_UNITS, "x"]
    return {
        "problems": problems,
        "status": {
            "right": RIGHT,
            "close": CLOSE,
            "wrong": WRONG,
            "unanswered": UNANSWERED,
            "unreadable": UNREADABLE,
        },
        "look": {status: list(look) for status, look in _LOOK.items()},
        "messages": dict(MESSAGES),
        "units": {name: list(units_of(name)) for name in names},
        "aliases": dict(_UNIT_ALIASES),
        "known_units": _KNOWN_UNITS,
        "folds": _case_folds(),
        "whitespace": _whitespace(),
        "digit_zeros": list(_digit_zeros()),
        "patterns": {
            "answer": js_pattern(_ANSWER.pattern),
            "thousands": js_pattern(_THOUSANDS.pattern),
            "letter": js_pattern(_LETTER.pattern),
        },
        "decimals_rtol": _DECIMALS_RTOL,
        "match_rtol": _MATCH_RTOL,
    }


def template_fields(template: str) -> list[tuple[str, str | None, str]]:
    """The replacement fields of a ``str.format`` template.

    Parameters
    ----------
    template : str
        E.g. ``"{text!r} is not a finite number; expected {expected}."``.

    Returns
    -------
    list of (str, str or None, str)
        Field name, conversion and format spec of each field, in order.
    """
    return [
        (name, conversion, spec or "")
        for _, name, spec, conversion in string.Formatter().parse(template)
        if name is not None
    ]


def selfcheck_json() -> str:
    """:func:`selfcheck_data` as JSON that is safe inside an HTML ``<script>`` element.

    Returns
    -------
    str
        ASCII JSON in which ``<``, ``>`` and ``&`` are written as ``\\u`` escapes,
        so no ``</script>`` or ``<!--`` can end or confuse the element.
    """
    text = json.dumps(selfcheck_data(), ensure_ascii=True, allow_nan=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
