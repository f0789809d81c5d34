"""Jupyter Book's build with Sphinx's parallel jobs, on a real six-page book."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lesson_lib.jupyter_book_jobs import default_jobs, main
from lesson_lib.site import (
    MYST_NOTEBOOK_FRONT_MATTER,
    build_book,
    copy_site_config,
    execution_cache,
    pages_with_the_same_code,
    prepare_parallel_build,
)

PAGE = (
    MYST_NOTEBOOK_FRONT_MATTER
    + """\
# Page {n}

```{{code-cell}} ipython3
import os

print("pid", os.getpid(), "page", {n})
```
"""
)


#: Sphinx reads in parallel only when more than five pages are to be read.
NAMES = ("index", "second", "third", "fourth", "fifth", "sixth")


def small_book(dest: Path, identical: bool = False) -> Path:
    """A book of six executed pages with the lesson's configuration and extension.

    With ``identical`` every page has the same code (that of page 0).
    """
    copy_site_config(dest)
    (dest / "book").mkdir()
    for n, name in enumerate(NAMES):
        (dest / "book" / f"{name}.md").write_text(PAGE.format(n=0 if identical else n))
    chapters = "".join(f"  - file: book/{name}\n" for name in NAMES[1:])
    (dest / "_toc.yml").write_text(f"format: jb-book\nroot: book/index\nchapters:\n{chapters}")
    return dest


@pytest.mark.slow
def test_two_jobs_read_and_execute_in_parallel_without_warnings(tmp_path):
    """With two jobs Sphinx reads in worker processes, executes every page, and -W holds.

    On its parallel path Sphinx reports reading progress once per chunk of
    pages (two lines here); read serially, once per page (six). A
    serial fallback (an extension not declared parallel-safe) is a warning,
    which -W turns into a failed build.
    """
    root = small_book(tmp_path / "book")
    result = build_book(root, jobs=2)
    output = result.output
    assert result.returncode == 0, output[-3000:]
    assert "doing serial read" not in output
    progress = [line for line in output.splitlines() if "reading sources..." in line]
    assert 1 <= len(progress) < len(NAMES), output[-3000:]
    for n, name in enumerate(NAMES):
        html = (root / "_build" / "html" / "book" / f"{name}.html").read_text()
        assert f"page {n}" in html  # the cell ran and its output is on the page


@pytest.mark.slow
def test_a_failing_page_fails_the_parallel_build(tmp_path):
    """An error in a page's code still stops the build when pages run in workers."""
    root = small_book(tmp_path / "book")
    page = root / "book" / "second.md"
    page.write_text(
        page.read_text().replace('print("pid"', 'raise RuntimeError("boom"); print("pid"')
    )
    result = build_book(root, jobs=2)
    output = result.output
    assert result.returncode != 0
    assert "RuntimeError" in output
    progress = [line for line in output.splitlines() if "reading sources..." in line]
    assert len(progress) < len(NAMES)  # it was the parallel path that failed


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_jobs_must_be_a_whole_number_of_at_least_one(value):
    """A bad --jobs names the option and the value instead of building anything."""
    argv = ["--jobs", value] if value else ["--jobs"]
    with pytest.raises(ValueError, match="--jobs must be a whole number of at least 1"):
        main(argv)


def test_default_jobs_follows_the_cpus_a_process_may_use():
    """A process pinned to one CPU builds with one job; unpinned, with no more than the CPUs."""
    pinned = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from lesson_lib.jupyter_book_jobs import default_jobs; print(default_jobs())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert pinned.stdout.strip() == "1"
    assert 1 <= default_jobs() <= (os.cpu_count() or 1)


def test_pages_with_the_same_code_are_found(tmp_path):
    """Identical pages form one group; the lesson's own pages are all distinct."""
    assert pages_with_the_same_code(small_book(tmp_path / "distinct")) == []
    twins = pages_with_the_same_code(small_book(tmp_path / "twins", identical=True))
    assert twins == [[f"book/{name}" for name in NAMES]]
    assert pages_with_the_same_code() == []


@pytest.mark.slow
def test_a_book_with_identical_pages_is_built_with_one_job(tmp_path):
    """Two jobs would race for the one cache entry; the build says so and uses one."""
    root = small_book(tmp_path / "book", identical=True)
    result = build_book(root, jobs=2)
    assert result.returncode == 0, result.output[-3000:]
    assert "building with one job" in result.output
    progress = [line for line in result.output.splitlines() if "reading sources..." in line]
    assert len(progress) == len(NAMES)  # serial: one progress line per page


def test_preparing_creates_the_cache_database_before_any_job_runs(tmp_path):
    """The tables exist before the build, so two jobs never both create them."""
    import sqlite3

    from jupyter_cache.cache.db import DB_NAME

    root = small_book(tmp_path / "book")
    database = execution_cache(root) / DB_NAME
    assert not database.exists()
    assert prepare_parallel_build(root, 2) == (2, "")
    with sqlite3.connect(database) as db:
        tables = {row[0] for row in db.execute("select name from sqlite_master")}
    assert {"settings", "nbcache", "nbproject"} <= tables
    assert execution_cache(root) == root / "_build" / ".jupyter_cache"  # from _config.yml


def test_preparing_a_book_with_identical_pages_asks_for_one_job(tmp_path):
    """The reason names the pages; one job asked for needs no preparation."""
    root = small_book(tmp_path / "book", identical=True)
    jobs, why = prepare_parallel_build(root, 2)
    assert jobs == 1
    assert "book/second" in why and "one job" in why
    assert prepare_parallel_build(root, 1) == (1, "")


def test_cache_writes_wait_for_the_write_lock(tmp_path):
    """Inside ``one_cache_writer_at_a_time`` a store waits while another process holds the lock.

    The store is jupyter-cache's real ``cache_notebook_bundle`` on a real
    cache; the other writer is a second process holding the lock file.
    """
    import threading

    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from lesson_lib.jupyter_book_jobs import one_cache_writer_at_a_time

    cache_dir = tmp_path / "cache"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1 + 1", execution_count=1)]
    with one_cache_writer_at_a_time(cache_dir) as lock_path:
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
                "print('held', flush=True); sys.stdin.readline()",
                str(lock_path),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout.readline() == "held\n"
            cache = get_cache(str(cache_dir))
            stored = []
            writer = threading.Thread(
                target=lambda: stored.append(
                    cache.cache_notebook_bundle(CacheBundleIn(nb, "page.ipynb"), overwrite=True)
                )
            )
            writer.start()
            writer.join(timeout=1.0)
            assert writer.is_alive() and stored == [], "the store did not wait for the lock"
            holder.stdin.write("done\n")
            holder.stdin.flush()
            writer.join(timeout=60)
            assert len(stored) == 1 and not writer.is_alive()
            assert cache.get_cache_bundle(stored[0].pk).nb.cells[0].source == "1 + 1"
        finally:
            holder.kill()
            holder.wait()
            holder.stdin.close()
            holder.stdout.close()
    from jupyter_cache.cache.main import JupyterCacheBase

    assert JupyterCacheBase.cache_notebook_bundle.__name__ == "cache_notebook_bundle"
    assert not hasattr(JupyterCacheBase.cache_notebook_bundle, "__wrapped__")


def run_in_own_loop(make_coroutine):
    """Run ``make_coroutine()`` to completion on a new event loop in a thread of its own.

    ``asyncio.run`` refuses to start in a thread whose loop is running, as
    the main thread's is after a browser test in the same worker.
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make_coroutine())).result()


def exit_handler_notebook(marker: Path):
    """A one-cell notebook whose kernel writes ``marker`` when it exits on its own."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import atexit, pathlib\n"
            "from ipykernel.connect import get_connection_info\n"
            f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'ran')\n"
            "info = get_connection_info(unpack=True)\n"
            "print(info['transport'], info['ip'])"
        )
    ]
    return nb


def test_myst_nb_kills_each_kernel_when_its_page_is_done(tmp_path):
    """Inside ``myst_nb_runs_build_kernels`` MyST-NB's kernels use private sockets and are killed.

    The page's cell reports the kernel's transport and socket path, and
    registers an exit handler that writes a file. A kernel asked to shut down
    gracefully runs it as it exits; a killed kernel never does. The socket
    folder is gone afterwards, and the function MyST-NB calls is its own once
    the context ends.
    """
    import myst_nb.core.execute.cache as myst_cache

    from lesson_lib.jupyter_book_jobs import KERNEL_SHUTDOWN, myst_nb_runs_build_kernels

    original = myst_cache.single_nb_execution
    marker = tmp_path / "exit-handler-ran"
    nb = exit_handler_notebook(marker)
    with myst_nb_runs_build_kernels() as mode:
        result = myst_cache.single_nb_execution(
            nb, cwd=str(tmp_path), timeout=120, allow_errors=False
        )
    assert mode == KERNEL_SHUTDOWN == "immediate"
    assert result.err is None, result.exc_string
    transport, ip = nb.cells[0].outputs[0]["text"].split()
    assert transport == "ipc", "the kernel listened on TCP ports"
    socket_folder = Path(ip).parent
    assert socket_folder.name.startswith("lesson-kernel-")
    assert not socket_folder.exists(), "the kernel's socket folder was left behind"
    assert not marker.exists(), "the kernel exited on its own instead of being killed"
    assert myst_cache.single_nb_execution is original


def test_a_kernel_shut_down_gracefully_runs_its_exit_handlers(tmp_path):
    """The control for the test above: without the context, the handler runs.

    Up to three tries: about one graceful shutdown in ten hangs in ipykernel
    7.4 and ends with SIGTERM, which skips exit handlers (the hang that
    ``myst_nb_runs_build_kernels`` avoids); three in a row would be one in a
    thousand.
    """
    from jupyter_cache.executors.utils import single_nb_execution

    marker = tmp_path / "exit-handler-ran"
    for _ in range(3):
        nb = exit_handler_notebook(marker)
        result = single_nb_execution(nb, cwd=str(tmp_path), timeout=120, allow_errors=False)
        assert result.err is None, result.exc_string
        if marker.exists():
            break
    assert marker.read_text() == "ran"


def test_a_build_kernel_is_ready_without_waiting_for_iopub_to_go_quiet(tmp_path):
    """The build's client returns once the kernel answers, leaving IOPub unread.

    jupyter_client's own ``wait_for_ready`` reads IOPub until it has been
    quiet for 0.2 s, so the ``idle`` status of its ``kernel_info`` request is
    always consumed. The build's client returns after the reply and one IOPub
    message, so that status is still there to read; nbclient skips it by its
    ``msg_id``. Then a cell runs as usual on the same client.
    """
    from lesson_lib.jupyter_book_jobs import build_kernel_manager, prompt_kernel_client

    async def start_and_run() -> tuple[list[str], str]:
        km = build_kernel_manager()(kernel_name="python3")
        await km.start_kernel(cwd=str(tmp_path))
        kc = km.client()
        assert isinstance(kc, prompt_kernel_client())
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            left = []  # the kernel_info request's IOPub messages not yet read
            while "idle" not in left:
                msg = await kc.get_iopub_msg(timeout=10)  # Empty (an error) if drained
                if msg["parent_header"].get("msg_type") == "kernel_info_request":
                    left.append(msg["content"].get("execution_state", msg["msg_type"]))
            reply = await kc.execute_interactive("print(6 * 7)", timeout=60, output_hook=None)
            return left, reply["content"]["status"]
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    left, status = run_in_own_loop(start_and_run)
    assert "idle" in left
    assert status == "ok"


def test_a_killed_build_kernel_is_polled_for_its_exit_without_a_tenth_of_a_second_sleep(
    tmp_path, monkeypatch
):
    """Stopping a build kernel never sleeps jupyter_client's 0.1 s between polls.

    Every ``asyncio.sleep`` requested in the thread that kills the kernel,
    while it kills it and waits for it to exit, is recorded (other threads'
    sleeps are theirs): none may be as long as 0.1 s, the default poll. The
    kernel is gone afterwards.
    """
    import asyncio
    import threading

    import jupyter_client.manager

    from lesson_lib.jupyter_book_jobs import STOP_POLL_S, build_kernel_manager

    slept: list[float] = []
    real_sleep = asyncio.sleep
    killer: list[int] = []  # the thread that kills the kernel; other threads' sleeps are theirs

    async def recorded_sleep(seconds: float, *args: object) -> object:
        if threading.get_ident() in killer:
            slept.append(seconds)
        return await real_sleep(seconds, *args)

    async def start_and_kill() -> bool:
        killer.append(threading.get_ident())
        km = build_kernel_manager()(kernel_name="python3")
        await km.start_kernel(cwd=str(tmp_path))
        monkeypatch.setattr(jupyter_client.manager.asyncio, "sleep", recorded_sleep)
        await km.shutdown_kernel(now=True)
        monkeypatch.setattr(jupyter_client.manager.asyncio, "sleep", real_sleep)
        return await km.is_alive()

    assert run_in_own_loop(start_and_kill) is False
    assert slept, "the manager never polled for the kernel's exit"
    assert STOP_POLL_S in slept
    assert max(slept) < 0.1, f"slept {max(slept)} s between polls"
