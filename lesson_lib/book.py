"""Helpers for chapters: glue the worked example's numbers into the page.

Chapters call :func:`glue_numbers` once and then write ``{glue:text}`name```
in prose, so no number is ever typed by hand.

:func:`glue` writes exactly the output MyST-NB's own ``myst_nb.glue`` writes
(a display message whose MIME types carry the prefix
``application/papermill.record/`` and whose metadata names the value), without
importing ``myst_nb.ext.glue``: that module imports ``nbformat``, whose
``jsonschema`` format checkers compile about 35 Lark grammars
(``rfc3987_syntax``) at import, about a second of every chapter's first cell
for a function that only calls IPython's ``display``. A test compares the two
functions' messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: MIME-type prefix that hides a glued value from the cell's visible output;
#: MyST-NB strips it when it reads the notebook (``myst_nb.ext.glue.GLUE_PREFIX``).
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Store a value's display form in the notebook under ``name`` (MyST-NB's glue).

    The same message as ``myst_nb.glue(name, variable, display)``: IPython's
    display formatters turn ``variable`` into a MIME bundle; without
    ``display`` each MIME type gets the :data:`GLUE_PREFIX` so the cell shows
    nothing; the metadata key ``scrapbook`` names the value.

    Parameters
    ----------
    name : str
        Name to paste it with (``{glue:text}`name```).
    variable : object
        The value; chapters glue pre-formatted strings.
    display : bool, default True
        Also show the value as the cell's output.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    mimebundle, metadata = format_display_data(variable)
    mime_prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": mime_prefix}
    ipy_display({mime_prefix + k: v for k, v in mimebundle.items()}, raw=True, metadata=metadata)


def glue_numbers(
    values: Mapping[str, str] | None = None, names: Iterable[str] | None = None
) -> list[str]:
    """Glue pre-formatted strings into the current MyST-NB page.

    Parameters
    ----------
    values : mapping of str to str, optional
        Name -> formatted text; defaults to
        :func:`lesson_lib.worked_example.numbers`.
    names : iterable of str, optional
        Only these names (all by default). An unknown name raises ``KeyError``
        listing the known ones, so a typo fails the build instead of
        leaving a blank in the text.

    Returns
    -------
    list of str
        The names glued.
    """
    if values is None:
        from lesson_lib.worked_example import numbers

        values = numbers()
    chosen = list(values) if names is None else list(names)
    unknown = [n for n in chosen if n not in values]
    if unknown:
        raise KeyError(f"unknown glue names {unknown}; known: {sorted(values)}")
    for name in chosen:
        glue(name, str(values[name]), display=False)
    return chosen
