"""Reading a typed answer as the kind of value its problem asks for.

A number, with or without a unit ("1.875 MiB", "9.3 ms", "1.76x", "3 sequences"), or a letter; every
pattern reads a text in one pass, so reading takes the same short time whatever the answer holds. An
answer that cannot be read raises ``_Unreadable``, whose message says what was expected.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from lesson_lib.coursework.answers import MAX_ANSWER_CHARS, NUMBER, OTHER, TEXT, Reading
from lesson_lib.coursework.check_messages import MESSAGES
from lesson_lib.coursework.problems import units_of
from lesson_lib.coursework.problems.bank import Problem
from lesson_lib.model._safe_io import printable
from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS

#: Spellings of the units, each to the unit it names. check() looks up the case-folded text; the
#: static page, which folds only A-Z, finds the micro sign (\u00b5) under its own key.
_UNIT_ALIASES: dict[str, str] = {
    spelling: unit
    for unit, spellings in {
        "B": "b byte bytes",
        "KB": "kb",
        "MB": "mb",
        "GB": "gb",
        "TB": "tb",
        "KiB": "kib",
        "MiB": "mib",
        "GiB": "gib",
        "TiB": "tib",
        "s": "s sec secs second seconds",
        "ms": "ms msec millisecond milliseconds",
        "us": "us \u00b5s \u03bcs usec microsecond microseconds",
        "ns": "ns",
        "x": "x \u00d7 times",
    }.items()
    for spelling in spellings.split()
}

_NUMBER = r"[-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
#: Units that count things rather than measure bytes or time, with the spellings a
#: student may write after the number (none of them converts the value).
_COUNTING_UNITS: dict[str, tuple[str, ...]] = {
    "sequences": ("sequence", "sequences", "seq", "seqs"),
    "tokens/s": ("tokens/s", "token/s", "tok/s", "tokens per second"),
    "USD": ("usd", "dollars"),
}

#: The number at the start of an answer (matched after the answer is stripped: every
#: pattern here reads a text in one pass, whatever it holds).
_NUMBER_AT_START = re.compile(_NUMBER)
#: What a number with thousands separators must look like ("1,234.5").
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(,\d{3})+(\.\d*)?([eE][-+]?\d+)?")
_LETTER = re.compile(r"\(?\s*([A-Za-z])\s*[).:]?")
#: Longest form of a student's text quoted inside a message, characters.
_QUOTED_CHARS = 60
#: The units a student may write, as listed in the unknown-unit message.
_KNOWN_UNITS = ", ".join([*BYTE_UNITS, *TIME_UNITS, "x"])


class _Unreadable(Exception):
    """The answer cannot be read as the kind of value the problem asks for."""


def _quote(text: str) -> str:
    """A student's text inside a message: its repr, control characters escaped, shortened."""
    return printable(repr(text), _QUOTED_CHARS)


def _unit_sizes(problem: Problem) -> dict[str, float]:
    """The units an answer to ``problem`` may carry, each with its size in SI units (bytes, seconds,
    1 for the ratio ``x``); a count of things (sequences, tokens/s) has only its own name, of size 1."""
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
    """The answer in SI units, a note when it was given in another unit, and that unit (empty when
    the answer carries none or carries the one asked)."""
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
        return MESSAGES["too_long"].format(
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
) -> tuple[float, str, str]:
    stripped = text.strip()
    quoted = _quote(text)
    match = _NUMBER_AT_START.match(stripped)
    if not match:
        raise _Unreadable(MESSAGES["no_number"].format(text=quoted, expected=expected))
    digits, written = match.group(0), stripped[match.end() :].strip()
    if "," in digits:
        if not _THOUSANDS.fullmatch(digits):
            raise _Unreadable(MESSAGES["decimal_comma"].format(text=quoted, expected=expected))
        digits = digits.replace(",", "")
    value = float(digits.replace("_", ""))
    if not math.isfinite(value):
        raise _Unreadable(MESSAGES["text_not_finite"].format(text=quoted, expected=expected))
    sizes = contract["units"]
    if not written:
        return value * sizes[problem.unit], "", ""
    unit = contract["spellings"].get(written.casefold())
    if unit is None:
        other = _UNIT_ALIASES.get(written.casefold())
        if other is None:
            raise _Unreadable(
                MESSAGES["unknown_unit"].format(
                    text=quoted, unit=_quote(written), known=_KNOWN_UNITS, expected=expected
                )
            )
        raise _Unreadable(
            MESSAGES["wrong_dimension"].format(text=quoted, unit=other, expected=expected)
        )
    value_si = value * sizes[unit]
    if unit == problem.unit:
        return value_si, "", ""
    note = MESSAGES["converted"].format(
        text=_quote(stripped), value=value_si / sizes[problem.unit], unit=problem.unit
    )
    return value_si, note, unit


def _read_letter(reading: Reading, letters: str) -> str:
    expected = MESSAGES["choice_expected"].format(letters=", ".join(letters))
    if reading.kind == OTHER and reading.why == "too long":
        raise _Unreadable(_not_read(reading, expected))
    if reading.kind != TEXT:
        raise _Unreadable(f"got {reading.shown}; expected {expected}.")
    match = _LETTER.fullmatch(reading.value.strip())
    if not match or match.group(1).casefold() not in letters:
        raise _Unreadable(
            MESSAGES["not_a_choice"].format(text=_quote(reading.value), expected=expected)
        )
    return match.group(1).casefold()
