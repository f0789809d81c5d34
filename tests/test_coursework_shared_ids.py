"""lesson_lib.coursework.shared_ids: one ID from two platform users grades neither copy."""

from pathlib import Path

from lesson_lib.coursework.check import check
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.identity import Identity
from lesson_lib.coursework.problems import PROBLEMS, reference
from lesson_lib.coursework.shared_ids import flag_shared_ids
from lesson_lib.coursework.status import Status


def _sub(sid: str, file: str, user: str) -> Submission:
    """A right, graded copy of ``sid`` handed in by platform user ``user``."""
    sub = Submission(sid, Path(file), file=file, graded_as=sid)
    sub.identity = Identity(sid, lms_user=user)
    sub.results = {q: check(q, reference(q, sid), sid) for q in PROBLEMS}
    return sub


def test_two_canvas_users_under_one_id_are_a_mismatch_and_score_nothing():
    """Jane (12345) hands in s001; Tom (12351) hands in the same ID later. Neither copy is
    graded, both name the two users, and neither is a third copy of s001 with no platform
    user (whose it is is as unknown); John's resubmission of s002 (one user) is left alone."""
    jane = _sub("s001", "smithjane_12345_1_s001_problems.ipynb", "12345")
    tom = _sub("s001", "robertstom_12351_2_s001_problems.ipynb", "12351")
    again = [_sub("s002", f"doejohn_12346_{n}_s002_problems.ipynb", "12346") for n in (3, 4)]
    plain = _sub("s001", "s001_problems.ipynb", "")
    shared = flag_shared_ids([jane, tom, *again, plain])
    assert shared == {"s001": ["12345", "12351"]}
    for sub in (jane, tom, plain):
        assert sub.status == Status.ID_MISMATCH and sub.total == 0 and sub.graded_as is None
        assert sub.notes[0].startswith(
            "ID SHARED: s001 was handed in by platform users 12345, 12351"
        )
    assert all(s.status == "ran" and s.total == 62 for s in again)
