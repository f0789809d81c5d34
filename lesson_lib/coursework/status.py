"""What became of a submission: one status per graded row, as the grades CSV writes it.

:class:`Status`, a ``str`` enum, is written and compared as its text (``"ran"``, ``"ID mismatch"``).
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A graded row's status (its text is the grades CSV's ``status`` cell)."""

    RAN = "ran"
    RAN_WITH_ERRORS = "ran with errors"
    OUT_OF_SPACE = "out of space"
    TIMED_OUT = "timed out"
    KERNEL_DIED = "kernel died"
    COULD_NOT_RUN = "could not run"
    NOT_A_NOTEBOOK = "not a notebook"
    #: A file whose name is not a valid student ID (not run, no score).
    INVALID_ID = "invalid ID"
    #: File name, metadata and roster disagree (not run, no score).
    ID_MISMATCH = "ID mismatch"
    #: No student ID, or one not on the roster (not run, no score).
    UNKNOWN_ID = "unknown ID"
    #: It ran, and its code calls ``reference(`` or imports the problem bank.
    ANSWER_LOOKUP = "answer lookup"
    #: A copy of an ID that the ``--keep`` policy did not pick (graded, not counted).
    NOT_COUNTED = "not counted"


#: The statuses a runner's record may report; anything else is ``could not run``.
RUN_STATUSES = frozenset(
    {Status.RAN, Status.TIMED_OUT, Status.KERNEL_DIED, Status.COULD_NOT_RUN, Status.NOT_A_NOTEBOOK}
)
#: Rows not run for their identity, since whose they are is not known.
IDENTITY_FAILURES = frozenset({Status.ID_MISMATCH, Status.UNKNOWN_ID, Status.INVALID_ID})
#: Rows that are nobody's answers, left out by the late policy, the Canvas file and the report.
NOT_GRADED = IDENTITY_FAILURES | {Status.NOT_A_NOTEBOOK}
#: A notebook that ran to its end; a lookup or a full disk is noted over it.
RAN_TO_END = frozenset({Status.RAN, Status.RAN_WITH_ERRORS})
