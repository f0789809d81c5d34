"""Shared test settings: a hypothesis profile that stays quick on 2 cores; the session's
book build (once per run, however many pytest-xdist workers); an early start for
the hostile submissions' grading run."""

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from shared_once import WORKER_KEY, once_per_run, use_folder

settings.register_profile("lesson", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("lesson")

#: The folder this run's workers share values through (made by the xdist controller).
_SHARED: list[Path] = []


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist controller: hand every worker the run's shared folder."""
    if not _SHARED:
        _SHARED.append(Path(tempfile.mkdtemp(prefix="lesson-tests-shared-")))
    node.workerinput[WORKER_KEY] = str(_SHARED[0])


def pytest_configure(config: pytest.Config) -> None:
    """A worker shares values through the controller's folder (``tests/shared_once.py``)."""
    folder = getattr(config, "workerinput", {}).get(WORKER_KEY)
    use_folder(Path(folder) if folder else None)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The controller removes the shared folder once every worker is done."""
    for folder in _SHARED:
        shutil.rmtree(folder, ignore_errors=True)
    _SHARED.clear()


@pytest.fixture(scope="session")
def built_book():
    """The book built once per test run with the same command as `make book`.

    With several pytest-xdist workers, the first to need it builds and the
    others wait for that build and read its result.
    """
    from lesson_lib.site import build_book

    return once_per_run("built_book", build_book)


#: Modules that mostly wait (the hostile folder's minute of time limits), run
#: first: under pytest-xdist the other workers fill that minute.
RUN_FIRST = ("test_coursework_hostile.py",)

#: Modules whose tests are parametrised by page (``[book/...]``) and read the
#: shared visit of that page: pytest-xdist hands out one page's tests at a time,
#: so the workers load different pages at once.
BY_PAGE = ("test_browser_site.py",)

#: Modules pytest-xdist must give to one worker together. The MPI modules
#: check that a job leaves no shared-memory segment behind (and one of them
#: plants test segments), so two of their jobs must not overlap.
ONE_WORKER = {
    "test_lab_cli.py": "mpi",
    "test_lab_launch.py": "mpi",
    "test_lab_report.py": "mpi",
    "test_lab_sweep.py": "mpi",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Long waits first (every pytest-xdist worker sorts the same way)."""
    items.sort(key=lambda item: item.path.name not in RUN_FIRST)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadfile`` (``make test``), with the :data:`ONE_WORKER` modules as one file.

    One module's tests stay in one worker, so module fixtures (a JupyterLab
    server, the hostile grading run) are made once. The :data:`BY_PAGE`
    modules are handed out one page at a time instead. This is a scheduler, not
    ``xdist_group`` marks: ``--dist loadgroup`` no longer groups anything
    with pytest 9.2 (pytest-xdist issue 1386).
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LoadFileWithSharedUnits(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            name = Path(module).name
            page = re.search(r"\[(book/[^\]]+)\]$", nodeid)
            if name in BY_PAGE and page:
                return f"{module}::{page.group(1)}"
            return ONE_WORKER.get(name, module)

    return LoadFileWithSharedUnits(config, log)


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
