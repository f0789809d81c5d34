"""``python -m lesson_lib.lab``: see :mod:`lesson_lib.lab.cli`."""

import os
import sys

from lesson_lib.lab.cli import main

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:  # output piped into `head` and cut short: not an error
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 0
raise SystemExit(status)
