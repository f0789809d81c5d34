"""The student edition: the book's pages as notebooks, with every solution removed.

The pages of ``_toc.yml`` lose their solutions (:mod:`~lesson_lib.coursework.myst_pages`) and become
notebooks with statements written in as text. With student IDs each student gets a folder of their
own variants, drawn with the course salt, whose check cells only say whether an answer can be read
(:mod:`~lesson_lib.coursework.own_check`); the IDs issued are added to the roster the grader reads.
Nothing the edition did not make is written over (:mod:`~lesson_lib.coursework.output_folder`).

Command line::

    python -m lesson_lib.coursework.student_edition --out _build/student
    python -m lesson_lib.coursework.student_edition --out handout --ids s001 s002
    python -m lesson_lib.coursework.student_edition --out handout --ids s001 --salt-file salt
    python -m lesson_lib.coursework.student_edition --out class --ids-file roster.csv --class-notebook
    python -m lesson_lib.coursework.student_edition --site _build/nosolutions-src
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import os
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import jupytext
import nbformat

from lesson_lib.chapters.notebook import (
    expand_directives,
    fill_glue,
    live_values_name,
    page_numbers,
    toc_chapters,
    without_glue_call,
)
from lesson_lib.coursework.files import write_atomically
from lesson_lib.coursework.lms_names import CLASS_FIELD, METADATA_FIELD, PROBLEM_SET
from lesson_lib.coursework.lms_names import METADATA_KEY as METADATA_KEY_LESSON
from lesson_lib.coursework.myst_pages import INSTRUCTOR_ONLY as INSTRUCTOR_ONLY
from lesson_lib.coursework.myst_pages import (
    META_KEY,
    plain_markdown,
    strip_solutions,
    student_pages,
)
from lesson_lib.coursework.myst_pages import toc_pages as toc_pages
from lesson_lib.coursework.output_folder import check_folder, write_manifest
from lesson_lib.coursework.own_digests import data_cells
from lesson_lib.coursework.problems import overview_table, show
from lesson_lib.coursework.roster import (
    MAX_ROSTER_BYTES,
    add_issued_ids,
    issued_roster_file,
    read_roster,
)
from lesson_lib.coursework.student_site import ANSWER_FUNCTIONS as ANSWER_FUNCTIONS
from lesson_lib.coursework.student_site import write_site_sources
from lesson_lib.coursework.time_limits import DEFAULT_TIMEOUT_S
from lesson_lib.coursework.variants import (
    DEFAULT_SALT_FILE,
    SALT_FILE_ENV,
    create_salt_file,
    normalize_student,
    salt_file_in_use,
    salted,
)
from lesson_lib.model._safe_io import read_text
from lesson_lib.model._validate import require_number

#: IDs starting with this are the documentation's examples, which the edition never issues.
EXAMPLE_PREFIX = "example-"

#: Seconds the grader gives a notebook unless the instructor says otherwise (its ``--timeout``),
#: the grader's own default, so the instructions cannot say another number.
DEFAULT_TIME_LIMIT_S: float = DEFAULT_TIMEOUT_S

#: A problem's statement cell, written into the notebook as text by the edition.
_SHOW_CELL = re.compile(r'^\s*show\(\s*"(?P<qid>q\d+)"\s*,\s*STUDENT\s*\)\s*$')
#: The cell showing the set's overview table.
_OVERVIEW_CELL = re.compile(r"^\s*overview_table\(\)\s*$", re.MULTILINE)
#: The setup cell's import of the book's self-check, replaced in a salted edition.
_SETUP_IMPORT = re.compile(r"^from lesson_lib\.coursework import [^\n]*$", re.MULTILINE)


def _instructions(
    student: str | None, file_name: str, *, own_check: bool, time_limit: float, mode=(False, False)
) -> str:
    """The problem set's first cell: what the notebook is and how to hand it in; ``mode``: (a class
    notebook, its checks hold digests)."""
    if mode[0]:
        head = (
            "**Problem set for the class.** Type the student ID you were issued into `STUDENT` "
            "in the first code cell, then run all cells: the problems show your own numbers. "
            "Solutions are not included."
        )
    elif student is None:
        head = (
            "**Student edition.** Solutions are not included; the problems show the book's own "
            "numbers, and each check cell checks an answer against them."
        )
    else:
        head = (
            f"**Student edition for student ID `{student}`.** Solutions are not included; the "
            "problems show your own numbers."
        )
    if mode[1]:
        checking = (
            "**What the check cells tell you.** For your own numbers: right (at the precision "
            "the problem asks), one of the usual mistakes and what probably went wrong, or not "
            "matched. The answers are not in this notebook, only salted digests of them."
        )
    elif own_check:
        checking = (
            "**What the check cells tell you.** Whether the grader can read your answer (a "
            "number in the unit asked for, a text with a unit of that kind, or a letter), not "
            "whether it is right: the answers to your numbers are not in this notebook. To "
            "practise with feedback, solve the book's version (the Problem set page of the "
            'website) and check it with `check("q3", answer)`, without your ID.'
        )
    else:
        checking = (
            "**What the check cells tell you.** Right, close or wrong against the numbers shown, "
            "with a hint when the answer looks like a usual mistake."
        )
    return "\n\n".join(
        (
            head,
            "**Before you hand in**",
            f"1. Hand in this file under the name it has now, `{file_name}`: do not rename it "
            "or hand in a copy under another name.\n"
            "2. Restart and run all: in JupyterLab, *Kernel > Restart Kernel and Run All "
            "Cells...*, then check that no cell shows an error and every answer cell holds "
            "your answer, and save (*File > Save Notebook*). The grader runs the notebook the "
            "same way, top to bottom in a fresh kernel: an answer that only a deleted or "
            "reordered cell made is lost.\n"
            f"3. The grader gives the whole notebook {time_limit:g} seconds, counted once its "
            "kernel has started; the problem set alone runs in a few seconds. A notebook "
            "still running at the limit is stopped there and marked *timed out*: the cells "
            "it had not reached do not run, so take long experiments out before you hand in.",
            checking,
            "Work the answers out: a notebook that calls `reference()` or `solution_text()`, "
            "or imports the problem bank (`lesson_lib.coursework.problems`), is flagged for "
            "your instructor.",
        )
    )


def _baked_cell(cell: nbformat.NotebookNode, sid: str | None, keep_show: bool) -> object:
    """A statement or overview cell as the Markdown it shows (None for any other cell, and for a
    statement kept as code: a class notebook shows the typed ID's own)."""
    if cell.cell_type != "code":
        return None
    match = _SHOW_CELL.match(cell.source)
    if match and not keep_show:
        return nbformat.v4.new_markdown_cell(str(show(match["qid"], sid)))
    if _OVERVIEW_CELL.search(cell.source):
        return nbformat.v4.new_markdown_cell(str(overview_table()))
    return None


def page_notebook(
    path: Path,
    student: str | None = None,
    *,
    salt: str | None = None,
    file_name: str | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT_S,
    class_ids: Sequence[str] = (),
    self_check: bool = True,
) -> nbformat.NotebookNode:
    """One page as a student notebook: solutions removed, statements written in, checks kept.

    Parameters
    ----------
    path : Path
        The page's MyST Markdown source.
    student : str, optional
        Student ID written into the cell marked ``coursework: student-id``.
    salt : str, optional
        The course salt the student's numbers are drawn with; with a student, the check
        cells then only say whether an answer can be read. None: the public variants.
    file_name : str, optional
        The name said in the instructions (default: the one the edition writes).
    time_limit : float, default :data:`DEFAULT_TIME_LIMIT_S`
        The grader's time limit, said in the instructions.
    class_ids : sequence of str, optional
        With a salt and no student: one notebook for these normalised IDs, whose statements show
        the ID typed (:func:`~lesson_lib.coursework.own_digests.data_cells`).
    self_check : bool, default True
        With a salt: the check cells say right, a named mistake or not matched for the student's
        numbers (False: only whether an answer can be read).

    Returns
    -------
    nbformat.NotebookNode
        A version 4.5 notebook with deterministic cell ids (a data cell's contents are not).
    """
    sid = normalize_student(student)
    own_check = (sid is not None or bool(class_ids)) and salt is not None
    for_class, digests = own_check and bool(class_ids), own_check and self_check
    text = strip_solutions(path.read_text())
    nb = jupytext.reads(text, fmt="md:myst")
    live = live_values_name(text)
    # the chapter list without links: a student's folder names its notebooks its own way
    toc = [("", title) for _, title in toc_chapters(path.parent.parent)]
    cells = []
    with salted(salt):
        for cell in nb.cells:
            if cell.metadata.get(META_KEY) == "solution":
                continue
            if cell.cell_type == "markdown":
                plain = expand_directives(plain_markdown(cell.source), path, toc)
                cell.source = fill_glue(plain, page_numbers(path.stem), path.stem, live).strip("\n")
            elif cell.cell_type == "code":  # the text has the numbers: no glue call to run
                cell.source = without_glue_call(cell.source)
            if cell.cell_type in ("markdown", "code") and not cell.source.strip():
                continue
            baked = _baked_cell(cell, sid, keep_show=for_class)
            if baked is not None:
                cells.append(baked)
                continue
            cells.append(cell)
            if cell.metadata.get(META_KEY) == "student-id":
                cell.source = _setup_source(cell.source, sid, own_check, for_class)
                cells += _data_cells(sid, salt, class_ids, self_check) if own_check else []
    if path.stem == "problems":
        name = file_name or Path(_notebook_path(sid, path.stem)).name
        note = _instructions(
            sid, name, own_check=own_check, time_limit=time_limit, mode=(for_class, digests)
        )
    elif sid is not None:
        note = f"*Student edition for student ID `{sid}`: solutions are not included.*"
    else:
        note = "*Student edition: solutions are not included.*"
    if live is not None:  # the lab: what it measures cannot be written in before it runs
        note += (
            "\n\n*This page measures your machine: the numbers it finds appear in the text"
            " once its cells have run, in JupyterLab with jupyterlab-myst (as `make lab` and"
            " Binder give you); elsewhere, read them in the cells' output.*"
        )
    cells.insert(0, nbformat.v4.new_markdown_cell(note))
    nb.cells = cells
    nb.metadata.pop("jupytext", None)
    if sid is not None:  # the ID survives a renamed file (lms_names.metadata_student)
        nb.metadata[METADATA_KEY_LESSON] = {METADATA_FIELD: sid}
    elif for_class:  # the grader reads the typed STUDENT (identity.identify)
        nb.metadata[METADATA_KEY_LESSON] = {CLASS_FIELD: True}
    nb.nbformat, nb.nbformat_minor = 4, 5
    for index, cell in enumerate(nb.cells):
        cell.id = f"{path.stem}-{index:03d}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.validate(nb)
    return nb


def _notebook_path(student: str | None, page: str) -> str:
    """``s001/s001_problems.ipynb`` (the ID survives a platform that drops folders),
    ``s001/sizing.ipynb``, or ``problems.ipynb`` without an ID."""
    if student is None:
        return f"{page}.ipynb"
    name = f"{student}_{page}" if page == PROBLEM_SET else page
    return f"{student}/{name}.ipynb"


def _setup_source(source: str, sid: str | None, own_check: bool, for_class: bool) -> str:
    """The setup cell: the student's ID, and the self-check that can run without answers."""
    module = "lesson_lib.coursework.own_check" if own_check else "lesson_lib.coursework"
    names = "check, check_all, show" if for_class else "check, check_all"
    source = _SETUP_IMPORT.sub(f"from {module} import {names}", source, count=1)
    if for_class:
        line = 'STUDENT = ""  # type the student ID you were issued, e.g. "s1234567"'
    elif sid is not None:
        line = f'STUDENT = "{sid}"  # your student ID: leave it as it is'
    else:
        return source
    return re.sub(r"^STUDENT\s*=.*$", line, source, flags=re.MULTILINE)


def _data_cells(sid: str | None, salt: str, class_ids: Sequence[str], digests: bool) -> list:
    """The hidden cells that load a salted edition's statements (class) and digests."""
    sources = data_cells(
        list(class_ids) or [sid], salt, statements=bool(class_ids), digests=digests
    )
    meta = {META_KEY: "edition-data", "jupyter": {"source_hidden": True}}
    return [nbformat.v4.new_code_cell(source, metadata=meta) for source in sources]


def write_edition(
    out: Path,
    root: Path,
    ids: Sequence[str] = (),
    pages: Iterable[str] | None = None,
    *,
    force: bool = False,
    salt: str | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT_S,
    class_notebook: bool = False,
    self_check: bool = True,
) -> list[Path]:
    """Write the student edition's notebooks, into a new folder or one the edition made.

    Parameters
    ----------
    out : Path
        Output folder (created); with IDs one ``out/<id>/`` each, the ID in its notebooks' metadata.
    root : Path
        Book root (holding ``_toc.yml``).
    ids : sequence of str, optional
        Student IDs; see :func:`~lesson_lib.coursework.student_ids.normalize_student`.
    pages : iterable of str, optional
        Page names to include (default: every notebook page but the instructor's).
    force : bool, default False
        Write even into a folder the edition did not make, over files it did not write or that
        changed (never into the book's folder or a checkout).
    salt : str, optional
        The course salt (see :func:`page_notebook`); None gives the public variants.
    time_limit : float, default :data:`DEFAULT_TIME_LIMIT_S`
        The grader's time limit, said in the problem set's instructions.
    class_notebook : bool, default False
        One folder for the whole class: its problem set asks for the student's ID and shows
        that ID's numbers (needs IDs and a salt).
    self_check : bool, default True
        With a salt, the check cells say right, a named mistake or not matched for the
        student's own numbers (see :func:`page_notebook`).

    Returns
    -------
    list of Path

    Raises
    ------
    ValueError
        If an ID is empty, malformed, repeated or starts with :data:`EXAMPLE_PREFIX`, a page is
        unknown, ``out`` may not be written into (``FolderRefused``), or a class notebook lacks
        IDs or a salt.
    """
    chosen = student_pages(root, pages)
    students = _issued_students(ids)
    out = Path(out)
    if class_notebook and (not students or salt is None):
        raise ValueError(
            "class_notebook needs student IDs and a course salt (without them the plain "
            "edition is already one notebook for everyone)"
        )
    folders = [None] if class_notebook else students or [None]
    planned = {_notebook_path(sid, page.stem): (sid, page) for sid in folders for page in chosen}
    class_ids = students if class_notebook else []
    options = {"salt": salt, "time_limit": time_limit, "self_check": self_check}
    options["class_ids"] = class_ids
    manifest = check_folder(out, root, writes=planned, force=force)
    written = []
    try:
        for rel, (sid, page) in planned.items():
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            nb = page_notebook(page, sid, file_name=target.name, **options)
            data = nbformat.writes(nb).encode("utf-8")
            write_atomically(target, lambda fh, data=data: fh.write(data), binary=True)
            manifest[rel] = hashlib.sha256(data).hexdigest()
            written.append(target)
    finally:
        if written:
            write_manifest(out, manifest)
    return written


def _issued_students(ids: Sequence[str]) -> list[str]:
    """The IDs an edition may issue, normalised, in order; refused if repeated or an example's."""
    students = [normalize_student(i) for i in ids]
    if any(s is None for s in students):
        raise ValueError("ids must not be empty strings")
    if len(set(students)) != len(students):
        raise ValueError(f"ids must be unique (compared without case), got {list(ids)}")
    examples = [s for s in students if s is not None and s.startswith(EXAMPLE_PREFIX)]
    if examples:
        raise ValueError(
            f"ids must not start with {EXAMPLE_PREFIX!r}, kept for the documentation's "
            f"examples; got {examples}"
        )
    return [s for s in students if s is not None]


def _default_root() -> Path:
    here = Path.cwd()
    if (here / "_toc.yml").exists():
        return here
    return Path(__file__).resolve().parents[2]


def _refuse_a_list_without_its_salt(salt_file: Path) -> None:
    """Stop before a new salt is drawn beside IDs issued with an earlier one (two cohorts mixed)."""
    listed = issued_roster_file(salt_file)
    if not salt_file.exists() and listed.exists():
        raise ValueError(
            f"{listed} lists IDs issued with a course salt that is no longer in {salt_file}; "
            "restore that salt, or for a new cohort move the list away first"
        )


def _ids_from_file(path: Path) -> tuple[list[str], Path | None]:
    """``--ids-file``'s IDs: a roster's ``student_id`` column (and the roster), else a line each."""
    text = read_text(path, "--ids-file", ValueError, MAX_ROSTER_BYTES)
    first = next(csv.reader(io.StringIO(text)), [])
    if "student_id" in (name.strip().casefold() for name in first):
        return [entry.student_id for entry in read_roster(path).entries], path
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")], None


def _list_issued(roster_file: Path, students: Sequence[str], given: Path | None = None) -> None:
    """Add ``students`` to the issued IDs' roster and say what it holds and lacks."""
    added = add_issued_ids(roster_file, students)
    roster = read_roster(roster_file)
    print(
        f"issued IDs: {roster_file} lists {len(roster.entries)} ID(s), {len(added)} new "
        "(the grader reads it with the salt: an ID not on it is graded 'unknown ID')"
    )
    blank = roster.without_platform_user()
    if blank and given is not None:
        print(f"  grade with --roster {given}, which names the students' platform users")
    elif blank:
        print(
            f"  {len(blank)} row(s) have no lms_user_id yet: fill it in from the platform "
            "(Canvas user id or Gradescope Student ID) so each student's platform user is "
            "checked and Canvas's gradebook can be filled"
        )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lesson_lib.coursework.student_edition",
        description="Write the lesson's notebooks without solutions, optionally per student.",
    )
    parser.add_argument("--root", type=Path, default=None, help="book root (has _toc.yml)")
    parser.add_argument("--out", type=Path, default=Path("_build/student"), help="output folder")
    parser.add_argument("--ids", nargs="*", default=[], help="student IDs, one folder each")
    parser.add_argument(
        "--ids-file", type=Path, help="the class roster CSV, or a file with one student ID per line"
    )
    parser.add_argument("--pages", nargs="*", help="only these pages, e.g. problems")
    parser.add_argument(
        "--site", type=Path, help="instead: copy the book's sources here without solutions"
    )
    parser.add_argument(
        "--salt-file",
        type=Path,
        default=None,
        help="with --ids: the course salt, made here the first time and read by the grader; "
        f"keep it from students (default: ${SALT_FILE_ENV}, else {DEFAULT_SALT_FILE})",
    )
    parser.add_argument(
        "--no-salt",
        action="store_true",
        help="with --ids: public variants, which any copy of lesson_lib computes (the check "
        "cells then say right or wrong)",
    )
    parser.add_argument(
        "--class-notebook",
        action="store_true",
        help="with --ids and a salt: one notebook for the whole class (for Canvas or Gradescope); "
        "each student types their ID and sees their own numbers",
    )
    parser.add_argument(
        "--no-self-check",
        action="store_true",
        help="with a salt: the check cells say only whether an answer can be read, not whether "
        "it is right for the student's numbers",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT_S,
        help=f"the grader's --timeout, said in the instructions (default {DEFAULT_TIME_LIMIT_S:g})",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into (--out) or replace (--site) a folder the edition did not make, or "
        "over files that changed since it wrote them; never the book's folder or a checkout",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional

    Returns
    -------
    int
        Exit status: 0 on success, 2 on a usage error.
    """
    args = _parser().parse_args(argv)
    root = args.root or _default_root()
    try:
        if args.site:
            pages = write_site_sources(args.site, root, force=args.force)
            print(f"wrote {len(pages)} pages without solutions under {args.site}")
            print(f"build it with: jupyter-book build {args.site}")
            return 0
        ids, given_roster = list(args.ids), None
        if args.ids_file:
            from_file, given_roster = _ids_from_file(args.ids_file)
            ids += from_file
        require_number("--time-limit", args.time_limit, strict=True, unit="s")
        salt = None
        # the file given, else the one SALT_FILE_ENV names ("" for none), else the default
        unnamed = args.salt_file is None and SALT_FILE_ENV not in os.environ
        salt_file = DEFAULT_SALT_FILE if unnamed else salt_file_in_use(args.salt_file)
        students = _issued_students(ids)  # refused before a salt or a list is made
        if students and not args.no_salt and salt_file is not None:
            _refuse_a_list_without_its_salt(salt_file)
            salt = create_salt_file(salt_file)
            print(f"course salt: {salt_file} (the grader reads it; keep it from students)")
            # Listed before the notebooks are written: an ID on the list that nobody got is
            # harmless, a student's ID missing from it would be graded "unknown ID".
            _list_issued(issued_roster_file(salt_file), students, given_roster)
        elif students:
            print(
                "variants: public, so no list of issued IDs is kept (the grader takes any "
                "valid ID unless it is given --roster)"
            )
        options = {"force": args.force, "salt": salt, "time_limit": args.time_limit}
        options.update(class_notebook=args.class_notebook, self_check=not args.no_self_check)
        written = write_edition(args.out, root, ids, args.pages, **options)
    except (OSError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    folders = sorted({p.parent for p in written})
    print(f"wrote {len(written)} notebooks without solutions into {len(folders)} folder(s):")
    for folder in folders:
        print(f"  {folder}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
