"""Stop each page's kernel at once when its cells have run, instead of asking it to.

MyST-NB's cache mode executes a page with jupyter-cache's
``single_nb_execution``, which leaves nbclient's default *graceful* shutdown:
jupyter_client sends ``shutdown_request`` and polls for the kernel to exit,
sending SIGTERM only after half of ``shutdown_wait_time`` (2.5 s). ipykernel
7 does not always exit: its control thread, after answering the request,
flushes ``sys.stdout`` through the IOPub thread while the main thread is
already stopping that thread, and waits until SIGTERM. A page that hits it
costs about 3 s more. No ipykernel issue reports it; the same hang is
posit-dev/positron issue 7142
(https://github.com/posit-dev/positron/issues/7142). Killing the kernel
loses nothing: the executed notebook is complete before it stops.

MyST-NB has no setting for nbclient's ``shutdown_kernel``, so the function
it calls is given one (the only patch of another package's code in the
build). It can go when an ipykernel release stops
gracefully every time: ``benchmarks/speed.py`` prints a one-cell notebook's
slowest graceful stop beside the immediate one, and ``benchmarks/README.md``
has an 80-notebook re-test.
"""

from __future__ import annotations

import functools

#: nbclient's ``shutdown_kernel`` for the build's pages.
KERNEL_SHUTDOWN = "immediate"


def stop_page_kernels_at_once() -> None:
    """Make MyST-NB's cache-mode execution pass ``shutdown_kernel`` = :data:`KERNEL_SHUTDOWN`.

    Safe to call more than once: an already wrapped function is left alone.
    """
    import myst_nb.core.execute.cache as myst_cache

    current = myst_cache.single_nb_execution
    if getattr(current, "keywords", {}).get("shutdown_kernel") == KERNEL_SHUTDOWN:
        return
    myst_cache.single_nb_execution = functools.partial(current, shutdown_kernel=KERNEL_SHUTDOWN)
