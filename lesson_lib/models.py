"""The presets under a second short name: :mod:`lesson_lib.model.presets`, e.g. ``lesson_lib.models.PRESETS``."""

from lesson_lib.model.presets import *  # noqa: F403
