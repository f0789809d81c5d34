"""Report how the package is built: lines per package, modules over 600 lines,
functions over 100 lines (docstring excluded) and imports that run against the layers.

Layers, bottom to top: ``model`` (with ``measured`` and ``data``), then ``figures``,
``explorers``, ``lab`` and ``coursework``, then ``chapters``. The model imports none of the
others; nothing but :mod:`lesson_lib.coursework.student_edition` imports a chapter.

Run ``python tools/house.py``; it exits 1 when a limit is broken.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "lesson_lib"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100
#: Most lines the package may hold, every feature included.
MAX_PACKAGE_LINES = 34_600
UPPER = ("chapters", "figures", "explorers", "coursework", "lab")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path, tree: ast.AST) -> list[str]:
    mod = module_name(path).split(".")
    package = mod if path.name == "__init__.py" else mod[:-1]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[: len(package) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            names += [base] + [f"{base}.{a.name}" for a in node.names]
    return [n for n in names if n.startswith("lesson_lib.")]


def function_lines(tree: ast.AST) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if ast.get_docstring(node) is not None:
                body = body[1:]
            if body:
                out.append((node.name, node.end_lineno - body[0].lineno + 1))
    return out


def violations() -> tuple[list[str], dict[str, int]]:
    problems: list[str] = []
    sizes: dict[str, int] = {}
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        name = module_name(path)
        # modules at the top (the short import paths, ``measured``) count with the package root
        layer = name.split(".")[1] if path.parent != ROOT else "(root)"
        if name == "lesson_lib.measured":
            layer = "measured"
        sizes[layer] = sizes.get(layer, 0) + lines
        if lines > MAX_MODULE_LINES:
            problems.append(f"{name}: {lines} lines (over {MAX_MODULE_LINES})")
        tree = ast.parse(text)
        for func, n in function_lines(tree):
            if n > MAX_FUNCTION_LINES:
                problems.append(f"{name}.{func}: {n} lines (over {MAX_FUNCTION_LINES})")
        for target in imported(path, tree):
            tlayer = target.split(".")[1]
            if layer in ("model", "measured", "data") and tlayer in UPPER:
                problems.append(f"{name} imports {target} (the model imports no upper layer)")
            if (
                tlayer == "chapters"
                and layer != "chapters"
                and name != "lesson_lib.coursework.student_edition"
            ):
                problems.append(
                    f"{name} imports {target} (only chapters and the student edition may)"
                )
        if "sys.modules[" in text:
            problems.append(f"{name} rewrites sys.modules")
    total = sum(sizes.values())
    if total > MAX_PACKAGE_LINES:
        problems.append(f"lesson_lib: {total} lines (over {MAX_PACKAGE_LINES})")
    return problems, sizes


def main() -> int:
    problems, sizes = violations()
    for layer, n in sorted(sizes.items()):
        print(f"{layer:12s} {n:6d}")
    print(f"{'total':12s} {sum(sizes.values()):6d}")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
