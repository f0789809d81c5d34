"""Shared test settings: a hypothesis profile that stays quick on 2 cores."""

from hypothesis import settings

settings.register_profile("lesson", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("lesson")
