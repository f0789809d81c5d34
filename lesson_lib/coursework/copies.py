"""Signs of copying between variants, for the instructor to look into: never a penalty.

Every student's numbers differ, so an answer right for another student's variant and not for one's
own is the cheapest sign of copying there is. A student is flagged when some other issued variant
gets at least :data:`MARGIN` more of their numeric answers right than their own does; students whose
answers (blank ones left out, at least :data:`MIN_ANSWERED`) are all the same are flagged together,
unless each one's numbers are all right for their own variant (two variants can share numbers).
Each variant's right bands are computed once and every submission is scored against all of them
as one array operation, so a class of 150 takes well under a second.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from lesson_lib.coursework.answers import read_answer
from lesson_lib.coursework.check_reading import (
    _read_number,
    _unit_sizes,
    _unit_spellings,
    _Unreadable,
)
from lesson_lib.coursework.problems import PROBLEMS, params
from lesson_lib.coursework.problems.bank import Problem
from lesson_lib.coursework.student_ids import normalize_student

#: How many more numeric answers another variant must get right than the student's own to flag it.
MARGIN = 3
#: Fewest answered problems two identical answer sets must have to be flagged.
MIN_ANSWERED = 4


@dataclass(frozen=True)
class FitsOther:
    """A submission whose numeric answers fit another student's variant better than its own."""

    student: str
    #: The student whose variant fits best.
    other: str
    #: Numeric answers right for the student's own variant.
    own: int
    #: Numeric answers right for ``other``'s variant.
    fits: int
    #: Numeric answers read.
    answered: int


@dataclass(frozen=True)
class Copies:
    """What :func:`find_copies` flags."""

    fits_other: list[FitsOther] = field(default_factory=list)
    #: Groups of students (sorted) who handed in the same answers, with how many there are; not
    #: those whose numbers are all right for each one's own variant.
    identical: list[tuple[tuple[str, ...], int]] = field(default_factory=list)

    def rows(self) -> list[list[str]]:
        """The flags as CSV rows under :data:`CSV_HEADER`, identical groups as pairs."""
        out = [
            ["fits another variant", f.student, f.other, str(f.own), str(f.fits), str(f.answered)]
            for f in self.fits_other
        ]
        for group, answered in self.identical:
            for a, b in itertools.combinations(group, 2):
                out.append(["identical answers", a, b, "", "", str(answered)])
        return out


#: The columns of :meth:`Copies.rows` (``copies.csv`` beside the class report).
CSV_HEADER = ["kind", "student", "other", "right_own", "right_other", "answered"]


def _value(problem: Problem, answer: str) -> float:
    """An answer as the details CSV shows it, in the problem's unit; NaN if it is no number."""
    sizes = _unit_sizes(problem)
    contract = {"units": sizes, "spellings": _unit_spellings(problem, sizes)}
    # a text answer is shown as its repr; a cell a spreadsheet could run starts with "'"
    reading = read_answer(answer.strip().strip("'\""))
    try:
        return _read_number(problem, contract, reading)[0] / sizes[problem.unit]
    except _Unreadable:  # it fits no variant
        return math.nan


def _bands(qids: list[str], students: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest right answers, students by problems, each variant computed once."""
    low, high = np.empty((len(students), len(qids))), np.empty((len(students), len(qids)))
    for j, qid in enumerate(qids):
        problem = PROBLEMS[qid]
        for i, sid in enumerate(students):
            answer = float(problem.reference(params(qid, sid)))
            low[i, j], high[i, j] = problem.right_band(answer)
    return low, high


def _valid(sid: str) -> bool:
    try:
        return normalize_student(sid) == sid
    except (TypeError, ValueError):
        return False


def find_copies(answers: Mapping[str, Mapping[str, str]], issued: Iterable[str] = ()) -> Copies:
    """Flag answers that fit another student's variant better, and identical answer sets.

    Parameters
    ----------
    answers : mapping
        Student ID (normalised) -> problem id -> the answer as the details CSV shows it (its
        ``answer`` column), blank answers left out. Draw with the course salt the class was graded
        with (:func:`~lesson_lib.coursework.variants.salted`).
    issued : iterable of str, optional
        Further issued IDs (a roster's) whose variants are tried too.

    Returns
    -------
    Copies
        Flagged students in ID order.
    """
    students = sorted(s for s in answers if _valid(s))
    variants = sorted({*students, *(s for s in issued if _valid(s))})
    qids = [q for q, p in PROBLEMS.items() if p.kind != "choice"]
    values = np.full((len(students), len(qids)), np.nan)
    for row, sid in enumerate(students):
        for col, qid in enumerate(qids):
            if qid in answers[sid]:
                values[row, col] = _value(PROBLEMS[qid], answers[sid][qid])
    low, high = _bands(qids, variants)
    # students x variants: how many of each student's numbers each variant gets right
    right = ((values[:, None, :] >= low[None]) & (values[:, None, :] <= high[None])).sum(axis=2)
    fits_other, all_right = [], set()
    index = {sid: i for i, sid in enumerate(variants)}
    for row, sid in enumerate(students):
        own, answered = int(right[row, index[sid]]), int(np.isfinite(values[row]).sum())
        right[row, index[sid]] = -1
        best = int(np.argmax(right[row]))
        if right[row, best] >= own + MARGIN:
            fits_other.append(FitsOther(sid, variants[best], own, int(right[row, best]), answered))
        if own == answered:
            all_right.add(sid)
    return Copies(fits_other, _identical(answers, all_right))


def _identical(
    answers: Mapping[str, Mapping[str, str]], all_right: set[str]
) -> list[tuple[tuple[str, ...], int]]:
    """Groups of students whose non-blank answers are the same, numbers compared as read, and
    not every one's numbers all right for their own variant."""
    groups: dict[tuple, list[str]] = {}
    for sid, given in answers.items():
        key = []
        for qid, text in sorted(given.items()):
            number = _value(PROBLEMS[qid], text) if PROBLEMS[qid].kind != "choice" else math.nan
            key.append((qid, f"{number:.6g}" if math.isfinite(number) else text.strip().casefold()))
        if len(key) >= MIN_ANSWERED:
            groups.setdefault(tuple(key), []).append(sid)
    flagged = [(g, k) for k, g in groups.items() if len(g) > 1 and not all_right.issuperset(g)]
    return sorted((tuple(sorted(g)), len(k)) for g, k in flagged)
