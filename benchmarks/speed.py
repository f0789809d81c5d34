"""Speed budgets of the lesson, measured: run ``.venv/bin/python benchmarks/speed.py``.

Prints one table:

* **cold full build** of the book (fresh copy, empty execution cache; one
  job per CPU, as ``make book``, then again with one job for comparison) next to
  a **floor book** with the same number of trivial notebook pages (one
  ``1 + 1`` cell each), same configuration, built cold in the same run: the
  ratio is what the lesson's own content costs over Jupyter Book's fixed
  per-page machinery (goal: at most 4x). jupyter-cache executes identical
  notebooks once, so that floor starts one kernel (and, its pages being
  identical, is built with one job: see ``lesson_lib.site.build_book``); a
  second floor gives each page its own cell (``n + 1``), one kernel per page
  like the chapters, and its ratio is printed too (no goal);
* the **CPU time** of the cold full build and of the floor (every process of
  the build, kernels and MPI ranks included, from ``getrusage``), and that
  CPU time divided by the CPUs: no schedule of the same work can build the
  book faster on this machine, so that bound over the floor says how far the
  4x goal is from what the work allows;
* **warm rebuild** of the full book with nothing changed, and a rebuild of
  every page with the execution cache full (no kernel starts: what Sphinx,
  autodoc and the theme cost on their own);
* each chapter's **execution time**, executed on its own after the builds as
  MyST-NB's cache mode does in ``make book`` (a fresh kernel each, killed
  when the last cell is done; the median of three rounds; goal: at most 2 s, median at most 1.5 s, the
  lab chapter at most 6 s). Next to each, in brackets, the time from the
  first cell's start to the last cell's end, what "Run all" waits for in a
  notebook already open; and a one-cell notebook's time, the kernel's own
  start and stop. The build executes two pages at a time (one job per CPU,
  ``lesson_lib.jupyter_book_jobs``), so the times it caches include
  contention;
* the warm rebuild's goal is at most 5 s;
* **explorer build time in the kernel**: each live explorer computed for every
  state of its controls, as its chapter's cell does (median of five fresh
  builds; goal: at most 0.5 s each). Responsiveness in the browser is
  ``benchmarks/explorers.py``;
* **JupyterLab start**: ``jupyter lab`` launched to its ``/lab`` page served
  (median of three, isolated configuration folders);
* the **grader's time per notebook**: ``python -m lesson_lib.coursework.grade``
  over three student notebooks of the problem set, divided by three;
* ``import lesson_lib`` time in a fresh interpreter;
* a **machine yardstick**, a fixed pure-Python loop timed at the start and
  at the end, to tell a slower machine from a slower lesson when comparing
  two runs.

Each measure with a goal has a verdict (goals hold for a quiet machine; the
header prints the load average). The builds run in temporary copies, so
``_build/`` of the checkout is left alone. ``--skip-builds``,
``--skip-servers`` and ``--skip-explorers`` leave parts out. This is a
benchmark, not a test: numbers vary with the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lesson_lib.jupyter_book_jobs import build_execution_options, default_jobs  # noqa: E402
from lesson_lib.site import (  # noqa: E402
    MYST_NOTEBOOK_FRONT_MATTER,
    build_book,
    copy_site_config,
    page_notebook,
    toc_files,
)

#: Goals from the issues (11: chapters, builds; 10: explorers), quiet machine.
BUILD_RATIO_GOAL = 4.0
WARM_REBUILD_GOAL_S = 5.0
CHAPTER_GOAL_S = 2.0
CHAPTER_MEDIAN_GOAL_S = 1.5
LAB_CHAPTER = "book/lab"
LAB_GOAL_S = 6.0
EXPLORER_BUILD_GOAL_S = 0.5
#: Each chapter is executed this many times; the table shows the median.
CHAPTER_RUNS = 3
EXPLORER_BUILDS = 5
#: Student notebooks the grader runs to time one (the total divided by this).
GRADED_NOTEBOOKS = 3

FLOOR_PAGE = (
    MYST_NOTEBOOK_FRONT_MATTER
    + """\
({label})=
# Page {n}

A trivial page: one paragraph and one code cell.

```{{code-cell}} ipython3
{cell}
```
"""
)


def full_copy(dest: Path) -> Path:
    """A copy of the book (pages, toc, config) with no build output."""
    copy_site_config(dest)
    shutil.copy2(ROOT / "_toc.yml", dest / "_toc.yml")
    shutil.copytree(ROOT / "book", dest / "book", ignore=shutil.ignore_patterns("_build"))
    # chapters literalinclude lesson_lib's source; the kernels import the installed one
    shutil.copytree(
        ROOT / "lesson_lib", dest / "lesson_lib", ignore=shutil.ignore_patterns("__pycache__")
    )
    return dest


def floor_copy(dest: Path, pages: int, distinct: bool = False) -> Path:
    """A book of ``pages`` trivial notebook pages with the same configuration.

    With ``distinct=False`` every page's cell is ``1 + 1``: jupyter-cache keys
    executions on the code, so the identical pages are executed once. With
    ``distinct=True`` page *n* computes ``n + 1``, so every page starts its own
    kernel, as every chapter does.
    """
    copy_site_config(dest)
    book = dest / "book"
    book.mkdir()
    names = ["index"] + [f"p{i:02d}" for i in range(1, pages)]
    for n, name in enumerate(names):
        cell = f"{n} + 1" if distinct else "1 + 1"
        (book / f"{name}.md").write_text(FLOOR_PAGE.format(label=name, n=n, cell=cell))
    toc = ["format: jb-book", "root: book/index", "chapters:"]
    toc += [f"  - file: book/{name}" for name in names[1:]]
    (dest / "_toc.yml").write_text("\n".join(toc) + "\n")
    return dest


class BuildTime(NamedTuple):
    """Seconds a build took: wall clock, and the CPU time of all its processes."""

    wall: float
    cpu: float


def children_cpu_seconds() -> float:
    """User plus system CPU seconds of every finished descendant of this process.

    The build's readers, kernels, ``mpiexec`` and MPI ranks are each waited
    for by their parent, so their time reaches this process when the build
    command ends.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_build(root: Path, notes: list[str], jobs: int | None = None) -> BuildTime:
    """Build ``root`` as ``make book`` does; return its wall and CPU seconds.

    A build that ends with warnings (``-W``) still built every page
    (``--keep-going``), so its time counts; the warnings go to ``notes``.
    """
    cpu_before = children_cpu_seconds()
    start = time.perf_counter()
    result = build_book(root, jobs=jobs)
    seconds = time.perf_counter() - start
    cpu = children_cpu_seconds() - cpu_before
    if not (root / "_build" / "html" / "index.html").is_file():
        raise SystemExit(f"build of {root} failed:\n{result.output[-3000:]}")
    if result.returncode != 0:
        notes.append(f"{root.name} build exited {result.returncode}:")
        notes.extend(f"  {w.strip()}" for w in result.warnings[:10])
    return BuildTime(seconds, cpu)


def execute_once(notebook, cwd: Path) -> tuple[float, float]:
    """Execute ``notebook`` as MyST-NB's cache mode does in ``make book``.

    jupyter-cache's ``single_nb_execution`` with a fresh kernel on private
    sockets, stopped at once when the last cell is done, as
    :mod:`lesson_lib.jupyter_book_jobs` makes the build do.

    Returns
    -------
    tuple of float
        Seconds in all (kernel start and stop included) and seconds from the
        first cell's start to the last cell's end: what "Run all" waits for in
        a notebook whose kernel is already running.
    """
    from datetime import datetime

    from jupyter_cache.executors.utils import single_nb_execution

    result = single_nb_execution(
        notebook,
        cwd=str(cwd),
        timeout=300,
        allow_errors=False,
        record_timing=True,
        **build_execution_options(),
    )
    if result.err is not None:
        raise SystemExit(f"{cwd} notebook failed to execute:\n{result.exc_string}")
    ran = [c.metadata["execution"] for c in notebook.cells if "execution" in c.metadata]

    def stamp(text: str) -> float:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

    cells = stamp(ran[-1]["iopub.status.idle"]) - stamp(ran[0]["iopub.status.busy"])
    return result.time, cells


def execution_times(
    root: Path, docs: list[str], runs: int = CHAPTER_RUNS
) -> dict[str, tuple[float, float]]:
    """Seconds each notebook page takes to execute, one after another on a quiet build machine.

    Each page is read as MyST-NB reads it and executed as its cache mode does
    (:func:`execute_once`, the page's folder as working directory), ``runs``
    times in rounds (every page once, then again), and the median kept, so
    one stall of a shared machine does not decide a verdict. The build itself
    runs pages in parallel, so the times it caches include the other job's
    contention; these do not. Values are (in all, cells only).
    """
    samples: dict[str, list[tuple[float, float]]] = {}
    for _ in range(runs):
        for doc in docs:
            notebook = page_notebook(root, doc)
            if notebook is not None:
                samples.setdefault(doc, []).append(execute_once(notebook, (root / doc).parent))
    return {
        doc: (
            statistics.median(total for total, _ in values),
            statistics.median(cells for _, cells in values),
        )
        for doc, values in samples.items()
    }


def kernel_overhead(runs: int = 5) -> float:
    """Median seconds of a notebook with one ``1 + 1`` cell: kernel start and stop."""
    import nbformat

    seconds = []
    for _ in range(runs):
        notebook = nbformat.v4.new_notebook()
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        notebook.cells = [nbformat.v4.new_code_cell("1 + 1")]
        with tempfile.TemporaryDirectory() as tmp:
            seconds.append(execute_once(notebook, Path(tmp))[0])
    return statistics.median(seconds)


# ------------------------------------------------------------------ explorers


def explorer_build_time(builder: str, runs: int = EXPLORER_BUILDS) -> float:
    """Median seconds to build one explorer in a fresh interpreter (its caches cold).

    Parameters
    ----------
    builder : str
        ``module:function`` from :data:`lesson_lib.explorers.catalog.EXPLORERS`.
    runs : int
        Fresh interpreters to time.
    """
    module, _, name = builder.partition(":")
    code = (
        f"import time; from {module} import {name}; t = time.perf_counter(); "
        f"e = {name}(); e.spec(); print(time.perf_counter() - t)"
    )
    values = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        values.append(float(out.split()[-1]))
    return statistics.median(values)


def import_time(runs: int = 5) -> float:
    """Median seconds of ``import lesson_lib`` in a fresh interpreter (-X importtime)."""
    values = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import lesson_lib"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        for line in proc.stderr.splitlines():
            m = re.match(r"import time:\s*\d+\s*\|\s*(\d+)\s*\|\s*lesson_lib$", line)
            if m:
                values.append(int(m.group(1)) / 1e6)
    return statistics.median(values)


def machine_reference(runs: int = 5) -> float:
    """Median seconds of a fixed pure-Python loop (sum of squares below 3 million).

    Not a goal: a yardstick for the machine itself. This machine is shared and
    its speed drifts from hour to hour, so two runs of this table compare only
    as far as their reference rows agree.
    """
    values = []
    for _ in range(runs):
        start = time.perf_counter()
        sum(i * i for i in range(3_000_000))
        values.append(time.perf_counter() - start)
    return statistics.median(values)


def jupyterlab_start(runs: int = 3) -> float:
    """Median seconds from ``jupyter lab`` started to its REST API answering.

    The server runs with every ``JUPYTER_*`` folder in a scratch directory
    (nothing read from or written to the user's home) and is stopped by its
    process group after each run.
    """
    import signal
    import socket
    import urllib.request

    exe = str(Path(sys.executable).with_name("jupyter"))
    values = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="lesson-lab-start-") as tmp:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            env = {
                **os.environ,
                "HOME": tmp,
                "JUPYTER_CONFIG_DIR": f"{tmp}/config",
                "JUPYTER_DATA_DIR": f"{tmp}/data",
                "JUPYTER_RUNTIME_DIR": f"{tmp}/runtime",
                "IPYTHONDIR": f"{tmp}/ipython",
            }
            cmd = [exe, "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}"]
            cmd += ["--allow-root", "--ServerApp.token=t", f"--ServerApp.root_dir={ROOT}"]
            start = time.perf_counter()
            proc = subprocess.Popen(
                cmd,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                while True:
                    try:
                        url = f"http://127.0.0.1:{port}/lab?token=t"
                        with urllib.request.urlopen(url, timeout=5) as r:
                            r.read()
                        break
                    except OSError:
                        if proc.poll() is not None or time.perf_counter() - start > 120:
                            raise SystemExit("JupyterLab did not start") from None
                        time.sleep(0.05)
                values.append(time.perf_counter() - start)
            finally:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
    return statistics.median(values)


def coursework_command(name: str) -> list[str]:
    """Command that runs ``lesson_lib.coursework.<name>`` with this Python."""
    return [sys.executable, "-m", f"lesson_lib.coursework.{name}"]


def grader_per_notebook(tmp: Path, count: int = GRADED_NOTEBOOKS) -> float:
    """Seconds per notebook of ``make grade`` over ``count`` student notebooks.

    The student edition's problem set is written for ``count`` IDs and graded
    by the grader's command line (the same command ``make grade`` runs); the
    whole command's wall time, start-up included, is divided by ``count``.
    """
    subs = tmp / "submissions"
    ids = [f"s{900 + i}" for i in range(count)]
    subprocess.run(
        [
            *coursework_command("student_edition"),
            "--out",
            str(subs),
            "--pages",
            "problems",
            "--ids",
            *ids,
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    start = time.perf_counter()
    subprocess.run(
        [*coursework_command("grade"), str(subs), "--out", str(tmp / "grades.csv")],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    return (time.perf_counter() - start) / count


# ------------------------------------------------------------------ table


def row(what: str, value: str, goal: str = "", verdict: str = "") -> str:
    """One line of the table."""
    return f"| {what:<44} | {value:>22} | {goal:>9} | {verdict:<7} |"


def verdict(ok: bool) -> str:
    """The table's verdict column."""
    return "ok" if ok else "MISSED"


def build_rows(docs: list[str], tmp: Path, notes: list[str]) -> list[str]:
    """Cold full and floor builds, the warm rebuild and each chapter's execution."""
    lines = []
    print(f"building a floor book of {len(docs)} trivial pages (cold) ...", flush=True)
    floor = timed_build(floor_copy(tmp / "floor", len(docs)), notes)
    print("building it again with a distinct cell per page (cold) ...", flush=True)
    floor_each = timed_build(floor_copy(tmp / "floor-each", len(docs), distinct=True), notes)
    print("building the full book (cold) ...", flush=True)
    full_root = full_copy(tmp / "full")
    full = timed_build(full_root, notes)
    print("building the full book again with one job (cold) ...", flush=True)
    serial = timed_build(full_copy(tmp / "full-serial"), notes, jobs=1)
    print("rebuilding the full book (warm) ...", flush=True)
    warm = timed_build(full_root, notes)
    print("rebuilding it from its execution cache alone (no kernel) ...", flush=True)
    shutil.rmtree(full_root / "_build" / "html")
    shutil.rmtree(full_root / "_build" / ".doctrees")
    sphinx_only = timed_build(full_root, notes)
    cpus = default_jobs()
    ratio = full.wall / floor.wall
    lines.append(row(f"cold full build ({len(docs)} pages)", f"{full.wall:.1f} s"))
    lines.append(row("  same, one job (serial, right after)", f"{serial.wall:.1f} s"))
    lines.append(row(f"cold floor build ({len(docs)} trivial pages)", f"{floor.wall:.1f} s"))
    lines.append(row("  same, each page executed (distinct cells)", f"{floor_each.wall:.1f} s"))
    lines.append(
        row(
            "  full / floor",
            f"{ratio:.2f}x",
            f"<= {BUILD_RATIO_GOAL:g}x",
            verdict(ratio <= BUILD_RATIO_GOAL),
        )
    )
    lines.append(
        row("  full / floor with each page executed", f"{full.wall / floor_each.wall:.2f}x")
    )
    lines.append(
        row("  CPU time: full / floor (every process)", f"{full.cpu:.1f} / {floor.cpu:.1f} s")
    )
    bound = full.cpu / cpus
    lines.append(
        row(
            f"  full's least possible time on {cpus} CPUs",
            f"{bound:.1f} s = {bound / floor.wall:.2f}x floor",
        )
    )
    lines.append(
        row(
            "  full, chapters from the cache (no kernel)",
            f"{sphinx_only.wall:.1f} s (CPU {sphinx_only.cpu:.1f} s)",
        )
    )
    lines.append(
        row(
            "warm rebuild (nothing changed)",
            f"{warm.wall:.1f} s",
            f"<= {WARM_REBUILD_GOAL_S:g} s",
            verdict(warm.wall <= WARM_REBUILD_GOAL_S),
        )
    )
    print(f"executing each chapter on its own ({CHAPTER_RUNS} rounds) ...", flush=True)
    times = execution_times(full_root, docs)
    for doc in docs:
        if doc in times:
            goal = LAB_GOAL_S if doc == LAB_CHAPTER else CHAPTER_GOAL_S
            total, cells = times[doc]
            lines.append(
                row(
                    f"execute {doc}",
                    f"{total:.2f} s (cells {cells:.2f} s)",
                    f"<= {goal:g} s",
                    verdict(total <= goal),
                )
            )
    others = [total for d, (total, _) in times.items() if d != LAB_CHAPTER]
    median = statistics.median(others)
    cells_median = statistics.median(c for d, (_, c) in times.items() if d != LAB_CHAPTER)
    lines.append(
        row(
            "execute, median of the chapters but the lab",
            f"{median:.2f} s (cells {cells_median:.2f} s)",
            f"<= {CHAPTER_MEDIAN_GOAL_S:g} s",
            verdict(median <= CHAPTER_MEDIAN_GOAL_S),
        )
    )
    lines.append(row("  kernel start and stop (one 1 + 1 cell)", f"{kernel_overhead():.2f} s"))
    lines.append(row("execute, all chapters", f"{sum(t for t, _ in times.values()):.1f} s"))
    return lines


def explorer_rows() -> list[str]:
    """Build time of each live explorer (every state computed), against its goal."""
    from lesson_lib.explorers.catalog import EXPLORERS

    lines = []
    print("timing explorer builds ...", flush=True)
    for entry in EXPLORERS:
        seconds = explorer_build_time(entry.builder)
        lines.append(
            row(
                f"explorer {entry.builder.rpartition(':')[2]} (build)",
                f"{seconds:.2f} s",
                f"<= {EXPLORER_BUILD_GOAL_S:g} s",
                verdict(seconds <= EXPLORER_BUILD_GOAL_S),
            )
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-builds", action="store_true", help="no book builds")
    parser.add_argument("--skip-explorers", action="store_true", help="no explorer timings")
    parser.add_argument(
        "--skip-servers", action="store_true", help="no JupyterLab start or grader timing"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary build copies")
    args = parser.parse_args(argv)

    lines = [row("measure", "value", "goal", "verdict"), row("-" * 44, "-" * 22, "-" * 9, "-" * 7)]
    notes: list[str] = []
    docs = toc_files()
    tmp = Path(tempfile.mkdtemp(prefix="lesson-speed-"))
    load_before = os.getloadavg()[0]
    yardstick_before = machine_reference()
    try:
        if not args.skip_builds:
            if not (ROOT / "_vendor" / "PINS.json").is_file():
                raise SystemExit("run `make assets` (or tools/fetch_assets.py) first")
            lines += build_rows(docs, tmp, notes)
        if not args.skip_servers:
            print("timing JupyterLab's start and the grader ...", flush=True)
            lines.append(
                row("JupyterLab start (server answers /lab)", f"{jupyterlab_start():.2f} s")
            )
            per = grader_per_notebook(tmp)
            lines.append(row(f"grader, per notebook ({GRADED_NOTEBOOKS} graded)", f"{per:.2f} s"))
        if not args.skip_explorers:
            lines += explorer_rows()
        lines.append(row("import lesson_lib (fresh interpreter)", f"{import_time() * 1e3:.0f} ms"))
        lines.append(
            row(
                "machine yardstick (fixed Python loop)",
                f"{yardstick_before:.3f} s, then {machine_reference():.3f} s",
            )
        )
    finally:
        if args.keep:
            print(f"copies kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"Speed budgets ({os.cpu_count()} CPUs, load average {load_before:.1f} at the start, "
        f"{load} at the end; Python {sys.version.split()[0]})"
    )
    print("\n".join(lines))
    if notes:
        print("\nNotes:\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
