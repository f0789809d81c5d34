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
decide a verdict. The floor runs once per round too. This is a benchmark,
not a test: seconds vary with the machine and its load; ratios much less.
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


def run_all_seconds(notebook, cwd: Path) -> float:  # type: ignore[no-untyped-def]
    """Seconds from the first code cell's start to the last one's end, in a fresh kernel."""
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    with client.setup_kernel():
        cells = [c for c in notebook.cells if c.cell_type == "code"]
        start = time.perf_counter()
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
        seconds = time.perf_counter() - start
    if not cells:
        return 0.0
    return seconds


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
    samples: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        samples.setdefault("(floor)", []).append(run_all_seconds(floor_notebook(), ROOT))
        for page in pages:
            samples.setdefault(page.stem, []).append(
                run_all_seconds(chapter_notebook(page), page.parent)
            )
    floor = statistics.median(samples.pop("(floor)"))
    print(f"load average {os.getloadavg()[0]:.1f}; {args.rounds} rounds, medians")
    print(f"{'notebook':16s} {'cells s':>8s} {'x floor':>8s}")
    print(f"{'(floor)':16s} {floor:8.2f} {1.0:8.2f}")
    ratios = {}
    for name, values in samples.items():
        seconds = statistics.median(values)
        ratios[name] = seconds / floor
        print(f"{name:16s} {seconds:8.2f} {ratios[name]:8.2f}")
    others = {n: r for n, r in ratios.items() if n != "lab"}
    verdicts = []
    if others:
        median = statistics.median(others.values())
        slowest = max(others, key=others.get)
        verdicts.append(("median of the chapters", median, MEDIAN_GOAL))
        verdicts.append((f"slowest chapter ({slowest})", others[slowest], SLOWEST_GOAL))
    if "lab" in ratios:
        verdicts.append(("lab", ratios["lab"], LAB_GOAL))
    failed = False
    for label, ratio, goal in verdicts:
        ok = ratio <= goal
        failed |= not ok
        print(f"{label}: {ratio:.2f}x floor, goal at most {goal:g}x: {'meets' if ok else 'MISSES'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
