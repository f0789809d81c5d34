"""Grader step: the answers of a run, from the kernel or, where it did not run, from the source.

The ``answer_q...`` readings (:class:`~lesson_lib.coursework.answers.Reading`) are all the runner
saves from the sandbox. Answers of cells a time-out or dead kernel kept from running (all, if no
kernel answered) are read from the source if plain values (``answer_q3 = 1.5``), each marked.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.coursework.answers import Reading, plain_text
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.runner import code_sources
from lesson_lib.coursework.sandbox_run import RunRecord
from lesson_lib.coursework.student_ids import normalize_student
from lesson_lib.model._safe_io import printable

#: Largest code cell whose source is parsed for plain values, characters.
MAX_CELL_CHARS = 20_000
_PARSE_ERRORS = (SyntaxError, ValueError, MemoryError, RecursionError)


def assignments(
    nb: object, wanted: Callable[[str], bool], hints: Collection[str], first: int = 0
) -> Iterator[tuple[str, ast.expr]]:
    """Every top-level ``name = value`` of a wanted name in a notebook's code cells, in order; cells
    that are not text, over :data:`MAX_CELL_CHARS`, without any of ``hints`` or not Python skipped.

    Parameters
    ----------
    nb : dict
        The notebook as parsed JSON or ``nbformat.NotebookNode`` (not executed).
    wanted : callable
        ``wanted(name)``: whether an assignment to ``name`` is read.
    hints : collection of str
        A cell is parsed only when its source holds one of them.
    first : int, default 0
        Index, among the code cells, of the first one read.

    Returns
    -------
    iterator of (str, ast.expr)
    """
    try:
        sources = code_sources(nb)
    except ValueError:
        return
    for source in sources[max(first, 0) :]:
        if len(source) > MAX_CELL_CHARS or not any(h in source for h in hints):
            continue
        try:
            tree = ast.parse(source)
        except _PARSE_ERRORS:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and wanted(target.id):
                    yield target.id, node.value


def _static_answers(nb: object, first: int = 0) -> dict[str, Any]:
    """Literal answers (``answer_q3 = 1.5``) in code cells from ``first`` on, by id; last wins."""
    answers: dict[str, Any] = {}
    for name, value in assignments(nb, lambda n: n.startswith("answer_q"), ["answer_q"], first):
        qid = name[len("answer_") :]
        try:
            answers[qid] = ast.literal_eval(value)
        except (TypeError, *_PARSE_ERRORS):
            answers.pop(qid, None)
    return answers


def static_student(nb: object) -> str | None:
    """The plain string a notebook's code cells last assign to ``STUDENT``, read from source.

    Parameters
    ----------
    nb : dict

    Returns
    -------
    str or None
    """
    found = None
    for _, value in assignments(nb, lambda n: n == "STUDENT", ["STUDENT"]):
        if isinstance(value, ast.Constant):
            found = plain_text(value.value)
    return found


def _source_note(cell_index: int) -> str:
    """What an answer read from the source after a stop says, ``cell_index`` from 0."""
    return f"read from source: the notebook stopped at code cell {cell_index + 1}"


def _plain_payload(payload: object) -> tuple[dict[str, Reading], str | None] | None:
    """Readings of the answers and the declared STUDENT from the runner's payload, else None."""
    if not isinstance(payload, dict) or not isinstance(payload.get("answers"), dict):
        return None
    found = payload["answers"]
    answers = {
        q: Reading.from_json(found[f"answer_{q}"]) for q in PROBLEMS if f"answer_{q}" in found
    }
    return answers, plain_text(payload.get("student"))


@dataclass
class Extracted:
    """A run's answers and where they came from."""

    #: Problem id -> a reading, or a literal read from the source.
    answers: dict[str, Any]
    #: The ``STUDENT`` the notebook itself assigns.
    declared: str | None
    #: Problem id -> why its answer was read from the source.
    from_source: dict[str, str] = field(default_factory=dict)
    #: For the grades CSV.
    notes: list[str] = field(default_factory=list)


def extract_answers(nb: dict, record: RunRecord) -> Extracted:
    """The answers and declared ``STUDENT`` of a run (see the module).

    Parameters
    ----------
    nb : dict
    record : RunRecord

    Returns
    -------
    Extracted
    """
    cells = len(code_sources(nb))
    at = record.stopped_at
    stopped = at if at is not None and 0 <= at < cells else None
    plain = _plain_payload(record.payload)
    later = _static_answers(nb, stopped) if stopped is not None else {}
    if plain is None:
        got = Extracted(_static_answers(nb), static_student(nb))
        got.notes.append("answers read from the answer cells' source, not from running it")
        why = _source_note(stopped) if stopped is not None else "read from source: it did not run"
        got.from_source = dict.fromkeys(got.answers, why)
        if later:
            got.notes.append(f"{why}: {', '.join(later)}")
        return got
    got = Extracted(*plain)
    if later:
        got.answers = {**got.answers, **later}
        got.from_source = dict.fromkeys(later, _source_note(stopped))
        got.notes.append(f"{_source_note(stopped)}: {', '.join(later)}")
    return got


def declared_note(sid: str | None, declared: str | None) -> str:
    """The note on a notebook's own ``STUDENT`` when it is not the ID ``sid`` graded, or "".

    Parameters
    ----------
    sid, declared : str or None

    Returns
    -------
    str
    """
    if declared is None or not declared.strip():
        return ""
    try:
        same = sid is not None and normalize_student(declared) == sid
    except (TypeError, ValueError):
        same = False
    if same:
        return ""
    graded = f"graded as {sid!r} (its file name)" if sid else "not graded"
    return f"the notebook says STUDENT = {printable(repr(declared), 64)}; {graded}"
