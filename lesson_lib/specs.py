"""The short path of :mod:`lesson_lib.model.specs`: its public names, the same objects."""

from lesson_lib.model.specs import *  # noqa: F403
