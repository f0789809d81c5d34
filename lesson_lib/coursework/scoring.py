"""Grader step: score a run's answers, each check stopped after :data:`CHECK_SECONDS`.

The answers are scored here, outside the sandbox, with :func:`~lesson_lib.coursework.check.check`
against the variant of the student the submission is graded as, so nothing a submission does can
change another's grade or pick its own variant.
"""

from __future__ import annotations

import functools
import signal
import threading

from lesson_lib.coursework.check import CLOSE_CREDIT, UNREADABLE, CheckResult, CheckTimeout, check
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.problems import PROBLEMS, reference

#: Seconds the grader gives one answer's check (it takes microseconds, readings are small).
CHECK_SECONDS = 2.0


def check_in_time(
    qid: str, answer: object, student: str | None, close_credit: float = CLOSE_CREDIT
) -> CheckResult:
    """:func:`~lesson_lib.coursework.check.check`, stopped after :data:`CHECK_SECONDS` in the main thread.

    There a ``SIGALRM`` timer interrupts a check that runs too long, and the answer scores nothing;
    in other threads no timer can be set (it only ever sees readings or literals of bounded size).

    Parameters
    ----------
    qid : str
        Problem id.
    answer : object
        A :class:`~lesson_lib.coursework.answers.Reading`, or a literal read from the source.
    student : str or None
        The normalised student ID.
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of the problem's points a close answer earns, 0 to 1.

    Returns
    -------
    CheckResult
    """
    if threading.current_thread() is not threading.main_thread():
        return check(qid, answer, student=student, close_credit=close_credit)

    def stop(signum: int, frame: object) -> None:
        raise CheckTimeout

    previous = signal.signal(signal.SIGALRM, stop)
    try:
        signal.setitimer(signal.ITIMER_REAL, CHECK_SECONDS)
        try:
            return check(qid, answer, student=student, close_credit=close_credit)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except CheckTimeout:
        why = f"Checking this answer took longer than {CHECK_SECONDS:g} s, so it was not read."
        return CheckResult(qid, UNREADABLE, why, 0.0, "<not read>")
    finally:
        signal.signal(signal.SIGALRM, previous)


def score_submission(sub: Submission, close_credit: float = CLOSE_CREDIT) -> Submission:
    """Check every problem's answer of ``sub`` (:func:`check_in_time`) against ``graded_as``.

    Parameters
    ----------
    sub : Submission
        A run's answers and the ID they are checked against.
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of a problem's points a close answer earns, 0 to 1.

    Returns
    -------
    Submission
        ``sub`` itself, its ``results`` set.
    """
    _warm_references()
    for qid in PROBLEMS:
        sub.results[qid] = check_in_time(qid, sub.answers.get(qid), sub.graded_as, close_credit)
    return sub


@functools.cache
def _warm_references() -> None:
    """Compute every problem's reference once, untimed, before any check is timed.

    The first reference of a process loads what the problems read (q19's measured tables take
    a fraction of a second, several on a loaded machine); the timer bounds the student's
    answer, not the grader's own start-up, so a right answer is never lost to it.
    """
    for qid in PROBLEMS:
        reference(qid)


def score_nothing(sub: Submission) -> Submission:
    """Give ``sub`` every problem's verdict of no answer (a row not run, or no longer graded).

    Parameters
    ----------
    sub : Submission
        The row.

    Returns
    -------
    Submission
        ``sub`` itself, its ``results`` blank.
    """
    sub.results = {q: check(q, None) for q in PROBLEMS}
    return sub
