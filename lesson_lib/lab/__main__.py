"""``python -m lesson_lib.lab``: see :mod:`lesson_lib.lab.cli`."""

import os
import sys

from lesson_lib.lab.cli import main
from lesson_lib.model._safe_io import stop_on_signals

try:
    with stop_on_signals():  # SIGTERM and SIGHUP end a run as Ctrl-C does: cleanly
        status = main()
    sys.stdout.flush()
except BrokenPipeError:  # output piped into `head` and cut short: not an error
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 0
except KeyboardInterrupt as stop:  # stopped outside a command (while starting up)
    status = 128 + getattr(stop, "signum", 2)
raise SystemExit(status)
