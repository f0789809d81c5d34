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
    """One graded notebook, filled in by the grader's steps."""

    #: Student ID (lower-cased), or the name as found if it is not a valid ID.
    student: str
    path: Path
    #: What became of it.
    status: Status = Status.RAN
    #: Problem id -> the answer found.
    answers: dict[str, Any] = field(default_factory=dict)
    #: Problem id -> its verdict (CheckResult).
    results: dict[str, CheckResult] = field(default_factory=dict)
    #: What the instructor should know (the CSV's ``notes``).
    notes: list[str] = field(default_factory=list)
    #: The notebook's path relative to the submissions folder.
    file: str = ""
    #: Wall-clock seconds it took to grade.
    seconds: float = 0.0
    #: For a name that is not a valid ID, the plain ID it looks like, else "".
    looks_like: str = ""
    #: Who it belongs to and when it was handed in.
    identity: Identity | None = None
    #: What the late policy leaves of its score (1 on time).
    late_factor: float = 1.0
    #: False for a copy the ``--keep`` policy did not pick (``not counted`` in the scores CSV).
    counted: bool = True
    #: The normalised ID the answers are checked against (None without a valid ID).
    graded_as: str | None = None
    #: Problem id -> why its answer was read from the source.
    from_source: dict[str, str] = field(default_factory=dict)
    #: Problem id -> the reasoning typed.
    reasoning: dict[str, str] = field(default_factory=dict)
    #: Problem id -> the points a TA gave its part (None until graded).
    manual: dict[str, float | None] = field(default_factory=dict)
    #: Two platform users handed in this ID.
    id_shared: bool = False
    #: Its code asks the package for answers.
    answer_lookup: bool = False
    #: The note flagging its ID as handed in twice ("" if not).
    duplicate_note: str = ""
    #: How late it was ("" if on time).
    late_note: str = ""
    #: The code cells as the grader ran them, with their outputs, as notebook JSON (None if not run).
    executed: str | None = None

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
