"""The short path of :mod:`lesson_lib.model.presets`: its public names, the same objects."""

from lesson_lib.model.presets import *  # noqa: F403
