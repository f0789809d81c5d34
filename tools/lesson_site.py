"""Small Sphinx extension for the lesson site (loaded via ``local_extensions``).

* Stops the build with a clear message when the offline assets are missing
  (``_vendor/``, fetched by ``tools/fetch_assets.py``; ``make book`` runs it),
  instead of producing a site whose math and explorers silently need a CDN.
* Drops duplicate inline ``<script>`` blocks. Sphinx 7.4 re-adds every
  registered body-only script in ``prepare_writing`` with filename ``''``
  instead of ``None``, so its de-duplication misses them; sphinx-thebe's
  ``const THEBE_JS_URL = ...`` then appears twice and the browser reports
  "Identifier 'THEBE_JS_URL' has already been declared" on every page.
* Drops the ``aria-label="Toggle hidden content"`` MyST-NB puts on the
  ``<summary>`` of a hidden code cell: it hides the visible words ("Show code
  cell source") from screen readers, which axe-core reports as a serious
  ``label-content-name-mismatch``. Without it the visible words are the name.
* Adds the live explorers' scripts (Vega, Vega-Lite, vega-embed and
  ``explorers.js``) and the self-check's script only to pages whose body has
  an element of that class, so other pages stay light, and ``tables.js``
  (a visible cue above tables wider than the page) to pages with a table.
* Lets Sphinx read pages in parallel (``lesson_lib.jupyter_book_jobs``): two
  extensions Jupyter Book 1 always loads do not declare whether they are
  parallel-safe, so Sphinx assumes not and reads serially. Read, they are
  safe: see :data:`PARALLEL_SAFE_BY_REVIEW`.
* Writes the self-check's data (:func:`lesson_lib.coursework.static_check.selfcheck_json`)
  into the pages that have a self-check box, as an inline JSON script: a page
  opened from ``file://`` cannot fetch a separate file.
* Skips, for autodoc, the classes and functions a ``lesson_lib`` module only
  imports (:func:`skip_imported_members`) before autodoc reads their own
  module's source: the API pages are the same, the build is seconds shorter.
* Writes the HTML pages in as many processes as the build has jobs
  (:class:`EveryJobWritesHTMLBuilder`); Sphinx uses one fewer.
* Leaves out, on the API pages, a module constant's value whose repr is too
  long to read (:class:`ShortValueDataDocumenter`), and says so.
* Tells Sphinx its environment is out of date when this file changes
  (:func:`source_env_version`), so every page is read again with the new code
  instead of keeping what the old one made.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import BuildPhase, Sphinx
from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.config import Config
from sphinx.errors import ConfigError
from sphinx.ext.autodoc import DataDocumenter
from sphinx.locale import __
from sphinx.util import logging
from sphinx.util.display import status_iterator
from sphinx.util.inspect import object_description
from sphinx.util.parallel import ParallelTasks

logger = logging.getLogger(__name__)

#: File whose presence shows that ``_vendor/`` was assembled.
PINS_FILE = "PINS.json"

#: Extensions without a parallel-safety declaration, and why they are safe
#: (read in sphinx-multitoc-numbering 0.1.3 and sphinx-jupyterbook-latex 1.0).
PARALLEL_SAFE_BY_REVIEW: dict[str, str] = {
    "sphinx_multitoc_numbering": (
        "replaces the toctree collector's section numbering, which Sphinx runs "
        "once in the main process after the readers' environments are merged"
    ),
    "sphinx_jupyterbook_latex": (
        "adds node classes and per-document transforms that touch only the "
        "document being read; its environment settings apply to LaTeX builds only"
    ),
}


def declare_parallel_safe(app: Sphinx) -> None:
    """Mark the extensions of :data:`PARALLEL_SAFE_BY_REVIEW` parallel-safe.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application; each extension is loaded first if it is not yet.
    """
    for name in PARALLEL_SAFE_BY_REVIEW:
        app.setup_extension(name)
        extension = app.extensions[name]
        extension.parallel_read_safe = True
        extension.parallel_write_safe = True


def check_vendor(app: Sphinx, config: Config) -> None:
    """Fail early if the vendored assets are missing; record their pins.

    The pins become the config value ``lesson_vendor_pins`` (rebuild
    ``"html"``), so new assets make Sphinx rewrite every page and copy the
    static files again, even when no chapter changed.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    config : sphinx.config.Config
        Its configuration; ``html_static_path`` is inspected.
    """
    pins = []
    for entry in config.html_static_path:
        path = Path(app.confdir, entry)
        if path.name != "_vendor":
            continue
        if not (path / PINS_FILE).is_file():
            raise ConfigError(
                f"{path} has no {PINS_FILE}: the site's MathJax and Vega scripts are "
                "missing. Run 'python tools/fetch_assets.py' (or 'make book')."
            )
        pins.append((path / PINS_FILE).read_text().strip())
    config.lesson_vendor_pins = "\n".join(pins)


def dedupe_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Remove repeated inline scripts from a page's ``script_files``.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept = []
    for script in scripts:
        filename = getattr(script, "filename", script)
        attrs = dict(getattr(script, "attributes", {}) or {})
        if not filename and "body" in attrs:
            key = (str(attrs["body"]), tuple(sorted((k, str(v)) for k, v in attrs.items())))
            if key in seen:
                continue
            seen.add(key)
        kept.append(script)
    scripts[:] = kept


#: The summary MyST-NB writes for a hide-input cell, and what replaces it.
HIDDEN_CELL_SUMMARY = ('<summary aria-label="Toggle hidden content">', "<summary>")


def name_summaries(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Let hidden-cell summaries be named by their visible text.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if isinstance(body, str) and HIDDEN_CELL_SUMMARY[0] in body:
        context["body"] = body.replace(*HIDDEN_CELL_SUMMARY)


#: Assets (paths under ``_static/``) a page gets only when its body has an
#: element with the class that keys them; scripts load deferred, in order.
PAGE_ASSETS: dict[str, tuple[str, ...]] = {
    "lesson-explorer": (
        "vega/vega.min.js",
        "vega/vega-lite.min.js",
        "vega/vega-embed.min.js",
        "lesson/explorers.js",
        "lesson/explorers.css",
    ),
    "lesson-selfcheck": ("lesson/selfcheck.js", "lesson/selfcheck.css"),
    "exercise": ("lesson/exercises.css",),
}
#: Assets of every page with a table: the cue for tables wider than the page.
TABLE_ASSETS: tuple[str, ...] = ("lesson/tables.js", "lesson/tables.css")


def has_class(body: str, name: str) -> bool:
    """Say whether an element of ``body`` (HTML) carries the class ``name``.

    Parameters
    ----------
    body : str
        The page's HTML body.
    name : str
        A class name.

    Returns
    -------
    bool
        True if some ``class="..."`` attribute lists ``name``.
    """
    return re.search(rf'class="(?:[^"]*\s)?{re.escape(name)}(?:\s[^"]*)?"', body) is not None


def add_page_assets(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Add :data:`PAGE_ASSETS` to the pages that use them.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if not isinstance(body, str):
        return
    wanted = [assets for marker, assets in PAGE_ASSETS.items() if has_class(body, marker)]
    if "<table" in body:
        wanted.append(TABLE_ASSETS)
    for assets in wanted:
        for asset in assets:
            if asset.endswith(".css"):
                app.add_css_file(asset)
            else:
                app.add_js_file(asset, loading_method="defer")


#: Class of the self-check boxes, and the id of the JSON data ``selfcheck.js`` reads.
SELFCHECK_CLASS = "lesson-selfcheck"
SELFCHECK_DATA_ID = "lesson-selfcheck-data"


def add_selfcheck_data(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Append the self-check's data to pages with a self-check box.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if not isinstance(body, str) or not has_class(body, SELFCHECK_CLASS):
        return
    from lesson_lib.coursework.static_check import selfcheck_json

    context["body"] = (
        f'{body}<script type="application/json" id="{SELFCHECK_DATA_ID}">'
        f"{selfcheck_json()}</script>\n"
    )


#: The package the API pages document; a member defined outside it was imported.
DOCUMENTED_PACKAGE = "lesson_lib"


def skip_imported_members(
    app: Sphinx, what: str, name: str, obj: object, skip: bool, options: Any
) -> bool | None:
    """Skip a module's imported classes and functions before autodoc reads their source.

    ``automodule`` with ``:members:`` lists every attribute of a module
    (``lesson_lib`` modules have no ``__all__``, bar a few packages), so
    ``from matplotlib.figure import Figure`` makes ``Figure`` a candidate.
    autodoc drops it, since its ``__module__`` is another module's, but only
    after a class documenter has read and tokenised that other module's whole
    source for attribute comments (Sphinx's ``ClassDocumenter.generate``
    ignores the module it was imported into on purpose). For the API pages
    that was 14 modules of matplotlib and the standard library, among them
    ``matplotlib.ticker``, ``matplotlib.text`` and ``pathlib``: about 2 s of
    reading the API pages (the one chunk a parallel build cannot split).
    Skipping them here, in ``autodoc-skip-member``, gives byte-identical API
    pages.

    Parameters
    ----------
    app, what, name, obj, skip, options
        The arguments of autodoc's ``autodoc-skip-member`` event.

    Returns
    -------
    bool or None
        True for a class or function a module documented by ``automodule``
        defines outside :data:`DOCUMENTED_PACKAGE`; None (autodoc decides)
        for everything else, data included, whose ``__module__`` says nothing
        about where it was defined.
    """
    if what != "module" or not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return None
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        return None
    if module == DOCUMENTED_PACKAGE or module.startswith(DOCUMENTED_PACKAGE + "."):
        return None
    return True


#: Longest value autodoc shows after a module constant's name, in characters.
#: The specimen (``MODEL``, about 450) fits; the problem bank (``PROBLEMS``,
#: 16,600) or the assumptions table (4,100) would be one unreadable line.
MAX_SHOWN_VALUE_CHARS = 500


class ShortValueDataDocumenter(DataDocumenter):
    """autodoc's documenter of module data, leaving out a value too long to read.

    ``:meta hide-value:`` in a constant's comment does this for one name; this
    does it for every value whose repr is longer than
    :data:`MAX_SHOWN_VALUE_CHARS`, and adds a sentence saying where the value is.
    """

    def value_too_long(self) -> bool:
        """Whether the value's repr is longer than :data:`MAX_SHOWN_VALUE_CHARS`.

        Returns
        -------
        bool
            False also when the value has no repr autodoc can show.
        """
        try:
            return len(object_description(self.object)) > MAX_SHOWN_VALUE_CHARS
        except ValueError:
            return False

    def should_suppress_value_header(self) -> bool:
        return super().should_suppress_value_header() or self.value_too_long()

    def update_content(self, more_content: Any) -> None:
        super().update_content(more_content)
        if self.value_too_long():
            kind = type(self.object).__name__
            size = f" of {len(self.object)} entries" if hasattr(self.object, "__len__") else ""
            source = self.get_sourcename()
            more_content.append("", source)
            more_content.append(
                f"Its value, a ``{kind}``{size}, is too long to show here; "
                f"it is in the source of ``{self.modname}``.",
                source,
            )


#: Pages handed to each writing process at once. The main process loads and
#: resolves every page before a writer can have it, and it is the slower side:
#: small chunks start the writers early. Two was the fastest of 1, 2, 3 and 5
#: pages in builds of this book from its execution cache, two jobs.
WRITE_CHUNK_PAGES = 2

#: The Sphinx release whose ``Builder._write_parallel`` the override below
#: copies; a test fails when the installed Sphinx is another, so an upgrade
#: re-reads it.
WRITE_PARALLEL_REVIEWED_FOR = "7.4.7"


# EveryJobWritesHTMLBuilder._write_parallel below is copied from Sphinx 7.4.7
# (sphinx/builders/__init__.py) with two lines changed. Its licence:
#
# Copyright (c) 2007-2024 by the Sphinx team (see AUTHORS file).
# All rights reserved.
#
# Redistribution and use in source and binary forms, with or without
# modification, are permitted provided that the following conditions are
# met:
#
# * Redistributions of source code must retain the above copyright
#   notice, this list of conditions and the following disclaimer.
#
# * Redistributions in binary form must reproduce the above copyright
#   notice, this list of conditions and the following disclaimer in the
#   documentation and/or other materials provided with the distribution.
#
# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS
# "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT
# LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR
# A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT
# HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL,
# SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT
# LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
# DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
# THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
# (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
# OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.


class EveryJobWritesHTMLBuilder(StandaloneHTMLBuilder):
    """Sphinx's HTML builder, writing in as many processes as the build has jobs.

    Sphinx 7.4's ``Builder._write_parallel`` starts ``parallel - 1`` writing
    processes, because its main process is busy loading and resolving the
    doctrees and feeding the search index. With two jobs that is one writer,
    and with the API reference's large pages the main process and that
    writer take turns more than they overlap. This copy of it differs in two
    lines: ``parallel`` writers, and chunks of :data:`WRITE_CHUNK_PAGES` pages
    instead of ``make_chunks``' ten or more. The method is Sphinx 7.4.7's,
    copyright (c) 2007-2024 by the Sphinx team, under Sphinx's two-clause BSD
    licence (quoted above the class in this file's source).
    Builds of this book from its execution cache with two jobs spent 8.0-9.4 s
    writing with Sphinx's method and 6.3-6.9 s with this one.
    """

    def _write_parallel(self, docnames: Sequence[str], nproc: int) -> None:
        nproc = self.app.parallel  # Sphinx passes parallel - 1

        def write_process(docs: list[tuple[str, nodes.document]]) -> None:
            self.app.phase = BuildPhase.WRITING
            for docname, doctree in docs:
                self.write_doc(docname, doctree)

        # warm up caches/compile templates using the first document
        firstname, docnames = docnames[0], docnames[1:]
        self.app.phase = BuildPhase.RESOLVING
        doctree = self.env.get_and_resolve_doctree(firstname, self)
        self.app.phase = BuildPhase.WRITING
        self.write_doc_serialized(firstname, doctree)
        self.write_doc(firstname, doctree)

        tasks = ParallelTasks(nproc)
        chunks = [
            docnames[start : start + WRITE_CHUNK_PAGES]
            for start in range(0, len(docnames), WRITE_CHUNK_PAGES)
        ]
        progress = status_iterator(
            chunks, __("writing output... "), "darkgreen", len(chunks), self.app.verbosity
        )

        def on_chunk_done(args: list[tuple[str, None]], result: None) -> None:
            next(progress)

        self.app.phase = BuildPhase.RESOLVING
        for chunk in chunks:
            arg = []
            for docname in chunk:
                doctree = self.env.get_and_resolve_doctree(docname, self)
                self.write_doc_serialized(docname, doctree)
                arg.append((docname, doctree))
            tasks.add_task(write_process, arg, on_chunk_done)

        tasks.join()
        logger.info("")


def source_env_version(path: Path = Path(__file__)) -> int:
    """A number that changes whenever this extension's source does.

    Sphinx keeps the environment of the last build (every page as it was
    read) while each extension's ``env_version`` stays the same, so a change
    to this file would otherwise reach only the pages changed since. Returned
    as ``env_version``, a new number makes Sphinx start a fresh environment
    ("build environment version not current") and read every page again;
    the chapters come from the execution cache, not re-executed.

    Parameters
    ----------
    path : pathlib.Path, default this file
        The source to fingerprint.

    Returns
    -------
    int
        The first 48 bits of the file's SHA-256, as a positive integer.
    """
    return int(hashlib.sha256(path.read_bytes()).hexdigest()[:12], 16)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension's event handlers.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.

    Returns
    -------
    dict
        Extension metadata.
    """
    declare_parallel_safe(app)
    app.add_builder(EveryJobWritesHTMLBuilder, override=True)
    app.add_config_value("lesson_vendor_pins", "", "html")
    app.connect("config-inited", check_vendor)
    app.connect("html-page-context", add_page_assets)
    app.connect("html-page-context", add_selfcheck_data)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.connect("html-page-context", name_summaries, priority=900)
    app.setup_extension("sphinx.ext.autodoc")  # its event must exist to be connected
    app.add_autodocumenter(ShortValueDataDocumenter, override=True)
    app.connect("autodoc-skip-member", skip_imported_members)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
        "env_version": source_env_version(),
    }
