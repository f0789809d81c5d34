"""The short path of :mod:`lesson_lib.model.units`: its public names, the same objects."""

from lesson_lib.model.units import *  # noqa: F403
