"""The short path of :mod:`lesson_lib.model.step_time`: its public names, the same objects."""

from lesson_lib.model.step_time import *  # noqa: F403
