"""Shown code runs where it stands: every visible code cell of a chapter runs on its own.

A reader of the site copies one cell; a student runs one cell of the student
edition, which has no removed cells; a notebook reader reruns a cell after a
restart. Each must find every name it uses imported in it or in a visible cell
above it that it needs, never only in a cell the site removes.

For each notebook page, one fresh kernel runs the first visible code cell (a
chapter's shown setup, if it has one); then, for every later visible cell,
every name made since is deleted and the cell runs alone. Modules stay
imported (a cell that does not import one still fails on its name), and
removed cells (``remove-cell``, ``remove-input``) never run.
"""

from __future__ import annotations

import pytest
from build_site import ROOT, toc_files

pytestmark = pytest.mark.slow

#: Tags of cells a reader never sees as code.
HIDDEN = {"remove-cell", "remove-input"}

#: Run after the first visible cell: what the kernel holds then.
SNAPSHOT = "_shown_names = set(globals()) | {'_shown_names'}"
#: Run before each later cell: forget every name made since the snapshot.
FORGET = "for _n in [n for n in globals() if n not in _shown_names]:\n    del globals()[_n]"


def notebook_pages() -> list[str]:
    """The table of contents' pages with code cells."""
    return [
        doc
        for doc in toc_files(ROOT)
        if (ROOT / f"{doc}.md").exists() and "{code-cell}" in (ROOT / f"{doc}.md").read_text()
    ]


def visible_cells(doc: str) -> list[str]:
    """The sources of the page's code cells a reader sees, in order."""
    import jupytext

    nb = jupytext.read(ROOT / f"{doc}.md", fmt="md:myst")
    return [
        cell.source
        for cell in nb.cells
        if cell.cell_type == "code" and not HIDDEN & set(cell.metadata.get("tags", []))
    ]


def test_forget_makes_a_missing_import_fail():
    """The harness itself: a cell that relies on an earlier cell's import raises NameError."""
    scope: dict = {}
    exec("import math\nx = 1", scope)
    exec(SNAPSHOT, scope)
    exec("import os", scope)
    exec(FORGET, scope)
    assert "os" not in scope and "math" in scope
    with pytest.raises(NameError):
        exec("os.getcwd()", scope)


@pytest.mark.parametrize("doc", notebook_pages())
def test_each_visible_cell_runs_alone(doc, tmp_path):
    """Every visible code cell runs in a kernel that holds only the first visible cell's names."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    cells = visible_cells(doc)
    if not cells:
        pytest.skip(f"{doc} shows no code")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    failures = []
    with client.setup_kernel():
        steps = [cells[0], SNAPSHOT] + [s for cell in cells[1:] for s in (FORGET, cell)]
        for index, source in enumerate(steps):
            cell = nbformat.v4.new_code_cell(source)
            nb.cells.append(cell)
            try:
                client.execute_cell(cell, len(nb.cells) - 1)
            except CellExecutionError as err:
                failures.append(f"cell {index // 2}:\n{source}\n-> {str(err).splitlines()[-1]}")
    assert failures == [], f"{doc}: " + "\n\n".join(failures)
