"""Run All in a plain notebook, against a floor: run ``.venv/bin/python benchmarks/notebooks.py``.

A reader who opens a chapter in JupyterLab or Binder and picks Run All waits
for its code cells in a fresh kernel. This script times exactly that for each
chapter: the page as ``make lab`` and Binder write it
(:mod:`lesson_lib.chapters.notebook`), read by jupytext, executed by nbclient
in a fresh ``python3`` kernel (no MyST-NB build around it), from the first
cell's start to the last cell's end. ``--source`` times the book's own pages
instead, glue cell included. Beside it runs a **floor** notebook that imports numpy
and matplotlib and draws one line chart, the least a notebook with a figure
costs on the same machine in the same minute. The table gives each chapter's
seconds and its ratio to the floor, and checks the goals:

* the chapters' median at most 1.5x the floor (``MEDIAN_GOAL``);
* the slowest chapter but the lab at most 3x (``SLOWEST_GOAL``);
* the lab, which runs live MPI sweeps, at most 6x (``LAB_GOAL``).

Every notebook runs ``--rounds`` times in rounds (every notebook once, then
again) and the median is kept, so one stall of a shared machine does not
decide a verdict. The floor runs once per round too. Beside the wall time the
table gives the kernel's CPU seconds (its own and its ended children's, the
lab's MPI ranks among them), which other work on a shared machine hardly
changes; the verdicts use the wall time and show the CPU ratio beside it.
This is a benchmark, not a test: seconds vary with the machine and its load;
ratios much less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from build_site import toc_files  # noqa: E402

#: Goals, as ratios to the floor notebook's cells time.
MEDIAN_GOAL = 1.5
SLOWEST_GOAL = 3.0
LAB_GOAL = 6.0

#: The floor: what any notebook with one matplotlib figure costs.
FLOOR_CELLS = (
    "import numpy as np\nimport matplotlib.pyplot as plt",
    "x = np.linspace(0, 1, 50)\nfig, ax = plt.subplots()\nax.plot(x, x**2)\nplt.show()",
)


def chapter_notebook(path: Path):  # type: ignore[no-untyped-def]
    """The notebook JupyterLab opens for the MyST Markdown page ``path`` (jupytext's reader)."""
    import jupytext

    return jupytext.read(path, fmt="md:myst")


def floor_notebook():  # type: ignore[no-untyped-def]
    """The floor notebook: numpy, matplotlib and one line chart."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in FLOOR_CELLS]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def kernel_cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) of process ``pid`` and of the children it has waited for.

    The children's share holds what the kernel started and ended, such as the lab's ``mpiexec``
    and its ranks, whose own children Hydra waits for in turn.
    """
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")


def run_all_seconds(notebook, cwd: Path) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Wall and kernel CPU seconds from the first code cell's start to the last one's end.

    A fresh kernel runs the notebook. The CPU seconds are the kernel's and its waited-for
    children's: other work on a shared machine stretches the wall time but hardly these.
    """
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    with client.setup_kernel():
        pid = client.km.provisioner.process.pid
        cells = [c for c in notebook.cells if c.cell_type == "code"]
        cpu = kernel_cpu_seconds(pid)
        start = time.perf_counter()
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
        seconds = time.perf_counter() - start
        cpu = kernel_cpu_seconds(pid) - cpu
    if not cells:
        return 0.0, 0.0
    return seconds, cpu


def chapters(root: Path = ROOT) -> list[Path]:
    """The notebook pages under ``root``, in the table of contents' order."""
    import jupytext  # noqa: F401 (fail early when the environment is missing)

    pages = []
    for doc in toc_files(ROOT):
        path = root / f"{doc}.md"
        if path.exists() and path.read_text(encoding="utf-8").startswith("---\njupytext:"):
            if "code-cell" in path.read_text(encoding="utf-8"):
                pages.append(path)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each notebook (median kept)")
    parser.add_argument("--only", nargs="*", default=None, help="page names to time (default: all)")
    parser.add_argument(
        "--source", action="store_true", help="time book/ itself, not make lab's copy"
    )
    args = parser.parse_args(argv)
    if args.source:
        pages = chapters()
    else:
        from lesson_lib.chapters.notebook import write_notebook_book

        written = Path(tempfile.mkdtemp(prefix="lesson-notebooks-"))
        write_notebook_book(written)
        pages = chapters(written)
    if args.only:
        pages = [p for p in pages if p.stem in args.only]
    samples: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        samples.setdefault("(floor)", []).append(run_all_seconds(floor_notebook(), ROOT))
        for page in pages:
            samples.setdefault(page.stem, []).append(
                run_all_seconds(chapter_notebook(page), page.parent)
            )
    floor = [statistics.median(s) for s in zip(*samples.pop("(floor)"), strict=True)]
    print(f"load average {os.getloadavg()[0]:.1f}; {args.rounds} rounds, medians")
    print(f"{'notebook':16s} {'cells s':>8s} {'x floor':>8s} {'CPU s':>8s} {'x floor':>8s}")
    print(f"{'(floor)':16s} {floor[0]:8.2f} {1.0:8.2f} {floor[1]:8.2f} {1.0:8.2f}")
    ratios: dict[str, tuple[float, float]] = {}
    for name, values in samples.items():
        seconds, cpu = (statistics.median(s) for s in zip(*values, strict=True))
        ratios[name] = (seconds / floor[0], cpu / floor[1])
        print(f"{name:16s} {seconds:8.2f} {ratios[name][0]:8.2f} {cpu:8.2f} {ratios[name][1]:8.2f}")
    return _verdicts(ratios)


def _verdicts(ratios: dict[str, tuple[float, float]]) -> int:
    """Print each goal's verdict, by wall time and by CPU time; 1 if any wall-time goal is missed."""
    others = {n: r for n, r in ratios.items() if n != "lab"}
    verdicts = []
    if others:
        median = [statistics.median(r[k] for r in others.values()) for k in (0, 1)]
        slowest = max(others, key=lambda n: others[n][0])
        verdicts.append(("median of the chapters", median, MEDIAN_GOAL))
        verdicts.append((f"slowest chapter ({slowest})", others[slowest], SLOWEST_GOAL))
    if "lab" in ratios:
        verdicts.append(("lab", ratios["lab"], LAB_GOAL))
    failed = False
    for label, (wall, cpu), goal in verdicts:
        ok = wall <= goal
        failed |= not ok
        print(
            f"{label}: {wall:.2f}x floor (CPU {cpu:.2f}x), goal at most {goal:g}x: "
            f"{'meets' if ok else 'MISSES'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
