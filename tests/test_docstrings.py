"""Every public name in lesson_lib has a numpydoc docstring."""

import importlib
import inspect
import pkgutil

import lesson_lib


def public_objects():
    """(qualified name, object) for every public function and class defined in lesson_lib."""
    for info in pkgutil.walk_packages(lesson_lib.__path__, "lesson_lib."):
        if info.name.endswith("__main__"):
            continue  # importing a CLI's __main__ would run it
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield f"{info.name}.{name}", obj


def needs_sections(func):
    """Which numpydoc sections a function's signature calls for."""
    sig = inspect.signature(func)
    params = [p for p in sig.parameters if p not in ("self", "cls")]
    wanted = ["Parameters"] if params else []
    if sig.return_annotation not in (None, "None", inspect.Signature.empty):
        wanted.append("Returns")
    return wanted


def test_every_public_name_is_documented():
    """Functions document Parameters and Returns; classes have a docstring."""
    problems = []
    for qualname, obj in public_objects():
        doc = inspect.getdoc(obj) or ""
        if not doc.strip():
            problems.append(f"{qualname}: no docstring")
            continue
        if inspect.isfunction(obj):
            problems += [f"{qualname}: no {s} section" for s in needs_sections(obj) if s not in doc]
    assert problems == [], "\n".join(problems)
