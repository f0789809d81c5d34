"""Shared test settings: a hypothesis profile that stays quick on 2 cores; the session's
book build; an early start for the hostile submissions' grading run."""

from hypothesis import settings

settings.register_profile("lesson", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("lesson")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def built_book():
    """The book built once per test session with the same command as `make book`."""
    from lesson_lib.site import build_book

    return build_book()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the hostile submissions' grading run now if its tests are to run.

    It is a minute of mostly waiting (see ``tests/test_coursework_hostile.py``)
    that overlaps the tests before it instead of adding to the session.
    """
    if session.config.option.collectonly or hasattr(session.config, "workerinput"):
        return  # nothing will run here, or each pytest-xdist worker would start one
    for item in session.items:
        if item.path.name == "test_coursework_hostile.py":
            item.module.start_in_background()
            _EARLY_STARTS.append(item.module)
            return


_EARLY_STARTS: list = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Leave no background run behind, whatever happened to the session."""
    for module in _EARLY_STARTS:
        module.stop_background()
