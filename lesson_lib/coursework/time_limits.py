"""How long the grader gives a submission: one place read by the grader, the
Gradescope zip and the student edition's instructions, so none can say another number."""

from __future__ import annotations

#: Longest ``--timeout`` accepted, seconds.
MAX_TIMEOUT = 3600.0
#: Seconds a clean submission of the problem set takes to grade, kernel start included:
#: the median of six clean notebooks graded one at a time on the two-CPU build machine at a
#: load average of about 3 (``benchmarks/grading.py`` measures it on any machine).
CLEAN_RUN_S = 2.1
#: Shortest default ``--timeout``: room for a loaded machine's slow kernel start, seconds.
MIN_TIMEOUT_S = 30.0
#: Default ``--timeout``: ten clean runs, at least :data:`MIN_TIMEOUT_S`, seconds.
DEFAULT_TIMEOUT_S = max(MIN_TIMEOUT_S, 10 * CLEAN_RUN_S)
#: Seconds allowed after the notebook's own limit for the kernel to start, stop and report.
GRACE_S = 60.0
