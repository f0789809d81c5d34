"""Shown code runs where it stands: every visible code cell imports what it uses.

A reader of the site copies one cell; a student runs one cell of the student
edition, which has no removed cells; a notebook reader reruns a cell after a
restart. Each must find every name it imports in itself (or in the page's
first shown cell), never only in another cell, least of all one the site
removes. Values a shown cell above computed (a sweep's results, the answer
typed above a check) may be used: a reader has that cell in front of them.

For each notebook page, one fresh kernel runs the first visible code cell (a
chapter's shown setup, if it has one); then every later visible cell runs in
order, after every name that an earlier cell (other than the first) bound by
an ``import`` is deleted. Removed cells (``remove-cell``, ``remove-input``)
never run.
"""

from __future__ import annotations

import pytest
from build_site import ROOT, toc_files

pytestmark = pytest.mark.slow

#: Tags of cells a reader never sees as code.
HIDDEN = {"remove-cell", "remove-input"}

#: Run after the first visible cell: what the kernel holds then.
SNAPSHOT = "_shown_names = set(globals()) | {'_shown_names'}"


def forget(names: set[str]) -> str:
    """Code that deletes ``names`` from the kernel's globals, except the first cell's."""
    return (
        f"for _n in {sorted(names)!r}:\n"
        "    if _n not in _shown_names:\n"
        "        globals().pop(_n, None)"
    )


def used_names(source: str) -> set[str]:
    """The names a cell reads."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def imported_names(source: str) -> set[str]:
    """The names a cell binds with ``import`` statements."""
    import ast

    names: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (a shell escape): no import statement to read
        return names
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


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
    """The harness itself: a cell that relies on an earlier cell's import raises NameError,
    one that uses a value an earlier cell computed does not."""
    scope: dict = {}
    exec("import math\nx = 1", scope)
    exec(SNAPSHOT, scope)
    earlier = "import os\nfrom os import path as p\ny = 2"
    exec(earlier, scope)
    assert imported_names(earlier) == {"os", "p"}
    assert used_names("os.getcwd(); q = p") == {"os", "p"}
    exec(forget(imported_names(earlier)), scope)
    assert "os" not in scope and "p" not in scope and "math" in scope and scope["y"] == 2
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
        steps, seen = [cells[0], SNAPSHOT], set()
        for cell_source in cells[1:]:
            # only the imports this cell uses: a function defined above keeps its own
            steps += [forget(seen & used_names(cell_source)), cell_source]
            seen |= imported_names(cell_source)
        for index, source in enumerate(steps):
            cell = nbformat.v4.new_code_cell(source)
            nb.cells.append(cell)
            try:
                client.execute_cell(cell, len(nb.cells) - 1)
            except CellExecutionError as err:
                failures.append(f"cell {index // 2}:\n{source}\n-> {str(err).splitlines()[-1]}")
    assert failures == [], f"{doc}: " + "\n\n".join(failures)
