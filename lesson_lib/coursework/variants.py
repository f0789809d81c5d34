"""Per-student variants: a student ID picks each problem's numbers, always the same way.

The ID is hashed (SHA-256) together with the problem's id and a fixed salt,
and the hash seeds a NumPy ``Generator``. The same ID therefore gives the same
numbers on every machine and in every run, different IDs give (almost always)
different numbers, and no ID at all gives the book's own numbers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

# where the ID rules live; kept importable from here, where it always was
from lesson_lib.coursework.student_ids import normalize_student as normalize_student

#: Changing this reshuffles every student's numbers; bump it only between cohorts.
SALT = "interconnects-and-clusters/coursework/v1"


def rng_for(student: str, qid: str) -> np.random.Generator:
    """A random generator seeded by one student's ID and one problem's id.

    Parameters
    ----------
    student : str
        A student ID, already normalized by
        :func:`~lesson_lib.coursework.student_ids.normalize_student`.
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
