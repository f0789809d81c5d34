"""Glue a chapter's numbers into its page.

Each chapter module's ``glue()`` calls :func:`glue_numbers` with its
``numbers()``; the page then writes ``{glue:text}`name``` in prose, so no
number is ever typed by hand. Each value is glued with
MyST-NB's ``myst_nb.glue``, hidden from the cell's output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def glue_numbers(values: Mapping[str, str], names: Iterable[str] | None = None) -> list[str]:
    """Glue pre-formatted strings into the current MyST-NB page.

    Parameters
    ----------
    values : mapping of str to str
        Name -> formatted text (a chapter module's ``numbers()``).
    names : iterable of str, optional
        Only these names (all by default). An unknown name raises ``KeyError``
        listing the known ones, so a typo fails the build instead of
        leaving a blank in the text.

    Returns
    -------
    list of str
        The names glued.
    """
    chosen = list(values) if names is None else list(names)
    unknown = [n for n in chosen if n not in values]
    if unknown:
        raise KeyError(f"unknown glue names {unknown}; known: {sorted(values)}")
    from myst_nb import glue

    for name in chosen:
        glue(name, str(values[name]), display=False)
    return chosen
