"""The short path of :mod:`lesson_lib.model.memory`: its public names, the same objects."""

from lesson_lib.model.memory import *  # noqa: F403
