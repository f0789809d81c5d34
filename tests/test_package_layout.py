"""The package's shape: its layers, short paths kept, no import cycle, no build machinery.

A newcomer finds a chapter's numbers, figures and explorer by the chapter's
name; a reader's notebook written against the short paths keeps working;
the lesson package does not reach into Sphinx, Jupyter Book, jupyter-cache
or jupyter_client except where it must render or run a notebook.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import lesson_lib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lesson_lib"

#: The modules the model layer holds; the short paths readers use, and their home.
MODEL_MODULES = (
    "specs",
    "units",
    "specimen",
    "collectives",
    "ring",
    "memory",
    "step_time",
    "layout",
    "hf_config",
    "presets",
)

#: Build and notebook machinery the lesson package may import only in these modules:
#: the explorers' renderer for MyST-NB's site, and the grader's notebook runner.
MACHINERY = ("sphinx", "jupyter_book", "jupyter_cache", "jupyter_client", "nbclient")
MAY_IMPORT_MACHINERY = {"lesson_lib.explorers.myst", "lesson_lib.coursework.runner"}


def chapter_pages() -> list[str]:
    """Stems of the landing page, the worked example's chapters (the toc's first part) and the lab."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    worked_example = [entry["file"] for entry in toc["parts"][0]["chapters"]]
    return [Path(f).name for f in [toc["root"], *worked_example, "book/lab"]]


def package_modules() -> dict[str, Path]:
    """Every module of lesson_lib, dotted name -> file."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported_modules(path: Path, name: str) -> set[str]:
    """Modules one file imports anywhere (top level or inside functions), resolved to dotted names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def test_every_chapter_page_declares_a_glue_table_its_first_cell_glues():
    """``book/latency.md`` -> ``lesson_lib.chapters.latency.GLUE``, glued by ``glue_chapter("latency")``."""
    from lesson_lib.chapters.glue import CHAPTERS, GlueTable

    pages = chapter_pages()
    assert {"index", "sizing", "latency", "cluster", "summary"} <= set(pages) <= set(CHAPTERS)
    for page in pages:
        module = importlib.import_module(f"lesson_lib.chapters.{page}")
        assert isinstance(module.GLUE, GlueTable), page
        text = (ROOT / "book" / f"{page}.md").read_text()
        assert "from lesson_lib.chapters.glue import " in text, page
        assert f'\nglue_chapter("{page}")\n' in text, page


def test_the_model_layer_holds_the_model_and_the_short_paths_reexport_it():
    """``lesson_lib.specimen.MODEL`` is ``lesson_lib.model.specimen.MODEL``, in a fresh interpreter too."""
    for short in MODEL_MODULES:
        assert (PACKAGE / "model" / f"{short}.py").is_file(), short
        home = importlib.import_module(f"lesson_lib.model.{short}")
        alias = importlib.import_module(f"lesson_lib.{short}")
        public = [name for name in vars(home) if not name.startswith("_")]
        assert all(getattr(alias, name) is getattr(home, name) for name in public), short
    assert importlib.import_module("lesson_lib.models").PRESETS is lesson_lib.model.presets.PRESETS
    assert "sys.modules" not in (PACKAGE / "__init__.py").read_text()
    code = (
        "from lesson_lib.specimen import MODEL; from lesson_lib.collectives import "
        "allreduce_wire_bytes; from lesson_lib.step_time import decode_step; "
        "from lesson_lib.layout import check_layout; from lesson_lib.memory import "
        "memory_budget; import lesson_lib.coursework.problems; print(MODEL.name)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == lesson_lib.model.specimen.MODEL.name


@pytest.mark.parametrize("command", ["grade", "student_edition"])
def test_the_coursework_commands_still_run_as_modules(command):
    """``python -m lesson_lib.coursework.grade`` and ``...student_edition`` answer ``--help``."""
    out = subprocess.run(
        [sys.executable, "-m", f"lesson_lib.coursework.{command}", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.lower().startswith("usage:")


def test_no_import_cycle_inside_the_package():
    """No lesson_lib module imports, directly or through others, one that imports it."""
    modules = package_modules()
    graph = {
        name: {m for m in imported_modules(path, name) if m in modules and m != name}
        for name, path in modules.items()
    }
    # a package imports its own submodules' names, and they import the package's
    # parent: only module-to-module edges between non-package files form a cycle
    files = {n for n, p in modules.items() if p.name != "__init__.py"}
    graph = {n: {m for m in deps if m in files} for n, deps in graph.items() if n in files}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    """The import reader resolves relative and absolute imports, so a cycle cannot hide."""
    a = tmp_path / "a.py"
    a.write_text("from lesson_lib.chapters import latency\nfrom . import glue\n")
    found = imported_modules(a, "lesson_lib.chapters.sizing")
    assert {"lesson_lib.chapters.latency", "lesson_lib.chapters.glue"} <= found


def test_build_machinery_is_imported_only_by_the_renderer_and_the_runner():
    """Sphinx, Jupyter Book, jupyter-cache, jupyter_client and nbclient stay out of the lesson."""
    offenders = {}
    for name, path in package_modules().items():
        if name in MAY_IMPORT_MACHINERY:
            continue
        used = {m for m in imported_modules(path, name) if m.split(".")[0] in MACHINERY}
        if used:
            offenders[name] = sorted(used)
    assert offenders == {}


def test_every_module_is_in_the_package_namespace():
    """pkgutil finds each module file the layout tests read (none hidden from the walk)."""
    walked = {m.name for m in pkgutil.walk_packages(lesson_lib.__path__, "lesson_lib.")}
    assert set(package_modules()) - {"lesson_lib"} <= walked
