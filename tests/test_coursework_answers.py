"""One reading of answers: what read_answer makes of each kind of answer, without running it."""

from __future__ import annotations

import decimal
import json
import numbers
from fractions import Fraction

import numpy as np
import pytest

from lesson_lib.coursework.answers import (
    MAX_ANSWER_CHARS,
    MAX_SHOWN_CHARS,
    Reading,
    plain_text,
    read_answer,
    type_name,
)


class Tripwire:
    """An object every one of whose hooks records that it ran (and then raises)."""

    calls: list[str]

    def __init__(self) -> None:
        object.__setattr__(self, "calls", [])

    def _hit(self, name):
        self.calls.append(name)
        if not self.calls[1:]:  # once: then harmless, so a failing test can be reported
            raise SystemExit(f"{name} ran")
        return "<tripwire>" if name in ("__repr__", "__str__", "__format__") else 0

    def __repr__(self):
        return self._hit("__repr__")

    def __str__(self):
        return self._hit("__str__")

    def __format__(self, spec):
        return self._hit("__format__")

    def __float__(self):
        return self._hit("__float__")

    def __len__(self):
        return self._hit("__len__")

    def __iter__(self):
        return self._hit("__iter__")

    def __eq__(self, other):
        return self._hit("__eq__")

    def __hash__(self):
        return self._hit("__hash__")

    def __bool__(self):
        return self._hit("__bool__")

    @property
    def __class__(self):  # isinstance() would read this
        self._hit("__class__")
        return type(self)


class TrippedStr(str):
    """A string whose methods record that they ran."""

    def __len__(self):
        raise AssertionError("__len__ ran")

    def strip(self, *args):
        raise AssertionError("strip ran")

    def __getitem__(self, key):
        raise AssertionError("__getitem__ ran")

    def __repr__(self):
        raise AssertionError("__repr__ ran")


def test_blank_numbers_and_texts():
    """None and ... and spaces are blank; numbers keep their value (ints exact); texts as given."""
    assert read_answer(None).kind == read_answer(...).kind == read_answer(" \t").kind == "blank"
    assert read_answer(140) == Reading("number", 140, "140")
    assert type(read_answer(140).value) is int
    assert read_answer(1.5) == Reading("number", 1.5, "1.5")
    assert read_answer("1.875 MiB") == Reading("text", "1.875 MiB", "'1.875 MiB'")


@pytest.mark.parametrize(
    ("answer", "value", "shown"),
    [
        (Fraction(3, 2), 1.5, "Fraction(3, 2)"),
        (decimal.Decimal("1.25"), 1.25, "Decimal('1.25')"),
        (np.float32(2.5), 2.5, "2.5"),
        (np.float64(2.5), 2.5, "2.5"),
        (np.int64(7), 7, "7"),
        (np.uint8(7), 7, "7"),
        (np.array(2.0), 2.0, "2.0"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_other_number_types_are_numbers(answer, value, shown):
    """Fraction, Decimal and NumPy's scalars read as the number they hold."""
    reading = read_answer(answer)
    assert (reading.kind, reading.value, reading.shown) == ("number", value, shown)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (True, "yes/no"),
        (np.bool_(False), "yes/no"),
        (float("nan"), "not finite"),
        (float("-inf"), "not finite"),
        (decimal.Decimal("NaN"), "not finite"),
        (10**5000, "too large"),
        (Fraction(10**2000, 3), "too large"),
        (decimal.Decimal("1e999"), "too large"),
        (decimal.Decimal("1" * 5000), "too large"),
        (3 + 1j, "complex"),
        (np.complex64(1), "complex"),
        ([1.5], "container"),
        ((1, 2), "container"),
        ({"a": 1}, "container"),
        (b"1.5", "container"),
        (np.array([1.0, 2.0]), "container"),
        (object(), "object"),
        (" " * (MAX_ANSWER_CHARS + 1), "too long"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_what_is_not_a_number_or_a_text_says_what_it_is(answer, why):
    """Each odd kind of answer is named, not converted."""
    reading = read_answer(answer)
    assert (reading.kind, reading.why) == ("other", why)
    assert len(reading.shown) <= MAX_SHOWN_CHARS + 3


def test_a_long_text_is_refused_by_its_length_alone():
    """Ten million spaces, or '1 a' + spaces + 'b': 'too long', with the count, unread."""
    for text in (" " * 10**7, "1 a" + " " * 80_000 + "b"):
        reading = read_answer(text)
        assert reading.why == "too long" and reading.count == len(text)
    assert read_answer("x" * MAX_ANSWER_CHARS).kind == "text"


def test_no_hook_of_an_unknown_object_runs():
    """repr, str, float, len, eq, hash, bool and even __class__ of an object: none is called."""
    trap = Tripwire()
    reading = read_answer(trap)
    assert (reading.kind, reading.why, reading.type_name) == ("other", "object", "Tripwire")
    assert trap.calls == []
    assert read_answer([trap]).shown == "<list of 1 item>" and trap.calls == []


def test_a_string_subclass_is_read_with_strs_own_methods():
    """Overridden len, strip, slicing and repr of a str subclass are never called."""
    reading = read_answer(TrippedStr("1.5 GB"))
    assert reading == Reading("text", "1.5 GB", "'1.5 GB'")
    assert type(reading.value) is str
    assert plain_text(TrippedStr("s001")) == "s001"


def test_another_real_number_type_is_converted_with_a_guard():
    """A numbers.Real is converted with float(); one whose __float__ raises SystemExit (or any
    BaseException) is an unreadable object, not an escape; KeyboardInterrupt goes through."""

    class Exits:
        def __float__(self):
            raise SystemExit(3)

    class Fine:
        def __float__(self):
            return 2.5

    class Interrupted:
        def __float__(self):
            raise KeyboardInterrupt

    for cls in (Exits, Fine, Interrupted):
        numbers.Real.register(cls)
    assert read_answer(Exits()).why == "object"
    assert read_answer(Fine()) == Reading("number", 2.5, "<Fine 2.5>")
    with pytest.raises(KeyboardInterrupt):
        read_answer(Interrupted())


def test_a_metaclass_cannot_change_the_name_shown():
    """type_name reads type's own __name__, not a metaclass's property."""

    class Meta(type):
        @property
        def __name__(cls):
            raise SystemExit("ran")

    class Odd(metaclass=Meta):
        pass

    assert type_name(Odd()) == "Odd"
    assert type_name("x\n") == "str"


def test_readings_survive_json_and_forged_ones_do_not():
    """to_json -> JSON -> from_json gives the reading back; anything else is an object."""
    for answer in (None, 140, 1.5, "1 GB", [1, 2], True, " " * 999, 3j, Fraction(1, 3)):
        reading = read_answer(answer)
        assert Reading.from_json(json.loads(json.dumps(reading.to_json()))) == reading
    good = read_answer("1 GB").to_json()
    forged = [
        {**good, "extra": 1},
        {**good, "value": "x" * (MAX_ANSWER_CHARS + 1)},
        {**good, "kind": "number", "value": "140"},
        {**good, "kind": "number", "value": 10**400},
        {**good, "kind": "number", "value": True},
        {**good, "kind": "other", "why": "anything I like"},
        {**good, "shown": ["not", "text"]},
        {**good, "shown": "x" * 10_000},
        "a string",
        None,
    ]
    for data in forged:
        assert Reading.from_json(data).why == "object", data
    shown = Reading.from_json({**good, "shown": "a\n" * 30}).shown
    assert "\n" not in shown and len(shown) <= MAX_SHOWN_CHARS + 3
