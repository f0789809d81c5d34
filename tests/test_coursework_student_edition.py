"""The student edition: no solution text anywhere, checks kept, deterministic per student."""

import json
import os
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from build_site import MYST_NOTEBOOK_FRONT_MATTER

from lesson_lib.coursework.lookups import find_lookups
from lesson_lib.coursework.problems import PROBLEMS, solution_text, statement
from lesson_lib.coursework.student_edition import (
    ANSWER_FUNCTIONS,
    DEFAULT_TIME_LIMIT_S,
    EXAMPLE_PREFIX,
    main,
    page_notebook,
    strip_solutions,
    student_pages,
    toc_pages,
    write_edition,
    write_site_sources,
)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "problems.md"
IDS = ["s001", "s002", "Alice"]

FIXTURE = (
    MYST_NOTEBOOK_FRONT_MATTER
    + """
(fixture)=
# Fixture

```{exercise-start}
:label: ex-1
```
KEEP-EXERCISE-TEXT
```{exercise-end}
```

```{solution-start} ex-1
:class: dropdown
```
SECRET-GATED-PROSE
```{code-cell} ipython3
print("SECRET-GATED-CODE")
```
More SECRET-GATED-TAIL
```{solution-end}
```

````{solution} ex-2
:class: dropdown
SECRET-NESTED
```python
print("SECRET-NESTED-CODE")
```
````

:::{solution} ex-3
SECRET-COLON
:::

```{admonition} Solution to the warm-up
:class: dropdown
SECRET-ADMONITION
```

```{note}
KEEP-NOTE
:::{solution} ex-4
SECRET-INSIDE-NOTE
:::
```

```{code-cell} ipython3
---
coursework: solution
---
SECRET_CELL = 1
```

```{code-cell} ipython3
check("q1", answer_q1, STUDENT)
```
"""
)


def _solution_blocks(text: str) -> list[str]:
    """Solution content found independently of the stripper: every line of each block."""
    blocks = re.findall(r"```\{solution-start\}.*?```\{solution-end\}\n```", text, flags=re.S)
    blocks += re.findall(r"(`{3,})\{solution\}.*?\n\1\n", text, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines()]


def _notebook_text(nb) -> str:
    return json.dumps(nb)


SOLUTION_FENCE = re.compile(r"^ {0,3}(`{3,}|:{3,})\{solution", re.MULTILINE)


def _has_solution_fence(text: str) -> bool:
    """A solution directive opened anywhere (mentions of the word in prose are fine)."""
    return bool(SOLUTION_FENCE.search(text))


def test_fixture_loses_every_solution_and_keeps_the_rest():
    """Gated, fenced, colon-fenced, nested and marked solutions all go; exercises stay."""
    out = strip_solutions(FIXTURE)
    assert "SECRET" not in out
    assert _has_solution_fence(FIXTURE) and not _has_solution_fence(out)
    for kept in (
        "KEEP-EXERCISE-TEXT",
        "KEEP-NOTE",
        'check("q1", answer_q1, STUDENT)',
        "(fixture)=",
    ):
        assert kept in out
    assert out.startswith("---\njupytext:")


def test_unterminated_gated_solution_is_an_error():
    """A solution-start without its end would swallow the page: refuse instead."""
    with pytest.raises(ValueError, match="no solution-end"):
        strip_solutions("```{solution-start} ex-1\n```\nsecret\n")


def test_fixture_notebook_has_plain_markdown():
    """Exercise directives and labels become plain Markdown Jupyter can show."""
    path = ROOT / "tests" / "_fixture_page.md"
    try:
        path.write_text(FIXTURE)
        nb = page_notebook(path)
    finally:
        path.unlink()
    text = _notebook_text(nb)
    assert "SECRET" not in text
    assert "**Exercise.**" in text
    assert "exercise-start" not in text and "(fixture)=" not in text


def test_every_book_page_loses_its_solutions():
    """Each page of the book: no solution directive left, no line of any solution block."""
    for page in student_pages(ROOT):
        source = page.read_text()
        nb = page_notebook(page)
        nb_text = _notebook_text(nb)
        assert not any(_has_solution_fence(c.source) for c in nb.cells), page.name
        outside = strip_solutions(source)
        for line in _solution_blocks(source):
            if len(line) >= 20 and line not in outside:
                assert json.dumps(line)[1:-1] not in nb_text, (page.name, line)


def test_instructor_page_is_not_handed_out():
    """The instructor page is in the book but never in the student edition."""
    assert any(p.stem == "instructor" for p in toc_pages(ROOT))
    assert all(p.stem != "instructor" for p in student_pages(ROOT))
    assert any(p.stem == "problems" for p in student_pages(ROOT))


@pytest.mark.parametrize("student", [None, *IDS])
def test_problem_set_has_no_solution_text(student):
    """No worked solution of this student's (or the book's) variant appears in the notebook."""
    nb = page_notebook(PAGE, student)
    text = _notebook_text(nb)
    for qid in PROBLEMS:
        for variant in {student, None}:
            solution = solution_text(qid, variant)
            for sentence in re.split(r"(?<=[.:])\s+", solution):
                if len(sentence) >= 25:
                    assert json.dumps(sentence)[1:-1] not in text, (qid, sentence)
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    assert not any("solution(" in s or "import solution" in s for s in sources)


def test_problem_set_keeps_answers_and_checks():
    """Every problem keeps its statement (written in as text), an empty answer cell and
    its check cell."""
    nb = page_notebook(PAGE, "s001")
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    texts = [c.source for c in nb.cells if c.cell_type == "markdown"]
    for qid in PROBLEMS:
        assert not any("show(" in s for s in sources)
        assert any(statement(qid, "s001") in t for t in texts), qid
        assert f"answer_{qid} = None" in sources
        assert f'check("{qid}", answer_{qid}, STUDENT)' in sources
    assert 'STUDENT = "s001"' in "\n".join(sources)
    assert "check_all(globals(), STUDENT)" in sources


def test_same_id_same_bytes_different_ids_different_numbers(tmp_path):
    """Writing twice gives byte-identical files; two IDs differ, and so do their numbers."""
    first = write_edition(tmp_path / "a", ROOT, IDS, ["problems"])
    second = write_edition(tmp_path / "b", ROOT, IDS, ["problems"])
    for x, y in zip(first, second, strict=True):
        assert x.read_bytes() == y.read_bytes()
    s1 = (tmp_path / "a" / "s001" / "s001_problems.ipynb").read_text()
    s2 = (tmp_path / "a" / "s002" / "s002_problems.ipynb").read_text()
    assert s1 != s2
    assert (tmp_path / "a" / "alice" / "alice_problems.ipynb").exists()
    differing = sum(statement(q, "s001") != statement(q, "s002") for q in PROBLEMS)
    assert differing >= len(PROBLEMS) // 2


def test_cell_ids_are_stable_and_valid(tmp_path):
    """Cell ids are derived from the page (no random ids), and the notebook validates."""
    nb = page_notebook(PAGE, "s001")
    assert nb.cells[0].id == "problems-000"
    assert len({c.id for c in nb.cells}) == len(nb.cells)
    nbformat.validate(nb)


def test_bad_ids_are_refused(tmp_path):
    """Duplicate or malformed IDs stop the command with a message, exit status 2."""
    with pytest.raises(ValueError, match="unique"):
        write_edition(tmp_path, ROOT, ["s1", "S1"], ["problems"])
    assert main(["--root", str(ROOT), "--out", str(tmp_path), "--ids", "a b"]) == 2
    assert main(["--root", str(ROOT), "--out", str(tmp_path), "--pages", "nope"]) == 2


def test_cli_reads_an_id_file(tmp_path, capsys):
    """--ids-file: one ID per line, blank lines and # comments ignored."""
    roster = tmp_path / "roster.txt"
    roster.write_text("# cohort\ns010\n\ns011\n")
    args = ["--root", str(ROOT), "--out", str(tmp_path / "out"), "--ids-file", str(roster)]
    status = main([*args, "--pages", "problems"])
    assert status == 0
    listed = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert listed == [".lesson-student-edition.json", "s010", "s011"]
    assert "wrote 2 notebooks" in capsys.readouterr().out


def test_cli_reads_the_class_roster_as_the_id_file(tmp_path, capsys):
    """--ids-file roster.csv (the file the grader's --roster takes): its student_id column is
    issued, not every line; the advice names it for the platform users the issued list lacks."""
    roster = tmp_path / "roster.csv"
    roster.write_text("lms_user_id,name,section,student_id\n9001,Ada,A,s020\n9002,Bo,A,s021\n")
    args = ["--root", str(ROOT), "--out", str(tmp_path / "out"), "--ids-file", str(roster)]
    salt = ["--salt-file", str(tmp_path / "instructor" / "salt")]
    assert main([*args, *salt, "--pages", "problems"]) == 0
    said = capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "out").iterdir())[1:] == ["s020", "s021"]
    assert f"grade with --roster {roster}, which names the students' platform users" in said
    roster.write_text("lms_user_id,name,section,student_id\n9001,Ada,A,s 020\n")
    assert main([*args, "--pages", "problems", "--force"]) == 2
    assert "row 2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (os.mkfifo, "is a FIFO (named pipe), not a regular file"),  # it blocked, waiting
        (lambda p: p.write_text("s010\nRené\n", encoding="latin-1"), "is not UTF-8 text (byte 8)"),
    ],
)
def test_an_id_file_that_is_a_fifo_or_latin_1_is_refused_naming_it(tmp_path, capsys, make, message):
    """One line naming --ids-file and the file, exit status 2, nothing written."""
    ids = tmp_path / "ids.txt"
    make(ids)
    args = ["--root", str(ROOT), "--out", str(tmp_path / "out"), "--ids-file", str(ids)]
    assert main(args) == 2
    assert f"error: --ids-file '{ids}' {message}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def student_site_pages(root: Path) -> list[Path]:
    """The book's pages but the instructor's (which the site without solutions leaves out)."""
    return [p for p in toc_pages(root) if p.stem != "instructor"]


def test_site_sources_without_solutions(tmp_path):
    """--site copies the book with every page stripped and hide_solutions switched on."""
    dest = tmp_path / "site"
    pages = write_site_sources(dest, ROOT)
    assert {p.name for p in pages} == {p.name for p in student_site_pages(ROOT)}
    for page in pages:
        assert not _has_solution_fence(page.read_text()), page.name
    config = yaml.safe_load((dest / "_config.yml").read_text())
    assert config["sphinx"]["config"]["hide_solutions"] is True
    assert "(without solutions)" in config["title"]
    assert not (dest / ".git").exists() and not (dest / "_build").exists()


@pytest.mark.slow
def test_student_notebook_runs_top_to_bottom_with_empty_answers(tmp_path):
    """Executed with nbclient: no errors, every check says 'not answered yet', no solution shows."""
    from nbclient import NotebookClient

    nb = page_notebook(PAGE, "s002")
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
        shutdown_kernel="immediate",  # as the build stops its kernels
    ).execute()
    text = _notebook_text(nb)
    assert '"output_type": "error"' not in text
    checks = [c for c in nb.cells if c.source.startswith("check(")]
    assert len(checks) == len(PROBLEMS)
    for cell in checks:
        plain = cell.outputs[0]["data"]["text/plain"]
        assert "not answered yet" in plain, plain
    assert json.dumps(statement("q3", "s002"))[1:-1] in text
    for qid in PROBLEMS:
        assert solution_text(qid, "s002")[:60] not in text


@pytest.mark.slow
@pytest.mark.parametrize("page", [p.stem for p in student_pages(ROOT) if p.stem != "problems"])
def test_every_chapter_notebook_runs_without_its_solutions(page, tmp_path, site_without_solutions):
    """No chapter cell depends on something only a removed solution defined.

    The site without solutions ran its page (the chapter, solutions stripped) in
    the same kernel. Its run is read from that build's execution cache, and the
    student notebook's code cells must be exactly that run's cells without the
    glue call (the notebook's text already has the numbers). Only when the cache
    holds no run of the page (its build failed there) is the notebook run here.
    """
    import jupytext
    from jupyter_cache import get_cache
    from nbclient import NotebookClient

    from lesson_lib.chapters.notebook import without_glue_call

    nb = page_notebook(ROOT / "book" / f"{page}.md")
    shown = [c.source for c in nb.cells if c.cell_type == "code"]
    site_page = jupytext.read(site_without_solutions["src"] / "book" / f"{page}.md")
    try:
        _, ran = get_cache(site_without_solutions["cache"]).merge_match_into_notebook(site_page)
    except KeyError:  # no run of these cells there (the site's build failed on this page)
        ran = nb
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
            shutdown_kernel="immediate",  # as the build stops its kernels
        ).execute()
    ran_code = [without_glue_call(c.source) for c in ran.cells if c.cell_type == "code"]
    assert [c for c in ran_code if c] == shown, "the student's code cells are not the ones run"
    if shown:  # the overview shows no code
        assert any(cell.get("outputs") for cell in ran.cells), "no cell has an output: not run"
    assert '"output_type": "error"' not in _notebook_text(ran)


def test_selfcheck_boxes_leave_with_the_solutions():
    """The static self-check's data holds the answers, so the student edition drops its boxes."""
    page = 'Answer below.\n\n<div class="lesson-selfcheck" data-qid="q3"></div>\n\nMore.'
    assert strip_solutions(page) == "Answer below.\n\n\nMore."


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (links and .git included, not followed)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() and not p.is_symlink() else b""
        for p in sorted(folder.rglob("*"))
    }


def test_site_at_the_books_root_deletes_nothing(tmp_path, capsys):
    """`--site .` from the book's root (a copy with .git and an uncommitted file): exit 2, the
    copy untouched, even with --force."""
    book = tmp_path / "checkout"
    book.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        (book / name).write_text((ROOT / name).read_text())
    (book / ".git").mkdir()
    (book / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (book / "uncommitted.md").write_text("my notes")
    before = _snapshot(book)
    for extra in ([], ["--force"]):
        assert main(["--root", str(book), "--site", str(book), *extra]) == 2
        assert "book's own folder" in capsys.readouterr().err
        assert main(["--root", str(book), "--site", str(tmp_path), *extra]) == 2
        assert _snapshot(book) == before


def test_site_over_a_folder_of_other_files_needs_force(tmp_path, capsys):
    """A folder of unrelated files is not emptied (exit 2) unless --force says so."""
    dest = tmp_path / "photos"
    dest.mkdir()
    (dest / "holiday.jpg").write_bytes(b"\xff\xd8")
    assert main(["--root", str(ROOT), "--site", str(dest)]) == 2
    err = capsys.readouterr().err
    assert "was not made by the student edition" in err and "--force" in err
    assert _snapshot(dest) == {"holiday.jpg": b"\xff\xd8"}
    assert main(["--root", str(ROOT), "--site", str(dest), "--force"]) == 0
    assert not (dest / "holiday.jpg").exists() and (dest / "_config.yml").exists()


def test_site_made_by_the_edition_is_replaced_unless_changed(tmp_path, capsys):
    """A second --site into its own untouched output works; after an edit it needs --force."""
    dest = tmp_path / "site"
    assert main(["--root", str(ROOT), "--site", str(dest)]) == 0
    (dest / "_build" / ".jupyter_cache").mkdir(parents=True)  # what the build adds
    assert main(["--root", str(ROOT), "--site", str(dest)]) == 0
    page = dest / "book" / "problems.md"
    page.write_text(page.read_text() + "\nmy edit\n")
    capsys.readouterr()
    assert main(["--root", str(ROOT), "--site", str(dest)]) == 2
    assert "book/problems.md changed since" in capsys.readouterr().err
    assert "my edit" in page.read_text()


def test_out_never_overwrites_a_students_filled_in_notebook(tmp_path, capsys):
    """--out over a folder holding a student's filled-in notebook: refused, the notebook kept;
    other IDs can still be added to the edition's own folder."""
    out = tmp_path / "handout"
    args = ["--root", str(ROOT), "--out", str(out), "--pages", "problems"]
    assert main([*args, "--ids", "s001"]) == 0
    assert main([*args, "--ids", "s001", "s002"]) == 0  # s001 untouched: rewritten
    notebook = out / "s001" / "s001_problems.ipynb"
    filled = notebook.read_text().replace("answer_q1 = None", "answer_q1 = 140")
    notebook.write_text(filled)
    capsys.readouterr()
    assert main([*args, "--ids", "s001"]) == 2
    assert "s001/s001_problems.ipynb changed since" in capsys.readouterr().err
    assert notebook.read_text() == filled
    assert main([*args, "--ids", "s003"]) == 0 and notebook.read_text() == filled
    assert main([*args, "--ids", "s001", "--force"]) == 0
    assert notebook.read_text() != filled


def test_out_into_a_foreign_folder_needs_force(tmp_path, capsys):
    """A non-empty folder the edition did not make (a student's notebook in it) is refused."""
    out = tmp_path / "downloads"
    out.mkdir()
    (out / "problems.ipynb").write_text('{"mine": true}')
    assert main(["--root", str(ROOT), "--out", str(out), "--pages", "problems"]) == 2
    assert "notebooks (a student's work?)" in capsys.readouterr().err
    assert (out / "problems.ipynb").read_text() == '{"mine": true}'


SALT = "0123456789abcdef" * 4  # a course salt of the form create_salt_file writes


def test_a_salted_notebook_holds_its_own_statements_not_the_public_ones():
    """With a course salt the statements written in are the salted variant's; the public
    variant of the same ID (what the student's package computes) differs for most problems."""
    from lesson_lib.coursework.variants import salted

    nb = page_notebook(PAGE, "s002", salt=SALT)
    texts = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    with salted(SALT):
        own = {q: statement(q, "s002") for q in PROBLEMS}
    public = {q: statement(q, "s002") for q in PROBLEMS}
    assert all(own[q] in texts for q in PROBLEMS)
    differ = [q for q in PROBLEMS if own[q] != public[q]]
    # each problem draws from a few values, so a few coincide by chance; most must not
    assert len(differ) >= len(PROBLEMS) // 2, differ
    assert all(public[q] not in texts for q in differ)


def test_a_salted_notebook_checks_form_only_and_names_nothing_the_grader_flags():
    """The check cells import the form-only self-check; no code cell calls reference(),
    solution_text() or imports the problem bank, so an honest notebook is never flagged."""
    nb = page_notebook(PAGE, "s002", salt=SALT)
    setup = next(c.source for c in nb.cells if c.metadata.get("coursework") == "student-id")
    assert "from lesson_lib.coursework.own_check import check, check_all" in setup
    assert find_lookups(nb) == []
    assert find_lookups(page_notebook(PAGE)) == []
    unsalted = page_notebook(PAGE, "s002")
    assert "own_check" not in json.dumps(unsalted)


def test_the_banner_says_how_to_hand_in():
    """The problem set's first cell names the notebook's own file, restart and run all,
    the grader's time limit and what happens past it, what the check cells can tell, and
    what is flagged."""
    nb = page_notebook(PAGE, "s002", salt=SALT, file_name="s002_problems.ipynb", time_limit=90)
    banner = nb.cells[0].source
    assert "`s002_problems.ipynb`" in banner
    assert "Restart Kernel and Run All Cells" in banner
    assert "90 seconds" in banner and "timed out" in banner
    assert "salted digests" in banner  # the self-check on the student's own numbers
    off = page_notebook(PAGE, "s002", salt=SALT, self_check=False).cells[0].source
    assert "not whether it is right" in off
    assert "`reference()`" in banner and "lesson_lib.coursework.problems" in banner
    # the default limit is the grader's own default (30 s in grade_folder's signature)
    assert DEFAULT_TIME_LIMIT_S == 30.0
    assert "30 seconds" in page_notebook(PAGE, "s002", salt=SALT).cells[0].source
    public = page_notebook(PAGE, "s002").cells[0].source
    assert "Right, close or wrong" in public and "`s002_problems.ipynb`" in public


def test_the_edition_names_the_file_it_writes_in_the_banner(tmp_path):
    """write_edition tells page_notebook the name it writes, so the banner cannot name another."""
    (path,) = write_edition(tmp_path, ROOT, ["s003"], ["problems"], salt=SALT)
    nb = nbformat.read(path, as_version=4)
    assert f"`{path.name}`" in nb.cells[0].source


def test_example_ids_are_never_issued(tmp_path):
    """IDs starting with the documentation's prefix are refused, so a printed example is no
    student's."""
    with pytest.raises(ValueError, match=f"must not start with '{EXAMPLE_PREFIX}'"):
        write_edition(tmp_path, ROOT, ["s001", f"{EXAMPLE_PREFIX}s001"], ["problems"])
    assert not any(tmp_path.iterdir())


def test_cli_makes_the_salt_once_and_the_grader_reads_it(tmp_path, monkeypatch, capsys):
    """make student with IDs: a salt file readable by its owner only, reused on the next run;
    the notebooks are the salted ones. --no-salt gives the public variants."""
    salt_file = tmp_path / "instructor" / "salt"
    args = ["--root", str(ROOT), "--pages", "problems", "--salt-file", str(salt_file)]
    assert main([*args, "--out", str(tmp_path / "a"), "--ids", "s005"]) == 0
    mode = salt_file.stat().st_mode & 0o777
    assert mode == 0o600
    first = salt_file.read_text()
    assert main([*args, "--out", str(tmp_path / "b"), "--ids", "s005"]) == 0
    assert salt_file.read_text() == first
    a = (tmp_path / "a" / "s005" / "s005_problems.ipynb").read_text()
    assert a == (tmp_path / "b" / "s005" / "s005_problems.ipynb").read_text()
    assert "own_check" in a
    assert main([*args, "--out", str(tmp_path / "c"), "--ids", "s005", "--no-salt"]) == 0
    assert "own_check" not in (tmp_path / "c" / "s005" / "s005_problems.ipynb").read_text()
    assert main([*args, "--out", str(tmp_path / "d"), "--ids", "s5", "--time-limit", "0"]) == 2
    assert "--time-limit" in capsys.readouterr().err


def test_site_without_solutions_leaves_out_the_instructor_page(tmp_path):
    """--site: no instructor page, no toc entry, no link to it left, and the API page does
    not document the functions that give answers."""
    dest = tmp_path / "site"
    write_site_sources(dest, ROOT)
    assert not (dest / "book" / "instructor.md").exists()
    assert "instructor" not in (dest / "_toc.yml").read_text()
    assert all(p.stem != "instructor" for p in toc_pages(dest))
    for page in toc_pages(dest):
        text = page.read_text()
        assert "`instructor`" not in text and "<instructor" not in text, page.name
    assert "*For instructors* (not on this site)" in (dest / "book" / "overview.md").read_text()
    api = (dest / "book" / "api" / "coursework.md").read_text()
    assert f":exclude-members: {', '.join(ANSWER_FUNCTIONS)}" in api
    assert "reference" in ANSWER_FUNCTIONS and "solution_text" in ANSWER_FUNCTIONS
    # the book itself keeps the page
    assert any(p.stem == "instructor" for p in toc_pages(ROOT))


@pytest.mark.slow
def test_student_package_cannot_reproduce_a_salted_reference(tmp_path):
    """A fresh Python with the student's package and no salt (as in a student's kernel)
    computes reference(q, ID): for most problems it is not what the salted edition graded."""
    import subprocess
    import sys

    from lesson_lib.coursework.problems import reference
    from lesson_lib.coursework.variants import salted

    code = (
        "import json\n"
        "from lesson_lib.coursework.problems import PROBLEMS, reference\n"
        "print(json.dumps({q: reference(q, 's002') for q in PROBLEMS}))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    theirs = json.loads(out)
    with salted(SALT):
        graded = {q: reference(q, "s002") for q in PROBLEMS}
    same = [q for q in PROBLEMS if theirs[q] == graded[q]]
    assert len(same) <= len(PROBLEMS) // 2, same


def test_editions_keep_the_list_of_issued_ids_beside_the_salt(tmp_path, capsys):
    """An edition of 3 IDs, then one for a late student: the roster beside the salt lists
    4 IDs (3 + 1), in the order issued, and the salt is the one the first run made. An ID
    given again is not listed twice; a refused ID lists nothing; --no-salt keeps no list."""
    from lesson_lib.coursework.roster import read_roster

    salt_file = tmp_path / "instructor" / "salt"
    roster_file = tmp_path / "instructor" / "roster.csv"
    args = ["--root", str(ROOT), "--pages", "problems", "--salt-file", str(salt_file)]
    assert main([*args, "--out", str(tmp_path / "a"), "--ids", "s001", "s002", "s003"]) == 0
    salt = salt_file.read_text()
    assert "issued IDs: " in capsys.readouterr().out
    assert main([*args, "--out", str(tmp_path / "a"), "--ids", "s004", "S001"]) == 0
    said = capsys.readouterr().out
    assert f"issued IDs: {roster_file} lists 4 ID(s), 1 new" in said
    assert "4 row(s) have no lms_user_id yet" in said
    assert salt_file.read_text() == salt
    issued = [e.student_id for e in read_roster(roster_file).entries]
    assert issued == ["s001", "s002", "s003", "s004"]
    before = roster_file.read_bytes()
    assert main([*args, "--out", str(tmp_path / "b"), "--ids", "s005", "s005"]) == 2
    assert main([*args, "--out", str(tmp_path / "b"), "--ids", "s005", "--no-salt"]) == 0
    assert "no list of issued IDs is kept" in capsys.readouterr().out
    assert roster_file.read_bytes() == before
    # a new salt beside the old list would mix two cohorts: refused, nothing drawn
    salt_file.unlink()
    assert main([*args, "--out", str(tmp_path / "c"), "--ids", "s006"]) == 2
    assert "lists IDs issued with a course salt that is no longer in" in capsys.readouterr().err
    assert not salt_file.exists() and roster_file.read_bytes() == before


def test_an_unclosed_solution_fence_runs_to_the_end_of_the_page():
    """As in Markdown, a fence never closed takes the rest of the page with it."""
    text = "# Page\n\nkept\n\n````{solution} ex-1\nsecret\n```{code-cell} ipython3\nx = 1\n```\n"
    assert strip_solutions(text) == "# Page\n\nkept\n"


def test_exercises_and_labels_become_plain_markdown():
    """An exercise directive becomes a bold line, its options dropped; labels go."""
    from lesson_lib.coursework.myst_pages import plain_markdown

    text = "(ex-label)=\n```{exercise} Sizing\n:label: ex-1\nHow many GPUs?\n```\nSee {ref}`ex-1`."
    assert plain_markdown(text) == "**Exercise (Sizing).**\nHow many GPUs?\nSee *ex-1*."


def test_an_unclosed_solution_inside_a_directive_ends_with_it():
    """A solution fence left open inside a note takes the rest of the note, not the page."""
    text = "`````{note}\nkeep-a\n````{solution} x\nsecret\n`````\nafter\n"
    assert strip_solutions(text) == "`````{note}\nkeep-a\n`````\nafter\n"


def test_every_glued_number_is_written_in():
    """No ``{glue`` placeholder is left in any page; the numbers are the page's own table's,
    and the lab's measured values become ``{eval}`` roles on the dict its code glues."""
    from lesson_lib.chapters.glue import chapter_numbers

    for page in student_pages(ROOT):
        nb = page_notebook(page)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert "{glue" not in text, page.name
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert "glue_chapter(" not in code, page.name
    latency = page_notebook(ROOT / "book" / "latency.md")
    prose = "\n".join(c.source for c in latency.cells if c.cell_type == "markdown")
    # the chapter's headline, "They get 1.55x." on the site
    assert f"They get {chapter_numbers('latency')['speedup_1_to_4_slow']}." in prose
    lab = page_notebook(ROOT / "book" / "lab.md")
    lab_prose = "\n".join(c.source for c in lab.cells if c.cell_type == "markdown")
    assert '{eval}`numbers["lab_alpha"]`' in lab_prose
    assert "numbers it finds appear in the text" in lab.cells[0].source


def test_student_pages_show_included_code_and_the_chapter_list_not_directives():
    """JupyterLab cannot follow a page's include path: the code is written in, as in ``make lab``."""
    allreduce = page_notebook(ROOT / "book" / "allreduce.md")
    text = "\n".join(c.source for c in allreduce.cells if c.cell_type == "markdown")
    assert "{literalinclude}" not in text
    assert "def column_row_partials(" in text  # the dropdown's signature
    assert "return [act(x @ w_in[:, c]) @ w_out[c, :] for c in cols]" in text  # and its last line
    index = page_notebook(ROOT / "book" / "index.md")
    text = "\n".join(c.source for c in index.cells if c.cell_type == "markdown")
    assert "{tableofcontents}" not in text
    assert "1. Designing the cluster" in text and "](" not in text.split("1. Overview")[1][:40]
