"""The short path of :mod:`lesson_lib.model.hf_config`: its public names, the same objects."""

from lesson_lib.model.hf_config import *  # noqa: F403
