"""Per-student variants: a student ID picks each problem's numbers, always the same way.

The ID is hashed (SHA-256) together with the problem's id and a fixed salt,
and the hash seeds a NumPy ``Generator``. The same ID therefore gives the same
numbers on every machine and in every run, different IDs give (almost always)
different numbers, and no ID at all gives the book's own numbers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

#: Changing this reshuffles every student's numbers; bump it only between cohorts.
SALT = "interconnects-and-clusters/coursework/v1"

_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Longest text looked at as a student ID (an ID has at most 64 characters, plus spaces).
_MAX_RAW_CHARS = 256


def normalize_student(student: object) -> str | None:
    """Return the canonical form of a student ID, or None for "no ID".

    Parameters
    ----------
    student : object
        ``None`` or an empty string mean "no ID: use the book's numbers".
        Otherwise a string (or an integer, converted with ``str``) of 1 to 64
        letters, digits, ``.``, ``_`` or ``-``, starting with a letter or digit.
        Surrounding spaces are ignored and letters are compared without case,
        so ``" S123 "`` and ``"s123"`` are the same student.

    Returns
    -------
    str or None
        The lower-cased ID, or None.

    Raises
    ------
    TypeError
        If ``student`` is neither None, a string nor an integer.
    ValueError
        If the ID has characters outside the allowed set (it also names a folder).
    """
    if student is None:
        return None
    kind = type(student)  # never isinstance(), which reads the object's own __class__
    if issubclass(kind, bool) or not issubclass(kind, str | int):
        name = vars(type)["__name__"].__get__(kind, type)
        raise TypeError(
            f"student must be a string ID such as 's1234' or None, got an object of type "
            f"{name[:40]!r}"
        )
    if issubclass(kind, int):
        number = int.__int__(student)
        if not -(10**64) < number < 10**64:
            raise ValueError(
                "student must be 1 to 64 letters, digits, '.', '_' or '-', got an integer of "
                "more than 64 digits"
            )
        text = str(number)
    elif str.__len__(student) > _MAX_RAW_CHARS:
        raise ValueError(
            f"student must be 1 to 64 letters, digits, '.', '_' or '-', got a text of "
            f"{str.__len__(student):,} characters"
        )
    else:
        text = str.__getitem__(student, slice(None)).strip()
    if not text:
        return None
    if not _ID_PATTERN.fullmatch(text):
        raise ValueError(
            "student must be 1 to 64 letters, digits, '.', '_' or '-' (starting with a "
            f"letter or digit), got {text[:80]!r}"
        )
    return text.casefold()


def rng_for(student: str, qid: str) -> np.random.Generator:
    """A random generator seeded by one student's ID and one problem's id.

    Parameters
    ----------
    student : str
        A student ID, already normalized by :func:`normalize_student`.
    qid : str
        The problem's id, e.g. ``"q3"``.

    Returns
    -------
    numpy.random.Generator
        Seeded from the first 16 bytes of ``sha256(SALT / student / qid)``.
    """
    digest = hashlib.sha256(f"{SALT}/{student}/{qid}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def pick(rng: np.random.Generator, choices: Sequence[object]) -> object:
    """One element of ``choices``, drawn uniformly.

    Parameters
    ----------
    rng : numpy.random.Generator
        The student's generator.
    choices : sequence
        The allowed values, in a fixed order.

    Returns
    -------
    object
        The element itself (a plain Python value, not a NumPy scalar).
    """
    return choices[int(rng.integers(len(choices)))]


def shuffled(rng: np.random.Generator, n: int) -> list[int]:
    """A random order of ``range(n)``, for multiple-choice options.

    Parameters
    ----------
    rng : numpy.random.Generator
        The student's generator.
    n : int
        Number of items.

    Returns
    -------
    list of int
        A permutation of ``0 .. n-1``.
    """
    return [int(i) for i in rng.permutation(n)]
