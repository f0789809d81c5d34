"""The short path of :mod:`lesson_lib.model.ring`: its public names, the same objects."""

from lesson_lib.model.ring import *  # noqa: F403
