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
    if isinstance(student, bool) or not isinstance(student, str | int):
        raise TypeError(
            f"student must be a string ID such as 's1234' or None, got {student!r} "
            f"({type(student).__name__})"
        )
    if isinstance(student, int) and not -(10**64) < student < 10**64:
        raise ValueError(
            "student must be 1 to 64 letters, digits, '.', '_' or '-', got an integer of "
            "more than 64 digits"
        )
    text = str(student).strip()
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
