"""The API reference pages: what autodoc reads and shows of ``lesson_lib``."""

from __future__ import annotations

import inspect
from typing import Any

from sphinx.application import Sphinx
from sphinx.ext.autodoc import DataDocumenter
from sphinx.util.inspect import object_description

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
    reading the API pages.
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
