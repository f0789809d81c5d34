"""The site extension's autodoc rule: a module's imports are skipped, its own members are not."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re

import pytest
from lesson_site_support import lesson_site

from lesson_lib.site import ROOT


def documented_modules() -> dict[str, set[str] | None]:
    """Every module an API page documents with ``automodule``, and its explicit members.

    None when the directive's ``:members:`` is bare (every public member).
    """
    found: dict[str, set[str] | None] = {}
    directive = r"\.\. automodule:: ([\w.]+)\n\s+:members:(.*)"
    for page in sorted((ROOT / "book" / "api").glob("*.md")):
        for name, listed in re.findall(directive, page.read_text()):
            found[name] = {m.strip() for m in listed.split(",")} if listed.strip() else None
    return found


def test_imported_classes_and_functions_are_skipped():
    """A class or function defined outside lesson_lib is skipped when a module lists it."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    skip = lesson_site().skip_imported_members
    for obj in (Figure, MaxNLocator, pathlib.Path, re.compile, inspect.isclass):
        assert skip(None, "module", "x", obj, False, {}) is True, obj


def test_lesson_lib_members_data_and_class_members_are_left_to_autodoc():
    """lesson_lib's own objects, data of any type and members of a class are not skipped."""
    from lesson_lib.collectives import allreduce_wire_bytes
    from lesson_lib.specs import ModelSpec

    skip = lesson_site().skip_imported_members
    assert skip(None, "module", "allreduce_wire_bytes", allreduce_wire_bytes, False, {}) is None
    assert skip(None, "module", "ModelSpec", ModelSpec, False, {}) is None
    # data: a Path's __module__ is pathlib's, but data is autodoc's to judge (a #: comment
    # documents an alias whatever its type)
    assert skip(None, "module", "ROOT", ROOT, False, {}) is None
    assert skip(None, "class", "joinpath", pathlib.Path.joinpath, False, {}) is None


def test_the_api_pages_document_modules_of_lesson_lib_only():
    """Every automodule target is a lesson_lib module, the package the rule keeps.

    Every directive has a ``:members:`` option, which the test below reads.
    """
    modules = documented_modules()
    directives = sum(
        page.read_text().count(".. automodule::") for page in (ROOT / "book" / "api").glob("*.md")
    )
    assert len(modules) == directives > 50
    package = lesson_site().DOCUMENTED_PACKAGE
    assert all(m == package or m.startswith(package + ".") for m in modules)


@pytest.mark.slow
def test_every_public_class_and_function_of_a_documented_module_is_on_an_api_page(built_book):
    """Nothing of lesson_lib's own is skipped: each documented module's public classes and
    functions (defined there, with a docstring) have an entry on the built API pages.

    The list is made from the modules themselves, not from autodoc, so a rule
    that skipped too much fails here.
    """
    pages = "".join(
        p.read_text() for p in sorted((built_book.html_dir / "book" / "api").glob("*.html"))
    )
    anchors = set(re.findall(r'<dt class="sig sig-object py" id="([\w.]+)"', pages))
    missing = []
    for name, listed in documented_modules().items():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if listed is not None and attr not in listed:
                continue
            if obj.__module__ == name and inspect.getdoc(obj):
                if f"{name}.{attr}" not in anchors:
                    missing.append(f"{name}.{attr}")
    assert len(anchors) > 100
    assert not missing, missing
