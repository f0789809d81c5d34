"""The short path of :mod:`lesson_lib.model.layout`: its public names, the same objects."""

from lesson_lib.model.layout import *  # noqa: F403
