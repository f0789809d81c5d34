"""The problem set: problems each answered by ``lesson_lib`` itself.

Every problem (``"q1"`` ...) is one module ``qNN_<topic>.py``, in the order of
:data:`~lesson_lib.coursework.problems.registry.PROBLEMS`, defining a
:class:`~lesson_lib.coursework.problems.bank.Problem`: statement, per-student variants, a reference
answer the lesson's model computes, the usual mistakes and a worked solution. Students, the checker
and the grader call this module; in every function ``qid`` is a problem id and ``student`` a student
ID (None, or "", gives the book's version: the lesson's specimen and assumptions).
"""

from __future__ import annotations

import html
import math
from typing import Any

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem
from lesson_lib.coursework.problems.registry import PROBLEMS
from lesson_lib.coursework.variants import normalize_student, rng_for
from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS

# The problems' own helpers and data stay in their modules (bank, qNN_*): import them from there.
__all__ = [
    "PROBLEMS",
    "MarkdownText",
    "get_problem",
    "mistakes",
    "overview_table",
    "params",
    "reference",
    "show",
    "solution",
    "solution_text",
    "statement",
    "units_of",
]


def get_problem(qid: str) -> Problem:
    """The problem with id ``qid``; a KeyError listing the ids if there is none.

    Parameters
    ----------
    qid : str

    Returns
    -------
    Problem
    """
    if qid not in PROBLEMS:
        raise KeyError(f"unknown problem {qid!r}; the ids are {', '.join(PROBLEMS)}")
    return PROBLEMS[qid]


def params(qid: str, student: object = None) -> Params:
    """The parameters of problem ``qid`` for one student, in a fresh dict (safe to modify).

    Parameters
    ----------
    qid, student : str

    Returns
    -------
    dict
    """
    problem = get_problem(qid)
    sid = normalize_student(student)
    if sid is None:
        return dict(problem.defaults)
    return dict(problem.sample(rng_for(sid, qid)))


def reference(qid: str, student: object = None) -> Any:
    """The right answer to ``qid`` for one student: a float in the unit, an int, or a letter.

    Parameters
    ----------
    qid, student : str

    Returns
    -------
    float, int or str
    """
    return get_problem(qid).reference(params(qid, student))


def mistakes(qid: str, student: object = None) -> list[Mistake]:
    """The problem's own known wrong answers for one student (no unit mix-ups), finite and outside
    its :meth:`~lesson_lib.coursework.problems.bank.Problem.right_band` (inside, they are right).

    Parameters
    ----------
    qid, student : str

    Returns
    -------
    list of Mistake
    """
    problem = get_problem(qid)
    if problem.kind == "choice":
        return []
    p = params(qid, student)
    return _mistakes(problem, p, float(problem.reference(p)))


def _mistakes(problem: Problem, p: Params, ref: float) -> list[Mistake]:
    """:func:`mistakes` of parameters ``p`` whose reference is ``ref``."""
    low, high = problem.right_band(ref)
    return [m for m in problem.mistakes(p) if math.isfinite(m.value) and not low <= m.value <= high]


def statement(qid: str, student: object = None) -> str:
    """The problem's statement in Markdown, with this student's numbers and how to answer.

    Parameters
    ----------
    qid, student : str

    Returns
    -------
    str
    """
    problem = get_problem(qid)
    text = problem.template.format(**problem.facts(params(qid, student)))
    return f"{text}\n\n*Answer with {problem.answer_format()}.*"


def solution_text(qid: str, student: object = None) -> str:
    """The worked solution in Markdown, with this student's numbers.

    Parameters
    ----------
    qid, student : str

    Returns
    -------
    str
    """
    problem = get_problem(qid)
    return problem.solution_template.format(**problem.facts(params(qid, student)))


class MarkdownText(str):
    """A string that Jupyter and MyST-NB display as Markdown."""

    def _repr_markdown_(self) -> str:
        return str(self)


def show(qid: str, student: object = None) -> MarkdownText:
    """Display problem ``qid`` in a notebook (a cell's last expression): header and statement.

    Parameters
    ----------
    qid, student : str

    Returns
    -------
    MarkdownText
    """
    problem = get_problem(qid)
    header = (
        f"**{problem.qid}** \u00b7 difficulty {problem.stars} \u00b7 practises *{problem.chapter}*"
    )
    return MarkdownText(f"{header}\n\n{statement(qid, student)}")


def solution(qid: str, student: object = None) -> MarkdownText:
    """Display the worked solution of ``qid`` (used by the book's solution dropdowns).

    Parameters
    ----------
    qid, student : str

    Returns
    -------
    MarkdownText
    """
    return MarkdownText(solution_text(qid, student))


def units_of(name: str) -> tuple[str, float] | None:
    """The dimension and size of a unit a problem may ask for, None for other names.

    Parameters
    ----------
    name : str
        ``"GiB"``, ``"ms"``, ``"x"`` ...

    Returns
    -------
    tuple of (str, float) or None
        ``("bytes", 2**30)`` for GiB, ``("time", 1e-3)`` for ms, ``("ratio", 1.0)`` for x.
    """
    if name in BYTE_UNITS:
        return "bytes", BYTE_UNITS[name]
    if name in TIME_UNITS:
        return "time", TIME_UNITS[name]
    return ("ratio", 1.0) if name == "x" else None


def overview_table() -> MarkdownText:
    """The set at a glance (id, title, chapter, difficulty, unit), a Markdown and HTML table.

    Returns
    -------
    MarkdownText
    """
    header = ("Problem", "Title", "Practises", "Difficulty", "Answer")
    rows = [
        (p.qid, p.title, p.chapter, p.stars, "a letter" if p.kind == "choice" else p.unit)
        for p in PROBLEMS.values()
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return _Table("\n".join(lines), header, rows)


def _html_row(cells: tuple[str, ...], tag: str) -> str:
    return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"


class _Table(MarkdownText):
    """Markdown text with an HTML twin, for renderers without Markdown tables."""

    def __new__(cls, text: str, header: tuple[str, ...], rows: list[tuple[str, ...]]):
        obj = super().__new__(cls, text)
        body = "".join(_html_row(row, "td") for row in rows)
        obj._html = f"<table><thead>{_html_row(header, 'th')}</thead><tbody>{body}</tbody></table>"
        return obj

    def _repr_html_(self) -> str:
        return self._html
