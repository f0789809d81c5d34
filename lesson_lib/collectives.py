"""The short path of :mod:`lesson_lib.model.collectives`: its public names, the same objects."""

from lesson_lib.model.collectives import *  # noqa: F403
