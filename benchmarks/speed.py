"""Speed budgets of the lesson, measured: run ``.venv/bin/python benchmarks/speed.py``.

Prints one table:

* **cold full build** of the book (a fresh copy, empty execution cache, the
  command ``make book`` runs), then a **warm rebuild** with nothing changed
  (goal: at most 5 s), and a rebuild of every page from the full execution
  cache (no kernel starts: what Sphinx, autodoc and the theme cost alone);
* each chapter's **execution time**, executed on its own after the builds as
  MyST-NB's cache mode does in ``make book`` (a fresh kernel each, stopped at
  once when the last cell is done; the median of three rounds; goal: at most
  2 s, median at most 1.5 s, the lab chapter at most 6 s). Next to each, in
  brackets, the time from the first cell's start to the last cell's end,
  what "Run all" waits for in a notebook already open;
* a one-cell notebook's time with the kernel stopped at once and stopped
  gracefully (nbclient's default): the cost the build's immediate stop avoids
  (``tools/lesson_site/kernels.py``);
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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from build_site import build_site, copy_site_config, toc_files  # noqa: E402
from lesson_site.kernels import KERNEL_SHUTDOWN  # noqa: E402

#: Goals on a quiet machine.
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


def timed_build(root: Path, notes: list[str]) -> float:
    """Build ``root`` as ``make book`` does; return its wall-clock seconds.

    A build that ends with warnings (``-W``) still built every page
    (``--keep-going``), so its time counts; the warnings go to ``notes``.
    """
    start = time.perf_counter()
    result = build_site(root)
    seconds = time.perf_counter() - start
    if not (root / "_build" / "html" / "index.html").is_file():
        raise SystemExit(f"build of {root} failed:\n{result.output[-3000:]}")
    if result.returncode != 0:
        notes.append(f"{root.name} build exited {result.returncode}:")
        notes.extend(f"  {w.strip()}" for w in result.warnings[:10])
    return seconds


def page_notebook(root: Path, doc: str):  # type: ignore[no-untyped-def]
    """The notebook MyST-NB makes of page ``doc`` (code not executed), or None for a plain page."""
    import yaml
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    text = (root / f"{doc}.md").read_text()
    if not is_myst_markdown_notebook(text):
        return None
    config = yaml.safe_load((root / "_config.yml").read_text()) or {}
    extensions = (config.get("parse") or {}).get("myst_enable_extensions") or []
    return read_myst_markdown_notebook(text, MdParserConfig(enable_extensions=set(extensions)))


def execute_once(notebook, cwd: Path, shutdown: str = KERNEL_SHUTDOWN) -> tuple[float, float]:
    """Execute ``notebook`` as MyST-NB's cache mode does in ``make book``.

    jupyter-cache's ``single_nb_execution`` with a fresh kernel, stopped at
    once when the last cell is done (``shutdown``), as the site's extension
    makes the build do.

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
        shutdown_kernel=shutdown,
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
    one stall of a shared machine does not decide a verdict. Values are (in
    all, cells only).
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


def kernel_overhead(runs: int = 10, shutdown: str = KERNEL_SHUTDOWN) -> str:
    """Median and slowest seconds of a one-cell (``1 + 1``) notebook: kernel start and stop."""
    import nbformat

    seconds = []
    for _ in range(runs):
        notebook = nbformat.v4.new_notebook()
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        notebook.cells = [nbformat.v4.new_code_cell("1 + 1")]
        with tempfile.TemporaryDirectory() as tmp:
            seconds.append(execute_once(notebook, Path(tmp), shutdown)[0])
    return f"{statistics.median(seconds):.2f} s (max {max(seconds):.2f} s)"


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
    """The cold build, the warm rebuild, a rebuild from the cache and each chapter's execution."""
    lines = []
    print("building the full book (cold) ...", flush=True)
    full_root = full_copy(tmp / "full")
    cold = timed_build(full_root, notes)
    print("rebuilding the full book (warm) ...", flush=True)
    warm = timed_build(full_root, notes)
    print("rebuilding it from its execution cache alone (no kernel) ...", flush=True)
    shutil.rmtree(full_root / "_build" / "html")
    shutil.rmtree(full_root / "_build" / ".doctrees")
    from_cache = timed_build(full_root, notes)
    lines.append(row(f"cold full build ({len(docs)} pages)", f"{cold:.1f} s"))
    lines.append(
        row(
            "warm rebuild (nothing changed)",
            f"{warm:.1f} s",
            f"<= {WARM_REBUILD_GOAL_S:g} s",
            verdict(warm <= WARM_REBUILD_GOAL_S),
        )
    )
    lines.append(row("every page again, from the cache (no kernel)", f"{from_cache:.1f} s"))
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
    lines.append(row("  kernel start and stop (one 1 + 1 cell)", kernel_overhead()))
    graceful = kernel_overhead(shutdown="graceful")
    lines.append(row("  same, graceful stop (nbclient default)", graceful))
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
