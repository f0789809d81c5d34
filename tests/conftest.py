"""Shared test settings: a hypothesis profile that stays quick on 2 cores; the session's
book build (once per run, however many pytest-xdist workers); an early start for
the hostile submissions' grading run."""

import contextlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
from hypothesis import settings
from shared_once import WORKER_KEY, once_per_run, one_at_a_time, shared_folder, use_folder

# The tests grade the public variants: an instructor's course salt in _build/instructor/
# (made by `make student IDS=...`) must not change them. A test that wants one names it.
os.environ["LESSON_COURSE_SALT_FILE"] = ""

settings.register_profile("lesson", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("lesson")

#: The folder this run's workers share values through (made by the xdist controller).
_SHARED: list[Path] = []


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist controller: hand every worker the run's shared folder.

    The controller made it in :func:`pytest_configure`, which runs first.
    """
    node.workerinput[WORKER_KEY] = str(_SHARED[0])


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--screenshots``: the browser tests also save the top of every page as a PNG."""
    parser.addoption(
        "--screenshots",
        action="store_true",
        help="save the top four screens of every page in _build/browser-screenshots/",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Share values through one folder per run (``tests/shared_once.py``).

    The first process of the run (the pytest-xdist controller, or the only
    process) makes it; a worker uses the controller's. Without workers it
    still lets the book build started early (see
    :func:`pytest_collection_finish`) and the ``built_book`` fixture share one
    build.
    """
    folder = getattr(config, "workerinput", {}).get(WORKER_KEY)
    if folder is None and not _SHARED:
        _SHARED.append(Path(tempfile.mkdtemp(prefix="lesson-tests-shared-")))
    use_folder(Path(folder) if folder else _SHARED[0])


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's first process removes the shared folder once every worker is done."""
    for folder in _SHARED:
        shutil.rmtree(folder, ignore_errors=True)
    _SHARED.clear()


@pytest.fixture(scope="session")
def built_book():
    """The book built once per test run with the same command as `make book`.

    The build starts when collection ends (:func:`pytest_collection_finish`)
    and runs beside the tests that do not need it; this waits for it. With
    several pytest-xdist workers, one builds and the others read its result.
    """
    from build_site import build_site

    return once_per_run("built_book", build_site)


@pytest.fixture(scope="session")
def site_without_solutions() -> dict:
    """The site without solutions, built once per run as ``make book-nosolutions`` builds it.

    Every page runs (minutes). Two modules read it: ``test_nosolutions_site.py``
    its HTML, and ``test_coursework_student_edition.py`` its execution cache,
    where each chapter notebook of the student edition finds the run of its
    very code cells (jupyter-cache matches a notebook by them and its kernel).

    Returns
    -------
    dict
        ``html``, ``src`` and ``cache`` (folders), ``returncode`` and ``output`` of the build.
    """
    return once_per_run("site_without_solutions", _build_site_without_solutions)


def _build_site_without_solutions() -> dict:
    import subprocess
    import sys

    from build_site import ROOT, execution_cache

    from lesson_lib.coursework.student_edition import write_site_sources

    # In the run's shared folder, so it is removed with it when the run ends.
    folder = Path(tempfile.mkdtemp(prefix="nosolutions-", dir=shared_folder()))
    src, out = folder / "src", folder / "out"
    write_site_sources(src, ROOT)
    build = [sys.executable, str(ROOT / "tools" / "build_site.py"), str(src)]
    proc = subprocess.run(
        [*build, "--path-output", str(out)],
        cwd=ROOT,
        timeout=3000,
        capture_output=True,
        text=True,
    )
    return {
        "html": out / "_build" / "html",
        "src": src,
        "cache": execution_cache(src),
        "returncode": proc.returncode,
        "output": proc.stdout + proc.stderr,
    }


#: Modules run first, in this order: the hostile folders' minute is mostly
#: waiting on time limits and kernels starting, which the other workers fill.
RUN_FIRST = ("test_coursework_hostile.py", "test_coursework_hostile2.py")


@pytest.fixture
def mpi_alone():
    """Run the test with no other worker's MPI test beside it.

    The lab's tests check that a job leaves no MPICH shared-memory segment
    behind (and one plants test segments), so two of their jobs must not
    overlap. Modules that run MPI jobs use this fixture on every test.
    """
    with one_at_a_time("mpi"):
        yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the modules so that nobody waits for the book build while there is other work.

    :data:`RUN_FIRST` (in pytest-xdist workers), then the modules that do not
    need the built book (they run while it builds), then the rest. The sort
    is stable, so every worker agrees.
    """
    needs_book = {item.path for item in items if "built_book" in item.fixturenames}
    # Without workers the hostile run starts in the background instead and
    # overlaps the tests before its module (pytest_collection_finish).
    first = RUN_FIRST if hasattr(config, "workerinput") else ()

    def rank(item: pytest.Item) -> int:
        if item.path.name in first:
            return first.index(item.path.name)
        return len(first) + (item.path in needs_book)

    items.sort(key=rank)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the book build, and the hostile submissions' grading run, if tests need them.

    The build (a minute or more, cold) runs in a thread of every process,
    through ``once_per_run``: one builds, the others wait for it in the
    background. The hostile folders' grading runs are a minute of mostly
    waiting (see ``tests/test_coursework_hostile.py`` and
    ``tests/test_coursework_hostile2.py``); without pytest-xdist they start
    here and overlap the tests before them (with workers, they are scheduled
    first instead, see :data:`RUN_FIRST`).
    """
    if session.config.option.collectonly:
        return
    if any("built_book" in item.fixturenames for item in session.items):
        thread = threading.Thread(target=_build_book_once, name="book build", daemon=True)
        thread.start()
        _EARLY_BUILDS.append(thread)
    # The site without solutions takes minutes too: started now, it is usually built
    # before its modules come up, instead of a worker waiting idle for it then.
    if any("site_without_solutions" in item.fixturenames for item in session.items):
        thread = threading.Thread(target=_build_nosolutions_once, name="site build", daemon=True)
        thread.start()
        _EARLY_BUILDS.append(thread)
    if hasattr(session.config, "workerinput"):
        return  # each pytest-xdist worker would start a grading run
    for item in session.items:
        if item.path.name in RUN_FIRST and item.module not in _EARLY_STARTS:
            item.module.start_in_background()
            _EARLY_STARTS.append(item.module)


_EARLY_STARTS: list = []
_EARLY_BUILDS: list[threading.Thread] = []


def _build_book_once() -> None:
    from build_site import build_site

    # A failure is not stored: the built_book fixture builds again and reports it.
    with contextlib.suppress(Exception):
        once_per_run("built_book", build_site)


def _build_nosolutions_once() -> None:
    # A failure is not stored: the fixture builds again and reports it.
    with contextlib.suppress(Exception):
        once_per_run("site_without_solutions", _build_site_without_solutions)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Leave no background run behind, whatever happened to the session.

    A book build still running (the session stopped early: ``-x``, Ctrl-C,
    every test that needed it skipped) is killed, so it does not go on
    writing ``_build/`` under the next run; so is the site without solutions.
    """
    for module in _EARLY_STARTS:
        module.stop_background()
    deadline = time.monotonic() + 60
    while any(t.is_alive() for t in _EARLY_BUILDS) and time.monotonic() < deadline:
        # the thread may not have started the build yet: look again until it ends
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(
                    part.endswith(("jupyter-book", "build_site.py")) for part in child.cmdline()
                ):
                    child.terminate()
        time.sleep(0.1)
    _EARLY_BUILDS.clear()
