"""One student ID handed in by two platform users: neither copy is graded.

That is no resubmission (one handed in the other's notebook, or typed the other's ID), so
``--keep`` must not pick one; :func:`flag_shared_ids` finds them by each row's platform user
(``lms_user`` of :class:`~lesson_lib.coursework.identity.Identity`) for the instructor to decide.
"""

from __future__ import annotations

from collections.abc import Sequence

from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.scoring import score_nothing
from lesson_lib.coursework.status import Status
from lesson_lib.model._safe_io import printable


def flag_shared_ids(submissions: Sequence[Submission]) -> dict[str, list[str]]:
    """Make every copy of an ID two platform users handed in an ``ID mismatch``, scoring 0.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded rows; the shared ones get the status, ``id_shared``, blank results, no ``graded_as``
        (no feedback page, no TA row) and a note first in their notes.

    Returns
    -------
    dict
        Shared ID (case-folded) -> the platform users who handed it in, sorted.
    """
    users: dict[str, set[str]] = {}
    for sub in submissions:
        user = sub.identity.lms_user if sub.identity is not None else ""
        if user and sub.graded_as is not None:
            users.setdefault(sub.graded_as.casefold(), set()).add(user)
    shared = {sid: sorted(found) for sid, found in users.items() if len(found) > 1}
    for sub in submissions:
        if sub.graded_as is None or sub.graded_as.casefold() not in shared:
            continue
        names = ", ".join(printable(u, 40) for u in shared[sub.graded_as.casefold()])
        sub.status, sub.id_shared, sub.manual = Status.ID_MISMATCH, True, {}
        score_nothing(sub)
        sub.notes.insert(
            0,
            f"ID SHARED: {sub.graded_as} was handed in by platform users {names}; "
            "nothing graded for any of them, decide whose it is",
        )
        sub.graded_as = None
    return shared
