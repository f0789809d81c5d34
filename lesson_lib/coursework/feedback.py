"""Feedback to hand back: one self-contained HTML file per student, beside the grades.

Each file (``feedback/s001.html``) is the page the instructor guide's "Feedback for each student"
describes, beside the notebook as the grader ran it (``s001.ipynb``; ``s001+2.ipynb`` for a second), style inline and no script, a submission's text escaped. Points are the grades CSV's:
:attr:`~lesson_lib.coursework.problems.bank.Problem.max_points` per problem, imported parts a person
grades, the late factor beside the total when it cut anything. An answer read from the source, its
cell not run (a time-out, a kernel crash), says so beside its verdict.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from lesson_lib.coursework.check import UNANSWERED, CheckResult
from lesson_lib.coursework.files import write_atomically
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.manual_grading import MANUAL_PARTS
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.status import Status
from lesson_lib.model._safe_io import printable, require_output_file

_STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto;
       padding: 0 1rem; color: #1a1a1a; background: #fff; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ccc; padding: .4rem .5rem; text-align: left;
         vertical-align: top; }
td.answer { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.right { color: #0b6b2e; } .close { color: #8a5a00; } .wrong, .unreadable { color: #a11a1a; }
.source { font-size: .9em; color: #444; }
@media (prefers-color-scheme: dark) {
  body { color: #eee; background: #121212; } th, td { border-color: #444; }
  .right { color: #6fd08c; } .close { color: #f0c05a; }
  .wrong, .unreadable { color: #ff8a8a; } .source { color: #bbb; }
}
"""

#: What a problem with no answer says (the checker's own message asks to run the cell again).
NO_ANSWER = "No answer was found for this problem in the notebook handed in."
#: The statuses a student is shown, worded for them.
STATUS_WORDS = {
    Status.RAN: "Your notebook ran to the end.",
    Status.RAN_WITH_ERRORS: "Your notebook ran to the end; some cells raised an error.",
    Status.TIMED_OUT: "Your notebook was stopped at the time limit.",
    Status.KERNEL_DIED: "Your notebook's kernel crashed.",
    Status.OUT_OF_SPACE: "Your notebook filled the space it may write.",
    Status.COULD_NOT_RUN: "Your notebook could not be run.",
    Status.NOT_A_NOTEBOOK: "The file handed in could not be read as a notebook.",
}


def shown_message(result: CheckResult) -> str:
    """The checker's message for a student; for a blank answer, :data:`NO_ANSWER`.

    Parameters
    ----------
    result : CheckResult

    Returns
    -------
    str
    """
    return NO_ANSWER if result.status == UNANSWERED else result.message


def _text(value: object, limit: int = 2000) -> str:
    return html.escape(printable(value, limit), quote=True)


def _executed_name(student: str, number: int) -> str:
    """The name of the ``number``-th executed notebook of an ID: ``+`` is in no ID, so ``s001+2``
    is nobody's own."""
    return f"{student}.ipynb" if number == 1 else f"{student}+{number}.ipynb"


def _feedback_html(student: str, submissions: Sequence[Submission], release: bool = False) -> str:
    """A student's feedback page, one section per notebook: whole HTML, inline style, no script."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Feedback for {_text(student, 80)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Feedback for {_text(student, 80)}</h1>",
    ]
    decided = any(not sub.counted for sub in submissions)
    if len(submissions) > 1:
        parts.append(
            f"<p>{len(submissions)} notebooks were handed in under this ID; each is graded "
            + (
                "below, and the one marked as counting is your grade.</p>"
                if decided
                else "below, and your instructor decides which one counts.</p>"
            )
        )
    for number, sub in enumerate(submissions, start=1):
        counts = ""
        if decided:
            counts = " (counts)" if sub.counted else " (not counted)"
        parts.append(f"<h2>{_text(sub.file or sub.path.name, 200)}{counts}</h2>")
        crash = next((f" {note}." for note in sub.notes if "raised an error" in note), "")
        parts.append(
            f"<p>{_text(STATUS_WORDS.get(sub.status, sub.status))}{_text(crash, 300)} "
            f"Score: <strong>{sub.total:g} of {sub.max_points:g}</strong> points.</p>"
        )
        if sub.executed is not None:
            name = _text(_executed_name(student, number))
            parts.append(f'<p>Your notebook as the grader ran it: <a href="{name}">{name}</a>.</p>')
        if sub.late_factor < 1:
            parts.append(
                f"<p>Handed in late: the late policy keeps {sub.late_factor:g} of the "
                f"{sub.earned:g} points earned. {_text(sub.late_note, 300)}</p>"
            )
        parts.append(
            "<table><thead><tr><th>Problem</th><th>Your answer</th><th>Verdict</th>"
            "<th>Points</th><th>What it means</th></tr></thead><tbody>"
        )
        for qid in PROBLEMS:
            result = sub.results.get(qid)
            if result is None:
                continue
            source = sub.from_source.get(qid)
            marked = f'<br><span class="source">({_text(source)})</span>' if source else ""
            status = result.status
            css = status if status in ("right", "close", "wrong", "unreadable") else ""
            parts.append(
                f"<tr><td>{_text(qid, 16)}: {_text(PROBLEMS[qid].title, 120)}</td>"
                f'<td class="answer">{_text(result.given or "(none)", 300)}</td>'
                f'<td class="{css}">{_text(status, 40)}{marked}</td>'
                f"<td>{result.points:g} / {PROBLEMS[qid].max_points:g}</td>"
                f"<td>{_text(shown_message(result))}</td></tr>"
            )
        for qid, part in MANUAL_PARTS.items():
            given = sub.manual.get(qid)
            # the rubric only with the points and once released: a page handed out while late
            # work is still accepted must not give the answer away
            rubric = "The rubric is shown once the deadline for every student has passed."
            if qid not in sub.manual:
                shown = f"to be graded ({part.points:g} point(s), not in the score yet)"
            elif given is None:
                shown = "not graded yet"
            else:
                shown = f"{given:g} / {part.points:g}"
                rubric = part.rubric if release else rubric
            parts.append(
                f"<tr><td>{_text(part.column, 40)}</td><td>(your written reasoning)</td>"
                f"<td>graded by a person</td><td>{_text(shown, 80)}</td>"
                f"<td>{_text(rubric)}</td></tr>"
            )
        parts.append("</tbody></table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_feedback(
    submissions: Sequence[Submission], folder: Path, release: bool = False
) -> list[Path]:
    """Write ``folder/<ID>.html`` for every student with a valid ID (a name that is not one has no
    one to hand it to), and each notebook the grader ran, atomically; files for others are left
    alone.

    Parameters
    ----------
    submissions : sequence of Submission
        Graded notebooks (a regrade's: only those students' files are rewritten).
    folder : Path
        Where the files go (created); not a symbolic link.
    release : bool, default False
        Show the rubric of a part a person graded beside its points (``--release``, once no
        late work is still accepted); without it the rubric is withheld.

    Returns
    -------
    list of Path
        The files written, in the submissions' order.

    Raises
    ------
    ValueError
        If ``folder`` is a symbolic link or not a folder, or a target is not a regular file.
    """
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise ValueError(f"--feedback {folder} must be a folder, not a link or a file")
    folder.mkdir(parents=True, exist_ok=True)
    by_student: dict[str, list[Submission]] = {}
    for sub in submissions:
        if sub.graded_as is not None:
            by_student.setdefault(sub.graded_as, []).append(sub)
    written = []
    for student, subs in by_student.items():
        pages = {f"{student}.html": _feedback_html(student, subs, release)}
        ran = enumerate(subs, start=1)
        pages.update({_executed_name(student, n): s.executed for n, s in ran if s.executed})
        for name, page in pages.items():
            target = require_output_file(folder / name, "--feedback")
            write_atomically(target, lambda fh, page=page: fh.write(page))
            written.append(target)
    return written
