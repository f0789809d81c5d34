"""The short path of :mod:`lesson_lib.model.specimen`: its public names, the same objects."""

from lesson_lib.model.specimen import *  # noqa: F403
