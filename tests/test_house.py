"""How the package is built: layers that import one way, modules and functions a reader
can hold, no rewriting of ``sys.modules`` (``tools/house.py`` prints the same report)."""

from __future__ import annotations

import ast

from house import MAX_FUNCTION_LINES, MAX_MODULE_LINES, ROOT, function_lines, imported, violations


def test_function_lines_leave_out_the_docstring():
    """A function of a docstring and two statements counts two lines."""
    tree = ast.parse('def f():\n    """Doc.\n\n    More.\n    """\n    a = 1\n    return a\n')
    assert function_lines(tree) == [("f", 2)]


def test_relative_imports_are_read_as_absolute():
    """``from ..chapters import x`` in the model is seen as an import of the chapters."""
    path = ROOT / "model" / "example.py"
    tree = ast.parse("from ..chapters import latency\nfrom . import units\n")
    assert set(imported(path, tree)) == {
        "lesson_lib.chapters",
        "lesson_lib.chapters.latency",
        "lesson_lib.model",
        "lesson_lib.model.units",
    }


def test_layers_run_one_way():
    """The model imports no upper layer, and nothing but the student edition imports a chapter."""
    problems, _ = violations()
    assert [p for p in problems if " imports " in p] == []


def test_no_module_rewrites_sys_modules():
    """Short import paths are real modules, not aliases planted in ``sys.modules``."""
    problems, _ = violations()
    assert [p for p in problems if "sys.modules" in p] == []


def test_modules_and_functions_stay_small():
    """No module over 600 lines, no function over 100 (docstring excluded)."""
    assert (MAX_MODULE_LINES, MAX_FUNCTION_LINES) == (600, 100)
    problems, _ = violations()
    assert [p for p in problems if p.endswith(("(over 600)", "(over 100)"))] == []
