"""Answer lookups: code in a submission that asks the package for answers instead of working them out.

The package students have holds the problem bank, so a notebook can call ``reference("q3", ...)`` or
``solution_text(...)``, or import the bank and call a problem's own ``reference`` with the numbers
of its statement. With a course salt (:mod:`lesson_lib.coursework.variants`) the first two compute a
variant nobody was given; the third still works, since it only needs the statement's numbers. The
grader therefore reads every code cell's source and flags what it finds: the instructor sees the
status and a note naming the cell and what it calls, and decides.

This is a reading of the source, not a proof: code can hide a name (``getattr(m, "ref" +
"erence")``, a string passed to ``exec``), and a student can compute an answer with the lesson's own
model functions, which is what the problems teach. What is flagged is the plain use of the answer
key.
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
    """One use of the answer key in a submission.

    Attributes
    ----------
    cell : int
        Number of the code cell, counting from 1.
    what : str
        What it calls or imports, as :data:`PATTERNS` names it.
    """

    cell: int
    what: str


def find_lookups(nb: object) -> list[Lookup]:
    """Every use of the answer key in a notebook's code cells, in order.

    Never raises: a notebook without a list of cells has none.

    Parameters
    ----------
    nb : dict
        The notebook as parsed JSON or ``nbformat.NotebookNode``.

    Returns
    -------
    list of Lookup
        At most one per cell and pattern.

    Examples
    --------
    >>> nb = {"cells": [{"cell_type": "code", "source": "answer_q1 = reference('q1', 's1')"}]}
    >>> find_lookups(nb)
    [Lookup(cell=1, what='reference(')]
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
    """The note the grader writes for a submission's lookups ("" for none).

    Parameters
    ----------
    lookups : list of Lookup
        From :func:`find_lookups`.

    Returns
    -------
    str
        ``"ANSWER LOOKUP: reference( in code cell 5; ..."``, at most ten named.
    """
    if not lookups:
        return ""
    named = "; ".join(f"{lookup.what} in code cell {lookup.cell}" for lookup in lookups[:10])
    more = f"; and {len(lookups) - 10} more" if len(lookups) > 10 else ""
    return f"ANSWER LOOKUP: {named}{more}: scored as handed in, check the work yourself"
