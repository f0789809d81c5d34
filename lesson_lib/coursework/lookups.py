"""Answer lookups: submission code that asks the package for answers instead of working them out.

Students have the problem bank: with a course salt ``reference("q3", ...)`` or ``solution_text``
compute a variant nobody was given, but a problem's own ``reference`` given its statement's numbers
still works. The grader flags what it finds in the code cells' source (status ``answer lookup``, a
note naming the cell) for the instructor to decide. A reading, not a proof: code can hide a name
(``getattr``, ``exec``), and using the lesson's model functions is what the problems teach.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lesson_lib.coursework.runner import code_sources

#: What is looked for, and how a note names it. Comments are taken out first.
PATTERNS = (
    ("reference(", re.compile(r"\breference\s*\(")),
    ("solution_text(", re.compile(r"\bsolution_text\s*\(")),
    ("solution(", re.compile(r"\bsolution\s*\(")),
    ("get_problem(", re.compile(r"\bget_problem\s*\(")),
    ("the problem bank (PROBLEMS)", re.compile(r"\bPROBLEMS\b")),
    (
        "the problem bank (lesson_lib.coursework.problems)",
        re.compile(r"\bcoursework\s*\.\s*problems\b"),
    ),
    (
        "the problem bank (from lesson_lib.coursework import problems)",
        re.compile(r"\bfrom\s+lesson_lib\.coursework\s+import\s+[^\n]*\bproblems\b"),
    ),
)
#: Longest cell source read, characters (a longer one is flagged as unread).
MAX_SOURCE_CHARS = 200_000
_COMMENT = re.compile(r"(?m)(^|\s)#[^\n]*")


@dataclass(frozen=True)
class Lookup:
    """One use of the answer key in a submission."""

    #: Number of the code cell, counting from 1.
    cell: int
    #: What it calls or imports, as :data:`PATTERNS` names it.
    what: str


def find_lookups(nb: object) -> list[Lookup]:
    """Uses of the answer key in a notebook's code cells in order, at most one per cell and pattern.

    Parameters
    ----------
    nb : dict
        The notebook as parsed JSON or ``nbformat.NotebookNode`` (no list of cells: none).

    Returns
    -------
    list of Lookup
    """
    try:
        sources = code_sources(nb)
    except ValueError:
        return []
    found = []
    for number, source in enumerate(sources, start=1):
        if len(source) > MAX_SOURCE_CHARS:
            found.append(Lookup(number, f"a cell of over {MAX_SOURCE_CHARS:,} characters, unread"))
            continue
        # a comment may name reference() without calling it; a string may not hide it
        code = _COMMENT.sub(r"\1", source)
        found.extend(Lookup(number, what) for what, pattern in PATTERNS if pattern.search(code))
    return found


def lookup_note(lookups: list[Lookup]) -> str:
    """Note on lookups (``"ANSWER LOOKUP: reference( in code cell 5; ..."``, ten at most), or "".

    Parameters
    ----------
    lookups : list of Lookup

    Returns
    -------
    str
    """
    if not lookups:
        return ""
    named = "; ".join(f"{lookup.what} in code cell {lookup.cell}" for lookup in lookups[:10])
    more = f"; and {len(lookups) - 10} more" if len(lookups) > 10 else ""
    return f"ANSWER LOOKUP: {named}{more}: scored as handed in, check the work yourself"
