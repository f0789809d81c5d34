"""How an answer is read: one reading, for the notebook's self-check and for the grader.

:func:`read_answer` turns whatever a student assigned to ``answer_q3`` into a :class:`Reading`,
plain small data (blank, a number, a text, or what else it is), in time independent of the answer's
size. The checker judges only the reading; the grader's runner makes it in the student's kernel and
hands it out as JSON, so an answer gets the same verdict in the notebook and the grades. The
answer's own code is kept out: numbers (ints, floats, Fractions, Decimals, NumPy's scalars and 0-d
arrays) are read by the base types' own methods, a string of at most :data:`MAX_ANSWER_CHARS` is
text, another ``numbers.Real`` goes through a guarded ``float()``, anything else is described by its
type's name (and a built-in container's length), never its ``repr`` or ``str``.
"""

from __future__ import annotations

import decimal
import fractions
import math
import numbers
import sys
from dataclasses import asdict, dataclass
from typing import Any

from lesson_lib.model._safe_io import printable

#: Longest text answer read, characters (an answer is a number and a unit, or a letter).
MAX_ANSWER_CHARS = 200
#: Longest form of an answer shown back (``given``), characters.
MAX_SHOWN_CHARS = 80
#: Largest integer read exactly, bits (larger ones cannot become a float).
MAX_INT_BITS = 1023
#: Largest numerator or denominator of a Fraction read, bits.
MAX_FRACTION_BITS = 4096
#: Largest Decimal read, bytes of memory (a few hundred digits).
MAX_DECIMAL_BYTES = 1024

BLANK = "blank"
NUMBER = "number"
TEXT = "text"
OTHER = "other"

#: What an answer that is neither blank, a number nor text can be (``Reading.why``).
WHY = frozenset({"yes/no", "not finite", "too large", "too long", "complex", "container", "object"})

_CONTAINERS = (list, tuple, dict, set, frozenset, bytes, bytearray, range, str)


@dataclass(frozen=True)
class Reading:
    """What an answer is, as plain data."""

    #: ``"blank"``, ``"number"``, ``"text"`` or ``"other"``.
    kind: str
    #: The number (an ``int`` stays exact) or the text; None otherwise.
    value: int | float | str | None = None
    #: Shown back, at most :data:`MAX_SHOWN_CHARS` characters, control characters escaped.
    shown: str = ""
    #: For ``"other"``, one of :data:`WHY`.
    why: str = ""
    #: The answer's type, for ``"container"`` and ``"object"``.
    type_name: str = ""
    #: Items of a container, or characters of a text too long to read; else -1.
    count: int = -1

    def to_json(self) -> dict[str, Any]:
        """The reading as a JSON object (what the runner hands to the grader)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> Reading:
        """Read back :meth:`to_json`'s output, each field's type and size checked so what comes out
        of a sandbox cannot be more than a reading; anything else is an object."""
        if not isinstance(data, dict) or not _plain_fields(data):
            return cls(OTHER, shown="<not a reading>", why="object", type_name="?")
        kind, value = data["kind"], data["value"]
        shown = printable(data["shown"], MAX_SHOWN_CHARS)
        if kind == BLANK:
            return cls(BLANK, shown=shown)
        if kind == NUMBER and _is_number(value):
            return cls(NUMBER, value, shown)
        if kind == TEXT and isinstance(value, str) and len(value) <= MAX_ANSWER_CHARS:
            return cls(TEXT, value, shown)
        if kind == OTHER and data["why"] in WHY:
            count = data["count"]
            return cls(
                OTHER,
                shown=shown,
                why=data["why"],
                type_name=printable(data["type_name"], 40),
                count=count if isinstance(count, int) and not isinstance(count, bool) else -1,
            )
        return cls(OTHER, shown="<not a reading>", why="object", type_name="?")


def _plain_fields(data: dict) -> bool:
    """The six fields, each of a plain JSON type, texts no longer than a reading makes."""
    if set(data) != {"kind", "value", "shown", "why", "type_name", "count"}:
        return False
    texts = ("kind", "shown", "why", "type_name")
    if not all(isinstance(data[k], str) and len(data[k]) <= 2 * MAX_ANSWER_CHARS for k in texts):
        return False
    return data["value"] is None or isinstance(data["value"], int | float | str)


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value.bit_length() <= MAX_INT_BITS if isinstance(value, int) else math.isfinite(value)


def type_name(value: object) -> str:
    """``value``'s type name (from ``type``: no metaclass alters it), escaped, at most 40 chars.

    Parameters
    ----------
    value : object

    Returns
    -------
    str
    """
    try:
        name = vars(type)["__name__"].__get__(type(value), type)
    except Exception:  # pragma: no cover - type's own descriptor does not fail
        name = "?"
    return printable(name, 40)


def _shown_text(text: str) -> str:
    return printable(repr(text), MAX_SHOWN_CHARS)


def _other(why: str, shown: str, value: object = None, count: int = -1) -> Reading:
    return Reading(
        OTHER,
        shown=printable(shown, MAX_SHOWN_CHARS),
        why=why,
        type_name=type_name(value) if value is not None else "",
        count=count,
    )


def _number(value: int | float, shown: str) -> Reading:
    if isinstance(value, float) and not math.isfinite(value):
        return _other("not finite", shown)
    return Reading(NUMBER, value, printable(shown, MAX_SHOWN_CHARS))


def _read_int(value: int) -> Reading:
    exact = int.__int__(value)
    if exact.bit_length() > MAX_INT_BITS:
        digits = int(exact.bit_length() * math.log10(2)) + 1
        return _other("too large", f"<an integer of about {digits:,} digits>")
    return _number(exact, repr(exact))


def _read_fraction(value: fractions.Fraction) -> Reading:
    num, den = int.__int__(value.numerator), int.__int__(value.denominator)
    if max(num.bit_length(), den.bit_length()) > MAX_FRACTION_BITS:
        return _other("too large", "<a Fraction too large to read>")
    try:
        number = num / den
    except OverflowError:
        return _other("too large", "<a Fraction too large to read>")
    return _number(number, f"Fraction({num}, {den})")


def _read_decimal(value: decimal.Decimal) -> Reading:
    if sys.getsizeof(value) > MAX_DECIMAL_BYTES:
        return _other("too large", "<a Decimal too large to read>")
    shown = f"Decimal({str(value)!r})"
    if not value.is_finite():
        return _other("not finite", shown)
    if value.adjusted() > 308:
        return _other("too large", shown)
    return _number(float(value), shown)


def _read_numpy(value: object, numpy: Any) -> Reading | None:
    """NumPy's own scalars and 0-d arrays; None for anything else."""
    if type(value) is numpy.ndarray:
        if value.ndim == 0 and value.dtype.kind in "biufc":
            return _read_numpy(value[()], numpy)
        return _other("container", "<ndarray>", value, count=int(value.size))
    scalars = {t for t in numpy.sctypeDict.values() if isinstance(t, type)}
    if type(value) in scalars:  # NumPy's own types, not a subclass
        if value.dtype.kind == "b":
            return _other("yes/no", repr(bool(value)))
        if value.dtype.kind == "c":
            return _other("complex", repr(complex(value)))
        item = value.item()
        if type(item) in (int, float):
            return read_answer(item)
    return None


def read_answer(value: object) -> Reading:
    """Read an answer without running its code (see the module); raises only ``KeyboardInterrupt``.

    Parameters
    ----------
    value : object
        What a student assigned to ``answer_q...``.

    Returns
    -------
    Reading
    """
    try:
        return _read(value)
    except KeyboardInterrupt:
        raise
    except MemoryError:
        return _other("too large", "<too large to read>")
    except BaseException:  # an answer's own code may raise anything, SystemExit included
        return _other("object", f"<{type_name(value)}>", value)


def _read(value: object) -> Reading:
    # type(), never isinstance(): isinstance consults an object's own __class__
    kind = type(value)
    if value is None or value is Ellipsis:
        return Reading(BLANK, shown=repr(value))
    if issubclass(kind, bool):
        return _other("yes/no", repr(bool.__bool__(value)))
    if issubclass(kind, str):
        length = str.__len__(value)
        if length > MAX_ANSWER_CHARS:
            return _other("too long", f"<text of {length:,} characters>", count=length)
        text = str.__getitem__(value, slice(None))
        if not text.strip():
            return Reading(BLANK, shown=_shown_text(text))
        return Reading(TEXT, text, _shown_text(text))
    if issubclass(kind, int):
        return _read_int(value)
    if issubclass(kind, float):
        number = float.__float__(value)
        return _number(number, repr(number))
    if kind is fractions.Fraction:
        return _read_fraction(value)
    if kind is decimal.Decimal:
        return _read_decimal(value)
    if kind is complex:
        return _other("complex", repr(value))
    numpy = sys.modules.get("numpy")
    found = _read_numpy(value, numpy) if numpy is not None else None
    if found is not None:
        return found
    for base in _CONTAINERS:
        if issubclass(kind, base):
            count = base.__len__(value)
            return _other("container", _container_shown(value, base, count), value, count)
    if issubclass(kind, numbers.Real):
        return _read_real(value)
    return _other("object", f"<{type_name(value)}>", value)


def _container_shown(value: object, base: type, count: int) -> str:
    """A short list or tuple of plain items as its repr, built here; else its type and length."""
    if base in (list, tuple) and count <= 20:
        parts = []
        for item in base.__iter__(value):
            kind = type(item)
            if not (
                item is None
                or kind in (bool, float)
                or (kind is int and item.bit_length() <= 64)
                or (kind is str and len(item) <= MAX_SHOWN_CHARS)
            ):
                break
            parts.append(repr(item))
        else:
            if base is tuple and count == 1:
                return f"({parts[0]},)"
            inside = ", ".join(parts)
            return f"[{inside}]" if base is list else f"({inside})"
    return f"<{type_name(value)} of {count:,} item{'' if count == 1 else 's'}>"


def _read_real(value: numbers.Real) -> Reading:
    """Another kind of real number: its own ``__float__``, guarded."""
    try:
        number = float(value)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return _other("object", f"<{type_name(value)}>", value)
    return _number(float.__float__(number), f"<{type_name(value)} {number!r}>")


def plain_text(value: object, limit: int = MAX_ANSWER_CHARS) -> str | None:
    """A string of at most ``limit`` chars as plain ``str`` (the runner's ``STUDENT``); else None.

    Parameters
    ----------
    value : object
    limit : int, default :data:`MAX_ANSWER_CHARS`

    Returns
    -------
    str or None
    """
    if not isinstance(value, str) or str.__len__(value) > limit:
        return None
    return str.__getitem__(value, slice(None))
