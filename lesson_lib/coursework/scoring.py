"""Grader step: score a run's answers, each check stopped after :data:`CHECK_SECONDS`.

Answers are scored outside the sandbox by :func:`~lesson_lib.coursework.check.check` against the
graded-as student's variant, so no submission can change another's grade or pick its own variant.
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


def _check_in_time(
    qid: str, answer: object, student: str | None, close_credit: float = CLOSE_CREDIT
) -> CheckResult:
    """The verdict, stopped after :data:`CHECK_SECONDS` by a main-thread ``SIGALRM`` (the answer
    then scores 0); other threads set no timer and see only readings or bounded literals."""
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
    """Score ``sub``'s answers for ``graded_as``, each check in :data:`CHECK_SECONDS`; return it.

    Parameters
    ----------
    sub : Submission
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`

    Returns
    -------
    Submission
    """
    _warm_references()
    for qid in PROBLEMS:
        sub.results[qid] = _check_in_time(qid, sub.answers.get(qid), sub.graded_as, close_credit)
    return sub


@functools.cache
def _warm_references() -> None:
    """Compute each reference once, untimed, before checks are timed: the first loads q19's measured
    tables (seconds on a loaded machine); the timer bounds the answer, not the grader's start-up."""
    for qid in PROBLEMS:
        reference(qid)


def score_nothing(sub: Submission) -> Submission:
    """Give ``sub`` every problem's verdict of no answer (not run, or no longer graded); return it.

    Parameters
    ----------
    sub : Submission

    Returns
    -------
    Submission
    """
    sub.results = {q: check(q, None) for q in PROBLEMS}
    return sub
