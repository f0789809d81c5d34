"""A graded submission: what every step of the grader reads and fills in.

Each grader step (:mod:`~lesson_lib.coursework.grading`, :mod:`lesson_lib.coursework.grade`) fills
in one :class:`Submission`; the writers make CSV rows, feedback pages and Gradescope results of it.
Decisions read fields (``status``, ``counted``, ``id_shared``, ``answer_lookup``), not the notes.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lesson_lib.coursework.check import CheckResult
from lesson_lib.coursework.identity import Identity
from lesson_lib.coursework.manual_grading import MANUAL_PARTS
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.status import Status


def problem_points() -> dict[str, float]:
    """Every automatically graded problem's points (``Problem.max_points``), by id, in order.

    Returns
    -------
    dict
    """
    return {qid: problem.max_points for qid, problem in PROBLEMS.items()}


def total_points(manual_parts: Collection[str] = ()) -> float:
    """The most points of the set: its problems', plus those of the parts a person grades given.

    Parameters
    ----------
    manual_parts : collection of str
        Imported parts a person grades (:data:`~lesson_lib.coursework.manual_grading.MANUAL_PARTS`).

    Returns
    -------
    float
    """
    return sum(problem_points().values()) + sum(MANUAL_PARTS[q].points for q in manual_parts)


@dataclass
class Submission:
    """One graded notebook, filled in by the grader's steps.

    Attributes
    ----------
    student : str
        Student ID (lower-cased), or the name as found if it is not a valid ID.
    status : Status
        What became of it.
    answers : dict
        Problem id -> the answer found.
    results : dict
        Problem id -> its verdict (CheckResult).
    notes : list of str
        What the instructor should know (the CSV's ``notes``).
    file : str
        The notebook's path relative to the submissions folder.
    seconds : float
        Wall-clock seconds it took to grade.
    looks_like : str
        For a name that is not a valid ID, the plain ID it looks like, else "".
    identity : Identity or None
        Who it belongs to and when it was handed in.
    late_factor : float
        What the late policy leaves of its score (1 on time).
    counted : bool
        False for a copy the ``--keep`` policy did not pick (its scores CSV status: ``not counted``).
    graded_as : str or None
        The normalised ID the answers are checked against (None: no valid ID).
    from_source : dict
        Problem id -> why its answer was read from the source.
    reasoning : dict
        Problem id -> the reasoning typed.
    manual : dict
        Problem id -> the points a TA gave its part (None: not graded yet).
    id_shared : bool
        Two platform users handed in this ID.
    answer_lookup : bool
        Its code asks the package for answers.
    duplicate_note : str
        The note flagging its ID as handed in twice ("" if not).
    late_note : str
        How late it was ("" if on time).
    """

    student: str
    path: Path
    status: Status = Status.RAN
    answers: dict[str, Any] = field(default_factory=dict)
    results: dict[str, CheckResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    file: str = ""
    seconds: float = 0.0
    looks_like: str = ""
    identity: Identity | None = None
    late_factor: float = 1.0
    counted: bool = True
    graded_as: str | None = None
    from_source: dict[str, str] = field(default_factory=dict)
    reasoning: dict[str, str] = field(default_factory=dict)
    manual: dict[str, float | None] = field(default_factory=dict)
    id_shared: bool = False
    answer_lookup: bool = False
    duplicate_note: str = ""
    late_note: str = ""

    @property
    def earned(self) -> float:
        """Points earned before the late policy, every problem's and the TA's given."""
        automatic = sum(r.points for r in self.results.values())
        return automatic + sum(v for v in self.manual.values() if v is not None)

    @property
    def total(self) -> float:
        """The points that count, :attr:`earned` times the late policy's ``late_factor``."""
        return round(self.earned * self.late_factor, 4)

    @property
    def max_points(self) -> float:
        """The most points, every problem's and each imported part's a person grades."""
        return total_points(self.manual)
