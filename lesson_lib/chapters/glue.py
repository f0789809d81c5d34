"""Each chapter's glue table (``GLUE``, a :class:`GlueTable`), read by :func:`chapter_numbers`.

:func:`glue_chapter`, the first cell of every page, glues it, so the prose writes
``{glue:text}`name``` and no number is typed by hand.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

#: Every chapter page, by the name of its ``book/<name>.md`` and its module here.
CHAPTERS: tuple[str, ...] = tuple(
    "index overview sizing allreduce payloads latency algorithms measured tails prefill batching"
    " kv_transfer goodput cluster experts overlap summary lab instructor".split()
)

#: A function of no arguments returning glue name -> formatted text.
Formatter = Callable[[], Mapping[str, str]]


@dataclass(frozen=True)
class Quote:
    """Some values of another chapter's formatter, quoted on this page."""

    #: A formatter (e.g. :func:`lesson_lib.chapters.latency.scaling_numbers`) or a page's table.
    source: Formatter | GlueTable
    #: The glue names taken from it.
    names: tuple[str, ...]


@dataclass(frozen=True)
class GlueTable:
    """What one page glues: formatters, other chapters' tables and quotes, merged in order."""

    #: Each a formatter (all its values), another :class:`GlueTable` (all of that page's values) or
    #: a :class:`Quote`; a name two parts give must have the same text in both (reading the table
    #: raises ``ValueError`` otherwise).
    parts: tuple[Formatter | GlueTable | Quote, ...]

    def __init__(self, *parts: Formatter | GlueTable | Quote) -> None:
        object.__setattr__(self, "parts", parts)


@cache
def _read(part: Formatter | GlueTable | Quote) -> dict[str, str]:
    # Cached per part: most pages reuse the overview's table and the same formatters.
    if isinstance(part, GlueTable):
        out: dict[str, str] = {}
        for inner in part.parts:
            for name, text in _read(inner).items():
                # A name two parts give must read the same, or the page would
                # print whichever came last without anyone noticing.
                if out.setdefault(name, text) != text:
                    raise ValueError(f"glue name {name!r} is {out[name]!r} and {text!r}")
        return out
    if isinstance(part, Quote):
        values = _read(part.source)
        return {name: values[name] for name in part.names}
    return dict(part())


def chapter_numbers(name: str) -> dict[str, str]:
    """Every value the page ``book/<name>.md`` glues, formatted.

    Parameters
    ----------
    name : str
        A page of :data:`CHAPTERS`, e.g. ``"payloads"``.

    Returns
    -------
    dict of str to str
        Glue name -> text, a copy of the cached reading of its ``GLUE``.

    Raises
    ------
    KeyError
        If ``name`` is not a chapter page; the message lists the known ones.
    """
    if name not in CHAPTERS:
        raise KeyError(f"unknown chapter {name!r}; known: {list(CHAPTERS)}")
    table = importlib.import_module(f"lesson_lib.chapters.{name}").GLUE
    return dict(_read(table))


def glue_numbers(values: Mapping[str, str], names: Iterable[str] | None = None) -> list[str]:
    """Glue pre-formatted strings into the current MyST-NB page, hidden from the cell's output.

    Parameters
    ----------
    values : mapping of str to str
        Name -> formatted text (a chapter's :func:`chapter_numbers`).
    names : iterable of str, optional
        Only these names (all by default); an unknown one raises ``KeyError``.

    Returns
    -------
    list of str
    """
    chosen = list(values) if names is None else list(names)
    unknown = [n for n in chosen if n not in values]
    if unknown:
        raise KeyError(f"unknown glue names {unknown}; known: {sorted(values)}")
    from myst_nb import glue

    for name in chosen:
        glue(name, str(values[name]), display=False)
    return chosen


def glue_chapter(name: str) -> list[str]:
    """Glue every value of chapter ``name`` into the page being executed (its first cell).

    Parameters
    ----------
    name : str
        A page of :data:`CHAPTERS`.

    Returns
    -------
    list of str
    """
    return glue_numbers(chapter_numbers(name))
