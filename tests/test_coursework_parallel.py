"""lesson_lib.coursework.parallel: results in the items' order whatever finishes first, cancelling."""

import os
import threading
import time

import pytest

from lesson_lib.coursework.parallel import MAX_JOBS, available_cpus, require_jobs, run_in_order


def test_results_come_in_the_items_order_when_later_items_finish_first():
    """Each item waits for the next one to finish (item 2 first, then 1, then 0), which only
    workers running side by side can do; item 0, finished last, is still yielded first."""
    finished = []
    done = [threading.Event() for _ in range(3)]

    def work(item, cancel):
        if item < 2:
            assert done[item + 1].wait(30), "the items did not run side by side"
        finished.append(item)
        done[item].set()
        return item * 10

    assert list(run_in_order(work, [0, 1, 2], 3)) == [0, 10, 20]
    assert finished == [2, 1, 0]  # they did run side by side


@pytest.mark.parametrize("jobs", [1, 2, 5])
def test_every_jobs_value_gives_the_same_list(jobs):
    assert list(run_in_order(lambda i, c: i * i, list(range(7)), jobs)) == [
        0, 1, 4, 9, 16, 25, 36,
    ]  # fmt: skip


def test_jobs_one_runs_in_the_calling_thread():
    """Serial grading keeps the checks' SIGALRM timer usable: no worker thread."""
    names = list(run_in_order(lambda i, c: threading.current_thread().name, [1, 2], 1))
    assert names == [threading.main_thread().name] * 2


def test_an_error_comes_out_where_its_result_would_have():
    def work(item, cancel):
        if item == 1:
            raise RuntimeError("item 1 failed")
        return item

    results = run_in_order(work, [0, 1, 2], 2)
    assert next(results) == 0
    with pytest.raises(RuntimeError, match="item 1 failed"):
        next(results)


def test_stopping_early_sets_cancel_for_the_running_workers():
    """Closing the generator (as an interrupt in the main thread does) sets the event the
    workers watch: a worker waiting on it returns at once instead of after its 30 s."""
    seen = []
    waiting = threading.Event()

    def work(item, cancel):
        if item == 0:
            assert waiting.wait(30)  # item 1 is running
            return item
        waiting.set()
        seen.append(cancel.wait(30))
        return item

    results = run_in_order(work, [0, 1], 2)
    assert next(results) == 0
    started = time.monotonic()
    results.close()
    assert time.monotonic() - started < 10
    assert seen == [True]


@pytest.mark.parametrize("bad", [0, -1, MAX_JOBS + 1])
def test_jobs_out_of_range_is_refused_with_the_range(bad):
    with pytest.raises(ValueError, match=f"jobs must be an integer from 1 to {MAX_JOBS}"):
        require_jobs(bad)


def test_jobs_must_be_an_integer():
    with pytest.raises(TypeError, match="jobs must be an integer"):
        require_jobs(2.0)


def test_available_cpus_is_this_processes_affinity():
    assert available_cpus() == len(os.sched_getaffinity(0))
