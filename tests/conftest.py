"""Shared test settings: a hypothesis profile that stays quick on 2 cores."""

from hypothesis import settings

settings.register_profile("lesson", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("lesson")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def built_book():
    """The book built once per test session with the same command as `make book`."""
    from lesson_lib.site import build_book

    return build_book()
