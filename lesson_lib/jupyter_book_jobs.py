"""``jupyter-book`` with Sphinx's parallel jobs, for a machine with more than one CPU.

Jupyter Book 1's ``build`` command has no ``-j`` option, but the function it
calls, ``jupyter_book.sphinx.build_sphinx``, takes ``jobs`` and passes it
to Sphinx as ``parallel``. Most of a cold build of this book is executing the
chapters, one kernel after another, which leaves a second CPU idle. With
``jobs`` above one, Sphinx reads the pages in that many processes, so MyST-NB
executes that many chapters at once (each still in its own kernel, each still
keyed in the same execution cache). On the two-CPU machine this lesson is
built on, ``benchmarks/speed.py`` built the book cold both ways back to
back: 31.7 s with two jobs, 47.1 s with one.

Run it as the ``jupyter-book`` command, with the number of jobs first::

    python -m lesson_lib.jupyter_book_jobs --jobs 2 build . -W -n --keep-going

Before a parallel build, :func:`lesson_lib.site.prepare_parallel_build`
creates the execution cache's database and falls back to one job for a book
whose pages have identical code. During it, one process at a time stores an
executed notebook in the cache (:func:`one_cache_writer_at_a_time`). Sphinx reads in parallel only if every
extension says it is safe to;
``tools/lesson_site.py`` says so for the two Jupyter Book 1 extensions that do
not (see its ``PARALLEL_SAFE_BY_REVIEW``).

Why a wrapper: asking for ``jb build -j`` is Jupyter Book issue 1735
(https://github.com/jupyter-book/jupyter-book/issues/1735); the pull request
adding it was closed because the maintainers do not vet every extension of the
toolchain for parallel builds
(https://github.com/jupyter-book/jupyter-book/pull/1955). This book vets its
own: the extensions above, and a test suite that checks every built page
(numbering, glued numbers, figures, exercises) after a parallel build.
MyST-NB itself supports it: its quickstart says it is parallel-friendly, so
``sphinx-build -j 4`` distributes the build, and the notebooks' execution,
over four processes (https://myst-nb.readthedocs.io/en/latest/quickstart.html).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

#: The lock file, in the execution cache's folder, that cache writers take.
WRITE_LOCK = "lesson-write.lock"

#: How MyST-NB's cache mode stops a page's kernel once every cell has run
#: (``nbclient.NotebookClient.shutdown_kernel``); see :func:`myst_nb_runs_build_kernels`.
KERNEL_SHUTDOWN = "immediate"


def default_jobs() -> int:
    """How many processes Sphinx should read with: the CPUs this process may use.

    Returns
    -------
    int
        At least 1.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def one_cache_writer_at_a_time(cache: Path) -> Iterator[Path]:
    """Make jupyter-cache store one executed notebook at a time across processes.

    jupyter-cache 1.0 was written for one writer. Storing a notebook creates
    its database record before writing its file, then trims the cache
    (``truncate_caches``): it lists the records to keep, then, in a second
    query, deletes every record not in that list. A record another process
    created between the two queries is deleted as "old" before its file
    exists, and the build fails with ``KeyError: 'Notebook file does not
    exist for cache record PK: n'`` (seen here with two jobs on a busy
    machine). Inside this context ``JupyterCacheBase.cache_notebook_bundle``
    holds an exclusive lock on a file in the cache's folder, so every store
    and trim is whole. Sphinx's reading processes are forked from this one and
    inherit the change. Execution itself is not serialised.

    Parameters
    ----------
    cache : pathlib.Path
        The execution cache's folder (created if missing).

    Returns
    -------
    contextlib.AbstractContextManager of pathlib.Path
        A context manager (use it in ``with``) whose value is the lock file.
    """
    from jupyter_cache.cache.main import JupyterCacheBase

    cache.mkdir(parents=True, exist_ok=True)
    lock_path = cache / WRITE_LOCK
    original = JupyterCacheBase.cache_notebook_bundle

    @functools.wraps(original)
    def store_alone(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            return original(self, *args, **kwargs)

    JupyterCacheBase.cache_notebook_bundle = store_alone
    try:
        yield lock_path
    finally:
        JupyterCacheBase.cache_notebook_bundle = original


#: How often, in seconds, a stopping kernel is polled for its exit
#: (jupyter_client polls every 0.1 s; a killed kernel is gone in milliseconds).
STOP_POLL_S = 0.005


@functools.cache
def build_kernel_manager() -> type:
    """The jupyter_client kernel manager the build's pages are executed with.

    It differs from nbclient's default (``AsyncKernelManager``) in three
    ways, none of which changes what a page computes:

    - **Private sockets.** jupyter_client's default TCP transport picks five
      free ports by binding and releasing them; the kernel binds them again
      a moment later, once it has imported itself. Another process starting
      a kernel in that moment can be handed the same port, and the kernel
      dies with ``ZMQError: Address already in use``. A parallel build starts
      two kernels at a time, and the test suite starts others beside it;
      three books built side by side here hit it once in 24 builds. This
      manager's kernel uses the ``ipc`` transport in a folder made for it
      alone (``lesson-kernel-*`` in the temporary folder), removed when the
      kernel's resources are cleaned up.
    - **Ready when it answers.** jupyter_client's ``wait_for_ready`` gets the
      kernel's ``kernel_info_reply`` and one IOPub message (so IOPub is
      connected), then reads IOPub until it has been quiet for 0.2 s. Those
      0.2 s are idle time in every page. nbclient reads IOPub by the
      ``msg_id`` of each cell's request and skips anything else, so the
      start-up messages left unread change nothing; this manager's client
      skips the quiet wait (:func:`prompt_kernel_client`).
    - **Stopped when it exits.** After killing a kernel, jupyter_client
      polls every 0.1 s for the process to be gone; a killed kernel is gone
      in milliseconds, so the first 0.1 s sleep was pure waiting. This
      manager polls every :data:`STOP_POLL_S`.

    Measured with a one-cell ``1 + 1`` notebook (``benchmarks/speed.py``'s
    kernel row): 0.71 s with ``AsyncKernelManager`` on private sockets,
    0.41 s with this manager, the median of ten each, side by side.

    Returns
    -------
    type
        A subclass of ``jupyter_client.AsyncKernelManager`` for nbclient's
        ``kernel_manager_class``; the same class on every call.
    """
    import shutil
    import tempfile

    from jupyter_client import AsyncKernelManager
    from jupyter_client.asynchronous import AsyncKernelClient
    from traitlets import CaselessStrEnum, Type

    class BuildKernelManager(AsyncKernelManager):  # type: ignore[misc]
        """``AsyncKernelManager`` on private Unix sockets, prompt to start and stop."""

        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)
        client_factory = Type(prompt_kernel_client(), klass=AsyncKernelClient, config=True)

        def _ip_default(self) -> str:
            if self.transport != "ipc":  # configured back to TCP: jupyter_client's address
                return super()._ip_default()
            # jupyter_client names the sockets "<ip>-<n>", n counting up from 1.
            return str(Path(tempfile.mkdtemp(prefix="lesson-kernel-")) / "socket")

        async def _async_wait(self, pollinterval: float = 0.1) -> None:
            await super()._async_wait(pollinterval=min(pollinterval, STOP_POLL_S))

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            if not restart and self.transport == "ipc":
                shutil.rmtree(Path(self.ip).parent, ignore_errors=True)

    return BuildKernelManager


@functools.cache
def prompt_kernel_client() -> type:
    """A jupyter_client kernel client that is ready as soon as the kernel answers.

    ``wait_for_ready`` asks for ``kernel_info`` until the reply arrives on
    the shell channel and a message arrives on IOPub (proof that IOPub is
    connected, or the kernel's output could be lost), exactly as
    jupyter_client does, but then returns instead of reading IOPub until it
    has been quiet for 0.2 s. See :func:`build_kernel_manager` for why that
    is safe under nbclient.

    Returns
    -------
    type
        A subclass of ``jupyter_client.asynchronous.AsyncKernelClient``; the
        same class on every call.
    """
    import time
    from queue import Empty

    from jupyter_client.asynchronous import AsyncKernelClient

    class PromptKernelClient(AsyncKernelClient):  # type: ignore[misc]
        """``AsyncKernelClient`` without the 0.2 s quiet wait when it starts."""

        async def wait_for_ready(self, timeout: float | None = None) -> None:
            deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
            while True:
                self.kernel_info()
                try:
                    reply = await self.shell_channel.get_msg(timeout=1)
                except Empty:
                    pass
                else:
                    if reply["msg_type"] == "kernel_info_reply":
                        try:  # IOPub connected? Else ask again, as jupyter_client does.
                            await self.iopub_channel.get_msg(timeout=0.2)
                        except Empty:
                            pass
                        else:
                            self._handle_kernel_info_reply(reply)
                            return
                if not await self.is_alive():
                    raise RuntimeError("Kernel died before replying to kernel_info")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    return PromptKernelClient


def build_execution_options() -> dict[str, object]:
    """The nbclient options every page of the build is executed with.

    Returns
    -------
    dict
        Keyword arguments for ``nbclient.NotebookClient`` (or jupyter-cache's
        ``single_nb_execution``, which passes them on): ``shutdown_kernel``
        (:data:`KERNEL_SHUTDOWN`) and ``kernel_manager_class``
        (:func:`build_kernel_manager`). See
        :func:`myst_nb_runs_build_kernels` for why.
    """
    return {
        "shutdown_kernel": KERNEL_SHUTDOWN,
        "kernel_manager_class": build_kernel_manager(),
    }


@contextlib.contextmanager
def myst_nb_runs_build_kernels() -> Iterator[str]:
    """Make MyST-NB's kernels safe to run side by side and stop them when done.

    MyST-NB's cache mode executes a page with jupyter-cache's
    ``single_nb_execution``, which leaves nbclient's defaults. Inside this
    context the function MyST-NB calls passes two of its own
    (:func:`build_execution_options`):

    - ``shutdown_kernel="immediate"``. nbclient's default is a *graceful*
      shutdown: jupyter_client sends ``shutdown_request`` and polls every
      0.1 s for the kernel to exit, sending SIGTERM only after half of
      ``shutdown_wait_time`` (2.5 s). ipykernel 7.4 does not always exit:
      its control thread, after answering the request, flushes
      ``sys.stdout`` through the IOPub thread while the main thread is
      already stopping that thread, and waits for a flush that never comes
      until SIGTERM. Measured here, 8 of 80 one-cell notebooks took 4.0 s
      instead of 0.7 s, every time in that wait. Killed at once (its
      process group, as the coursework grader already does), the kernel has
      nothing left to lose: the executed notebook is complete before it
      stops, and a child process a cell left behind goes with it.
    - ``kernel_manager_class``: :func:`build_kernel_manager`, so two kernels
      started at once cannot be given the same TCP port, and a kernel is
      ready as soon as it answers and gone as soon as it exits.

    Returns
    -------
    contextlib.AbstractContextManager of str
        A context manager (use it in ``with``) whose value is
        :data:`KERNEL_SHUTDOWN`.
    """
    import myst_nb.core.execute.cache as myst_cache

    original = myst_cache.single_nb_execution
    myst_cache.single_nb_execution = functools.partial(original, **build_execution_options())
    try:
        yield KERNEL_SHUTDOWN
    finally:
        myst_cache.single_nb_execution = original


def main(argv: list[str] | None = None) -> int:
    """Run Jupyter Book's command line with ``build_sphinx`` given ``jobs``.

    Parameters
    ----------
    argv : list of str, optional
        ``["--jobs", "N", ...]`` followed by the arguments of ``jupyter-book``
        (``build . -W ...``); defaults to ``sys.argv[1:]``. Without ``--jobs``,
        :func:`default_jobs`.

    Returns
    -------
    int
        The command's exit status.

    Raises
    ------
    ValueError
        If ``--jobs`` is not followed by a whole number of at least 1.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    jobs = default_jobs()
    if args[:1] == ["--jobs"]:
        value = args[1] if len(args) > 1 else ""
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"--jobs must be a whole number of at least 1, got {value!r}")
        jobs, args = int(value), args[2:]

    writers = contextlib.nullcontext()
    if jobs > 1 and args[:1] == ["build"]:
        from lesson_lib.site import execution_cache, prepare_parallel_build

        # the book is the positional argument naming a folder with a _toc.yml
        books = [a for a in args[1:] if not a.startswith("-") and (Path(a) / "_toc.yml").is_file()]
        if books:
            book = Path(books[0]).resolve()
            jobs, why = prepare_parallel_build(book, jobs)
            writers = one_cache_writer_at_a_time(execution_cache(book))
        else:
            jobs, why = 1, "no book folder (with a _toc.yml) among the arguments: one job"
        if why:
            print(why, flush=True)

    import jupyter_book.sphinx
    from jupyter_book.cli.main import main as jupyter_book_cli

    # The build command imports build_sphinx from this module when it runs,
    # so replacing the attribute is enough; it is put back afterwards.
    original = jupyter_book.sphinx.build_sphinx
    jupyter_book.sphinx.build_sphinx = functools.partial(original, jobs=jobs)
    try:
        with writers, myst_nb_runs_build_kernels():
            jupyter_book_cli.main(args=args, prog_name="jupyter-book")
    except SystemExit as stop:  # click exits, as the jupyter-book command does
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        jupyter_book.sphinx.build_sphinx = original
    return 0  # pragma: no cover - click always exits in standalone mode


if __name__ == "__main__":
    sys.exit(main())
