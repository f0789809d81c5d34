"""The data cells of a salted edition: each student's statements (one notebook for the class) and
self-check digests (:mod:`~lesson_lib.coursework.own_digests`), keyed by the ID salted with a random
pepper drawn for the edition; :func:`~lesson_lib.coursework.own_check.load_edition` reads them.
Neither the course salt, any answer, nor a name or e-mail is written.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from lesson_lib.coursework.own_check import edition_data
from lesson_lib.coursework.own_digests import student_key, variant_digests
from lesson_lib.coursework.problems import PROBLEMS, show
from lesson_lib.coursework.variants import salted

#: Longest data cell, characters: the grader reads cells of up to 200,000 for answer lookups.
MAX_DATA_CHARS = 150_000
#: Marks a data cell (``coursework`` metadata).
DATA_CELL = "edition-data"


def data_cells(students: Sequence[str], salt: str, *, statements: bool, digests: bool) -> list[str]:
    """The sources of the cells that load the edition's data, each under :data:`MAX_DATA_CHARS`.

    Parameters
    ----------
    students : sequence of str
        Normalised student IDs.
    salt : str
        The course salt the variants are drawn with.
    statements : bool
        Store each student's statements (a class notebook).
    digests : bool
        Store each student's self-check digests.

    Returns
    -------
    list of str
        Empty when there is nothing to store.
    """
    if not students or not (statements or digests):
        return []
    pepper = secrets.token_hex(16)
    entries = {}
    with salted(salt):
        for sid in students:
            entry = {}
            if statements:
                entry["statements"] = {qid: str(show(qid, sid)) for qid in PROBLEMS}
            if digests:
                checks = {qid: variant_digests(qid, sid, pepper) for qid in PROBLEMS}
                entry["checks"] = {qid: c for qid, c in checks.items() if c is not None}
            entries[student_key(pepper, sid)] = entry
    return _cells(pepper, entries)


def _cells(pepper: str, entries: dict[str, Any]) -> list[str]:
    """``entries`` in as few halvings as keep each cell under :data:`MAX_DATA_CHARS`."""
    data = edition_data(pepper, entries)
    if len(data) <= MAX_DATA_CHARS or len(entries) == 1:
        return [f'load_edition("""\n{data}""")']
    keys = list(entries)
    half = len(keys) // 2
    first, second = keys[:half], keys[half:]
    return _cells(pepper, {k: entries[k] for k in first}) + _cells(
        pepper, {k: entries[k] for k in second}
    )
