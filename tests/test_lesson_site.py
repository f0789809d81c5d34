"""The site extension: its autodoc rules (a module's imports are skipped, its own members are
not; long values are left out; defaults read as written), its kernels (stopped at once) and
its environment version (editing it re-reads every page)."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import pickle
import re
from html import unescape

import pytest
from build_site import ROOT
from lesson_site import PACKAGE_DIR, source_env_version
from lesson_site.api_pages import MAX_SHOWN_VALUE_CHARS, skip_imported_members
from lesson_site.kernels import KERNEL_SHUTDOWN, stop_page_kernels_at_once


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


def api_pages_html(html_dir: pathlib.Path) -> str:
    """The built API pages' HTML, one after another."""
    return "".join(p.read_text() for p in sorted((html_dir / "book" / "api").glob("*.html")))


def test_imported_classes_and_functions_are_skipped():
    """A class or function defined outside lesson_lib is skipped when a module lists it."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    skip = skip_imported_members
    for obj in (Figure, MaxNLocator, pathlib.Path, re.compile, inspect.isclass):
        assert skip(None, "module", "x", obj, False, {}) is True, obj


def test_lesson_lib_members_data_and_class_members_are_left_to_autodoc():
    """lesson_lib's own objects, data of any type and members of a class are not skipped."""
    from lesson_lib.model.collectives import allreduce_wire_bytes
    from lesson_lib.model.specs import ModelSpec

    skip = skip_imported_members
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
    assert all(m == "lesson_lib" or m.startswith("lesson_lib.") for m in modules)


@pytest.mark.slow
def test_every_public_class_and_function_of_a_documented_module_is_on_an_api_page(built_book):
    """Nothing of lesson_lib's own is skipped: each documented module's public classes and
    functions (defined there, with a docstring) have an entry on the built API pages.

    The list is made from the modules themselves, not from autodoc, so a rule
    that skipped too much fails here.
    """
    pages = api_pages_html(built_book.html_dir)
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


def test_page_kernels_are_stopped_at_once(monkeypatch, tmp_path):
    """MyST-NB's cache-mode execution hands nbclient ``shutdown_kernel="immediate"``, once.

    nbclient's own default is ``"graceful"``; the recorder stands in for the
    notebook's execution and keeps the options jupyter-cache passes on.
    """
    import jupyter_cache.executors.utils as executor_utils
    import myst_nb.core.execute.cache as myst_cache
    import nbformat

    monkeypatch.setattr(myst_cache, "single_nb_execution", myst_cache.single_nb_execution)
    passed = []
    monkeypatch.setattr(executor_utils, "executenb", lambda nb, **kwargs: passed.append(kwargs))
    stop_page_kernels_at_once()
    stop_page_kernels_at_once()  # a second call must not wrap the function twice
    myst_cache.single_nb_execution(
        nbformat.v4.new_notebook(), cwd=str(tmp_path), timeout=10, allow_errors=False
    )
    assert KERNEL_SHUTDOWN == "immediate"
    assert [options["shutdown_kernel"] for options in passed] == ["immediate"]
    assert myst_cache.single_nb_execution.func is executor_utils.single_nb_execution


def signature_defaults(html: str) -> list[str]:
    """The default values shown in the signatures of a built API page."""
    return re.findall(r'<span class="default_value"><span class="pre">([^<]*)', html)


def pages_naming(html_dir: pathlib.Path, folder: pathlib.Path) -> list[str]:
    """The built pages that contain ``folder``'s absolute path."""
    return [
        str(page.relative_to(html_dir))
        for page in sorted(html_dir.rglob("*.html"))
        if str(folder) in page.read_text()
    ]


@pytest.mark.slow
def test_signatures_show_defaults_as_written_and_no_page_names_the_build_folder(built_book):
    """A default reads as the source writes it (``model=MODEL``, ``gpu=GPU``), not as its repr.

    The specimen's repr is a paragraph; and no published page may carry the
    folder the book was built in.
    """
    html_dir = built_book.html_dir
    assert not pages_naming(html_dir, ROOT)
    api = api_pages_html(html_dir)
    defaults = signature_defaults(api)
    assert {"MODEL", "GPU"} <= set(defaults)
    assert not [d for d in defaults if d.startswith(("ModelSpec(", "Accelerator(", "PosixPath("))]


def shown_values(html: str) -> list[str]:
    """The values shown after constants' names (``NAME: type = value``) on a built API page."""
    values = []
    for signature in re.findall(
        r'<dt class="sig sig-object py" id="[\w.]+">(.*?)</dt>', html, re.S
    ):
        text = unescape(re.sub(r"<[^>]+>", "", signature)).strip().removesuffix("#")
        if " = " in text:
            values.append(text.split(" = ", 1)[1])
    return values


@pytest.mark.slow
def test_a_constant_too_long_to_read_is_shown_without_its_value(built_book):
    """The problem bank's 16,000-character repr is left out, with a sentence; the specimen's stays."""
    api = api_pages_html(built_book.html_dir)
    values = shown_values(api)
    assert any(v.startswith("ModelSpec(name=") for v in values), "MODEL's value is shown"
    assert max(len(v) for v in values) <= MAX_SHOWN_VALUE_CHARS
    entry = api[api.index('id="lesson_lib.coursework.problems.registry.PROBLEMS"') :]
    entry = entry[: entry.index("</dd>")]
    assert "too long to show here" in entry
    assert "Problem(qid=" not in entry


def test_the_extensions_env_version_follows_its_source(tmp_path):
    """Same files, same number; one byte more in any module, another (Sphinx then reads every page)."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in PACKAGE_DIR.glob("*.py"):
        (copy / path.name).write_bytes(path.read_bytes())
    assert source_env_version(copy) == source_env_version() > 0
    assets = copy / "assets.py"
    assets.write_bytes(assets.read_bytes() + b"\n")
    assert source_env_version(copy) != source_env_version()


@pytest.mark.slow
def test_the_built_environment_records_the_extensions_source_version(built_book):
    """The build's saved environment carries the number, so editing the extension re-reads pages."""
    with open(built_book.html_dir.parent / ".doctrees" / "environment.pickle", "rb") as saved:
        environment = pickle.load(saved)
    assert environment.version["lesson_site"] == source_env_version()
