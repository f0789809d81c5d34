"""The late and resubmission policy: days late, what is left of a late score, which copy counts.

Stated by the grader's ``--due``, ``--late-penalty-per-day`` and ``--keep``, and written into the
notes of every row it touches; the instructor guide's "Late work and resubmissions" gives the
rules, how a Canvas ``LATE`` name is timed among them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.status import NOT_GRADED

KEEP_CHOICES = ("latest", "best")
DAY_S = 86_400.0


@dataclass(frozen=True)
class LatePolicy:
    """A stated late policy.

    Raises
    ------
    ValueError
        If ``due`` has no time zone, ``penalty_per_day`` is not in [0, 1] or ``keep`` is not a choice.
    """

    #: The due time (aware); None if nothing is late.
    due: dt.datetime | None = None
    #: Fraction of the score taken off per started day late, 0 to 1.
    penalty_per_day: float = 0.0
    #: ``"latest"``, ``"best"`` or None (every copy flagged, none picked).
    keep: str | None = None
    #: When the grading run started (by default when the policy is made, before grading).
    run_started: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC), compare=False)

    def __post_init__(self) -> None:
        if self.due is not None and self.due.tzinfo is None:
            raise ValueError("due must have a time zone (use parse_due)")
        if not (
            isinstance(self.penalty_per_day, int | float)
            and math.isfinite(self.penalty_per_day)
            and 0 <= self.penalty_per_day <= 1
        ):
            raise ValueError(
                f"late_penalty_per_day must be a fraction from 0 to 1 (0.1 = 10 % per day), "
                f"got {self.penalty_per_day!r}"
            )
        if self.keep is not None and self.keep not in KEEP_CHOICES:
            raise ValueError(f"keep must be one of {KEEP_CHOICES}, got {self.keep!r}")


def parse_due(text: str) -> dt.datetime:
    """A ``--due`` value (ISO 8601, ``2026-03-01T23:59-05:00``; no zone: UTC) as an aware datetime.

    Parameters
    ----------
    text : str

    Returns
    -------
    datetime

    Raises
    ------
    ValueError
        If it is not an ISO 8601 date and time.
    """
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"due must be an ISO 8601 date and time such as 2026-03-01T23:59-05:00, got {text!r}"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def days_late(submitted: dt.datetime | None, due: dt.datetime | None) -> int:
    """Started days after ``due``, ``ceil(seconds late / 86 400)``: 0 on time or either unknown.

    Parameters
    ----------
    submitted, due : datetime or None
        When it was handed in, and the due time (aware).

    Returns
    -------
    int
    """
    if submitted is None or due is None:
        return 0
    seconds = (submitted - due).total_seconds()
    return math.ceil(seconds / DAY_S) if seconds > 0 else 0


def late_factor(days: int, penalty_per_day: float) -> float:
    """What is left of a score ``days`` days late: ``max(0, 1 - days x penalty)``.

    Parameters
    ----------
    days : int
    penalty_per_day : float
        Fraction taken off per day, 0 to 1.

    Returns
    -------
    float
    """
    return max(0.0, 1.0 - days * penalty_per_day)


def _stamp(when: dt.datetime | None) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ") if when else "unknown"


def _apply_lateness(sub: Submission, policy: LatePolicy) -> bool:
    """Set ``sub``'s late factor and note; True when its file time cannot be its hand-in time."""
    ident = sub.identity
    if ident is None:
        return False
    if policy.due is None:
        if ident.late_marker:
            sub.notes.append("Canvas marked it LATE; no --due given, no penalty")
        return False
    when = f"handed in {_stamp(ident.submitted_at)} ({ident.time_source or 'no time'})"
    due = f"due {_stamp(policy.due)}"
    if ident.canvas_named and not ident.late_marker:
        sub.notes.append(
            f"on time per Canvas's name (no LATE marker), {due}; its file time "
            f"{_stamp(ident.submitted_at)} is when it was copied or unzipped, not used"
        )
        return False
    days = days_late(ident.submitted_at, policy.due)
    why = odd = ""
    if ident.late_marker and ident.submitted_at is not None:
        if ident.submitted_at > policy.run_started:
            odd = f"its file time is after this grading run started ({_stamp(policy.run_started)})"
        elif ident.submitted_at < policy.due:
            odd = "its file time is before --due although Canvas marked it LATE"
        if odd:
            odd += ", so it is not when it was handed in"
    if ident.late_marker and days == 0:
        days, why = 1, "Canvas marked it LATE and its time is not after --due: counted as 1 day"
    if days == 0:
        sub.notes.append(f"on time: {when}, {due}")
        return False
    sub.late_factor = late_factor(days, policy.penalty_per_day)
    sub.late_note = f"LATE {days} day(s): {when}, {due}" + "".join(
        f"; {text}" for text in (why, odd) if text
    )
    penalty = f"total x {sub.late_factor:g} (--late-penalty-per-day {policy.penalty_per_day:g})"
    sub.notes.append(f"{sub.late_note}; {penalty}")
    return bool(odd)


def implausible_times_warning(files: Sequence[str]) -> str:
    """The one warning for LATE files whose file time cannot be their hand-in time ("" if none).

    Parameters
    ----------
    files : sequence of str
        Those files (:func:`apply_policy` returns them).

    Returns
    -------
    str
    """
    if not files:
        return ""
    shown = ", ".join(files[:5]) + (", ..." if len(files) > 5 else "")
    return (
        f"warning: {len(files)} file(s) Canvas marked LATE have a file time after this run "
        f"started or before --due ({shown}): that time is not when they were handed in, so "
        "their days late rest on the LATE marker alone (see their notes)"
    )


def _order_key(sub: Submission) -> tuple:
    ident = sub.identity
    when = ident.submitted_at if ident is not None and ident.submitted_at else None
    stamp = when.timestamp() if when else float("-inf")
    return (stamp, ident.resubmission if ident is not None else 0, sub.file)


def apply_policy(submissions: Sequence[Submission], policy: LatePolicy) -> list[str]:
    """Apply the late penalty and the ``--keep`` choice to graded rows, noting both in each.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded rows; their ``late_factor``, ``late_note``, ``counted`` and ``notes`` are set.
    policy : LatePolicy

    Returns
    -------
    list of str
        LATE files with an implausible file time, for :func:`implausible_times_warning`.
    """
    graded = [s for s in submissions if s.status not in NOT_GRADED]
    implausible = [sub.file for sub in graded if _apply_lateness(sub, policy)]
    if policy.keep is None:
        return implausible
    groups: dict[str, list[Submission]] = {}
    for sub in graded:
        groups.setdefault(sub.student.casefold(), []).append(sub)
    for subs in groups.values():
        if len(subs) < 2:
            continue
        ordered = sorted(subs, key=_order_key)
        if policy.keep == "latest":
            chosen = ordered[-1]
        else:  # the highest total; the later one on a tie
            chosen = max(enumerate(ordered), key=lambda pair: (pair[1].total, pair[0]))[1]
        for sub in subs:
            if sub.duplicate_note and sub.duplicate_note in sub.notes:
                sub.notes.remove(sub.duplicate_note)
            if sub is chosen:
                sub.notes.insert(
                    0, f"COUNTED (--keep {policy.keep}): 1 of {len(subs)} submissions of this ID"
                )
            else:
                sub.counted = False
                sub.notes.insert(
                    0, f"NOT COUNTED (--keep {policy.keep}): {chosen.file} counts for this ID"
                )
    return implausible
