"""Per-student variants: a student ID picks each problem's numbers, always the same way.

A seed from the ID, the problem's id and the salts (:func:`rng_for`) gives the same numbers on every
machine, no ID the book's own. ``make student`` makes the course salt (:data:`DEFAULT_SALT_FILE`)
and the grader reads it; the package never reads it itself, so ``reference("q3", "s002")`` in a
notebook computes a variant nobody was given. Without a course salt the variants are public.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from lesson_lib.coursework.student_ids import normalize_student as normalize_student
from lesson_lib.model._safe_io import read_file

#: Changing this reshuffles every student's numbers; bump it only between cohorts.
SALT = "interconnects-and-clusters/coursework/v1"

#: Where ``make student`` keeps the course salt, relative to the repository's root.
DEFAULT_SALT_FILE = Path("_build/instructor/salt")
#: Environment variable naming the salt file instead; set but empty, none (the public variants).
SALT_FILE_ENV = "LESSON_COURSE_SALT_FILE"
#: A course salt is this many random bytes, written as hex.
SALT_BYTES = 32
_SALT_CHARS = frozenset("0123456789abcdef")

#: The course salt in use in this process (None means the public variants).
_course_salt: str | None = None


def _valid_salt(salt: object) -> str:
    """``salt`` itself if it is a course salt as :func:`create_salt_file` writes one."""
    if not isinstance(salt, str) or len(salt) != 2 * SALT_BYTES or not set(salt) <= _SALT_CHARS:
        raise ValueError(
            f"course salt must be {2 * SALT_BYTES} lower-case hex digits "
            f"(as create_salt_file writes it), got {type(salt).__name__} of "
            f"{len(salt) if isinstance(salt, str) else '?'} characters"
        )
    return salt


def create_salt_file(path: Path) -> str:
    """Make a new course salt in ``path`` (folder created), owner-only; keep one already there.

    Parameters
    ----------
    path : Path

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``path`` exists and does not hold a course salt.
    """
    path = Path(path)
    if path.exists():
        return read_salt_file(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new folder: the owner's only
    salt = secrets.token_hex(SALT_BYTES)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(salt + "\n")
    return salt


def read_salt_file(path: Path) -> str:
    """The course salt kept in ``path`` (ValueError naming the file if it holds none).

    Parameters
    ----------
    path : Path

    Returns
    -------
    str
    """
    text = read_file(path, "salt file", ValueError, 4 * SALT_BYTES).decode(errors="replace").strip()
    try:
        return _valid_salt(text)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def salt_file_in_use(given: Path | None = None) -> Path | None:
    """The salt file the grader reads: ``given``, else :data:`SALT_FILE_ENV`, else the default.

    Parameters
    ----------
    given : Path, optional
        A file named on the command line (``--salt-file``).

    Returns
    -------
    Path or None
        None when :data:`SALT_FILE_ENV` is set but empty, or no default file exists.
    """
    if given is not None:
        return Path(given)
    named = os.environ.get(SALT_FILE_ENV)
    if named is not None:
        return Path(named) if named.strip() else None
    return DEFAULT_SALT_FILE if DEFAULT_SALT_FILE.exists() else None


def set_course_salt(salt: str | None) -> None:
    """Use ``salt`` (from :func:`read_salt_file`; None: the public variants) for every variant this
    process and its threads draw from now on; ValueError if it is not a course salt.

    Parameters
    ----------
    salt : str or None
    """
    global _course_salt
    _course_salt = None if salt is None else _valid_salt(salt)


def course_salt() -> str | None:
    """The course salt in use, or None for the public variants.

    Returns
    -------
    str or None
    """
    return _course_salt


@contextmanager
def salted(salt: str | None) -> Iterator[None]:
    """Draw variants with ``salt`` (None: the public ones) in the ``with`` block, then as before.

    Parameters
    ----------
    salt : str or None

    Returns
    -------
    contextlib.AbstractContextManager
    """
    before = _course_salt
    set_course_salt(salt)
    try:
        yield
    finally:
        set_course_salt(before)


def rng_for(student: str, qid: str) -> np.random.Generator:
    """A random generator seeded by one student's ID and one problem's id.

    Parameters
    ----------
    student, qid : str
        A normalized student ID and a problem id (``"q3"``).

    Returns
    -------
    numpy.random.Generator
        Seeded by the first 16 bytes of ``sha256(SALT / [course salt, if in use /] student / qid)``.
    """
    key = SALT if _course_salt is None else f"{SALT}/{_course_salt}"
    digest = hashlib.sha256(f"{key}/{student}/{qid}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def pick(rng: np.random.Generator, choices: Sequence[object]) -> object:
    """One element of ``choices`` (itself, not a NumPy scalar), drawn uniformly.

    Parameters
    ----------
    rng : numpy.random.Generator
    choices : sequence

    Returns
    -------
    object
    """
    return choices[int(rng.integers(len(choices)))]


def shuffled(rng: np.random.Generator, n: int) -> list[int]:
    """A random order of ``range(n)``, for multiple-choice options.

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int

    Returns
    -------
    list of int
    """
    return [int(i) for i in rng.permutation(n)]
