"""Run the grader's sandboxes side by side, results kept in the order they were asked for.

Each sandbox has its own limits and spare user id and this process only waits, so worker threads
suffice; the caller does main-thread work (each answer's check, timed by ``SIGALRM``) per result. On
a signal :func:`run_in_order` sets ``cancel``: running sandboxes are killed, their copies removed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from lesson_lib.model._validate import require_int

#: Most sandboxes run at once (each takes a kernel's memory, a few hundred MiB).
MAX_JOBS = 64
#: Seconds the main thread waits at a time, so that a signal is handled promptly.
_POLL_S = 0.5


def available_cpus() -> int:
    """CPUs this process may run on: its affinity mask, else the machine's count; at least 1.

    Returns
    -------
    int
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def require_jobs(jobs: object) -> int:
    """``jobs`` as a number of parallel sandboxes; TypeError or ValueError outside 1 .. MAX_JOBS.

    Parameters
    ----------
    jobs : int

    Returns
    -------
    int
    """
    return require_int("jobs", jobs, minimum=1, maximum=MAX_JOBS)


def run_in_order(
    work: Callable[[Any, threading.Event], Any], items: Sequence[Any], jobs: int
) -> Iterator[Any]:
    """Yield ``work(item, cancel)`` for each item, in the items' order, ``jobs`` at a time.

    With ``jobs`` 1 everything runs in the calling thread; otherwise in worker threads, each result
    yielded once it and those before it are ready, an exception where its result would be.

    Parameters
    ----------
    work : callable
        ``work(item, cancel)``; it should stop early once ``cancel`` is set.
    items : sequence
    jobs : int

    Returns
    -------
    iterator
    """
    jobs = require_jobs(jobs)
    cancel = threading.Event()
    if jobs == 1:
        for item in items:
            yield work(item, cancel)
        return
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grade")
    futures: list[Future[Any]] = []
    try:
        futures = [pool.submit(work, item, cancel) for item in items]
        for future in futures:
            while not future.done():  # in short slices, so the main thread still sees signals
                wait([future], timeout=_POLL_S, return_when=FIRST_COMPLETED)
            yield future.result()
    except BaseException:
        # Ctrl-C, SIGTERM, or the caller gave up: stop every sandbox, wait for them
        cancel.set()
        for future in futures:
            future.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
