"""The batch grader: right, partly right, empty, raising and broken submissions, one CSV."""

import csv
import os
import signal
import stat
import sys
from pathlib import Path

import nbformat
import pytest
from set_points import POINTS, SET_POINTS

from lesson_lib.coursework.extract import _static_answers
from lesson_lib.coursework.grade import main
from lesson_lib.coursework.grades_csv import write_details, write_scores
from lesson_lib.coursework.grading import grade_folder, grade_notebook
from lesson_lib.coursework.problems import PROBLEMS, reference
from lesson_lib.coursework.student_edition import write_edition
from lesson_lib.coursework.submissions import find_submissions

ROOT = Path(__file__).resolve().parents[1]


def _fill(path: Path, answers: dict, extra: str | None = None, at: int = 4) -> None:
    """Type answers into a student notebook's answer cells, as a student would."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "answer":
            qid = cell.source.split("=")[0].strip()[len("answer_") :]
            if qid in answers:
                cell.source = f"answer_{qid} = {answers[qid]!r}"
    if extra is not None:
        nb.cells.insert(at, nbformat.v4.new_code_cell(extra))
    nbformat.write(nb, path)


def _explain(path: Path, why: str) -> None:
    """Type q12's reasoning into its own cell (marked ``coursework: reasoning``)."""
    nb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("coursework") == "reasoning"]
    cell.source = f"why_q12 = {why!r}"
    nbformat.write(nb, path)


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open() as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def test_static_answers_reads_literals_only():
    """Plain values are read from the source; expressions and broken cells are skipped."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("answer_q1 = 140\nanswer_q2 = '40 GiB'"),
        nbformat.v4.new_code_cell("answer_q3 = 1.25 * 1.75"),
        nbformat.v4.new_code_cell("answer_q4 = 'c'\nanswer_q4 = 'b'"),
        nbformat.v4.new_code_cell("this is not python ("),
    ]
    assert _static_answers(nb) == {"q1": 140, "q2": "40 GiB", "q4": "b"}


def test_find_submissions_understands_both_layouts(tmp_path):
    """<ID>.ipynb files and <ID>/problems.ipynb folders; other chapter notebooks are ignored;
    any other name gets an entry too, saying it is not a notebook."""
    (tmp_path / "s1.ipynb").write_text("{}")
    (tmp_path / "s2").mkdir()
    (tmp_path / "s2" / "problems.ipynb").write_text("{}")
    (tmp_path / "s2" / "sizing.ipynb").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    found = find_submissions(tmp_path)
    assert [(e.stem, e.file, e.problem) for e in found] == [
        ("notes", "notes.txt", "not a notebook (.ipynb) file"),
        ("s1", "s1.ipynb", ""),
        ("s2", "s2/problems.ipynb", ""),
    ]


def test_cli_refuses_a_missing_or_empty_folder(tmp_path):
    """No folder, or no notebooks in it: exit status 2 and no CSV."""
    assert main([str(tmp_path / "nope")]) == 2
    assert main([str(tmp_path), "--out", str(tmp_path / "g.csv")]) == 2
    assert not (tmp_path / "g.csv").exists()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Four student notebooks from the student edition, filled in four ways, plus a broken file."""
    folder = tmp_path_factory.mktemp("submissions")
    ids = ["s101", "s102", "s103", "s104"]
    write_edition(folder, ROOT, ids, ["problems"])
    _fill(folder / "s101" / "s101_problems.ipynb", {q: reference(q, "s101") for q in PROBLEMS})
    _fill(
        folder / "s102" / "s102_problems.ipynb",
        {
            "q1": f"{reference('q1', 's102')} GB",
            "q2": reference("q2", "s102") * 1.015,
            "q3": reference("q3", "s102") / 2 * 3,
            "q4": reference("q4", "s102").upper(),
            "q5": [1, 2],
        },
    )
    _fill(
        folder / "s104" / "s104_problems.ipynb",
        {"q1": reference("q1", "s104"), "q12": reference("q12", "s104")},
        extra="raise RuntimeError('my notebook is broken')",
    )
    _explain(folder / "s101" / "s101_problems.ipynb", "TP stays on NVLink")
    (folder / "broken.ipynb").write_text("this is not a notebook")
    outdir = tmp_path_factory.mktemp("graded")
    out, details = outdir / "grades.csv", outdir / "details.csv"
    args = [str(folder), "--details", str(details), "--timeout", "600"]
    manual = outdir / "manual"
    assert main([*args, "--out", str(out), "--jobs", "2", "--manual-export", str(manual)]) == 0
    return out, details, folder


@pytest.mark.slow
def test_batch_csv_scores_every_kind_of_submission(graded):
    """Right: all 62 points; partly right: 2.5 (q1-q4 are worth a point each, q2 is
    close: 1 + 0.5 + 0 + 1); empty: 0; raising: its two answers, q1's 1 point and
    q12's 3; broken: zeros. Every problem's cell holds its points."""
    rows = _rows(graded[0])
    assert list(rows) == ["broken", "s101", "s102", "s103", "s104"]
    assert rows["s101"]["total"] == str(SET_POINTS) and rows["s101"]["status"] == "ran"
    assert {q: rows["s101"][q] for q in PROBLEMS} == {q: str(p) for q, p in POINTS.items()}
    partly = rows["s102"]
    assert [partly[q] for q in ("q1", "q2", "q3", "q4", "q5")] == ["1", "0.5", "0", "1", "0"]
    assert partly["total"] == "2.5"
    assert rows["s103"]["total"] == "0" and rows["s103"]["status"] == "ran"
    raising = rows["s104"]
    assert raising["status"] == "ran with errors"
    assert "1 cell(s) raised an error (RuntimeError)" in raising["notes"]
    assert (raising["q1"], raising["q12"], raising["total"]) == ("1", "3", "4")
    assert rows["broken"]["status"] == "not a notebook" and rows["broken"]["total"] == "0"
    assert {row["max"] for row in rows.values()} == {str(SET_POINTS)}
    assert {row["late factor"] for row in rows.values()} == {"1"}


@pytest.mark.slow
def test_details_csv_explains_each_verdict(graded):
    """The details CSV has one row per student and problem, with the checker's message."""
    with graded[1].open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5 * len(PROBLEMS)
    q5 = next(r for r in rows if r["student"] == "s102" and r["problem"] == "q5")
    assert q5["status"] == "unreadable" and "list" in q5["message"]
    empty = next(r for r in rows if r["student"] == "s103" and r["problem"] == "q1")
    assert empty["status"] == "not answered yet"


@pytest.mark.slow
def test_serial_grading_writes_the_same_files_as_two_sandboxes_at_once(graded, tmp_path):
    """The fixture graded with --jobs 2; the same folder graded one at a time gives the
    same bytes in both CSVs (rows in the same order, the same notes)."""
    out, details, folder = graded
    serial = tmp_path / "serial"
    args = [str(folder), "--out", str(serial / "g.csv"), "--details", str(serial / "d.csv")]
    assert main([*args, "--timeout", "600", "--jobs", "1"]) == 0
    assert (serial / "g.csv").read_bytes() == out.read_bytes()
    assert (serial / "d.csv").read_bytes() == details.read_bytes()


@pytest.mark.slow
def test_feedback_files_say_each_students_verdicts(graded):
    """feedback/ beside the grades: one page per valid ID ("broken" is one: its page says
    the file could not be read), each problem's verdict and points as the CSV has them."""
    feedback = graded[0].parent / "feedback"
    names = sorted(p.name for p in feedback.glob("*.html"))
    assert names == ["broken.html", "s101.html", "s102.html", "s103.html", "s104.html"]
    right = (feedback / "s101.html").read_text()
    assert right.count('class="right">right<') == len(PROBLEMS)
    assert f"<strong>{SET_POINTS} of {SET_POINTS}</strong>" in right
    assert "<td>3 / 3</td>" in right.split("<td>q12: ")[1].split("</tr>")[0]
    partly = (feedback / "s102.html").read_text()
    q2 = partly.split("<td>q2: ")[1].split("</tr>")[0]
    assert 'class="close">close<' in q2 and "<td>0.5 / 1</td>" in q2
    q5 = partly.split("<td>q5: ")[1].split("</tr>")[0]
    assert 'class="unreadable">unreadable<' in q5
    assert "could not be read as a notebook" in (feedback / "broken.html").read_text()


@pytest.mark.slow
def test_the_executed_notebooks_are_kept_beside_the_feedback(graded):
    """Each notebook that ran is kept as the grader ran it, outputs included: s104's raising
    cell holds its RuntimeError's traceback, and its page links to it. Only code cells, the
    grader's own cell left out, output data as text or PNG; "broken" never ran, so has none."""
    feedback = graded[0].parent / "feedback"
    assert sorted(p.name for p in feedback.glob("*.ipynb")) == [
        "s101.ipynb",
        "s102.ipynb",
        "s103.ipynb",
        "s104.ipynb",
    ]
    nb = nbformat.read(feedback / "s104.ipynb", as_version=4)
    nbformat.validate(nb)
    (raising,) = [c for c in nb.cells if "my notebook is broken" in c.source]
    (error,) = raising.outputs
    assert (error.output_type, error.ename, error.evalue) == (
        "error",
        "RuntimeError",
        "my notebook is broken",
    )
    assert any("RuntimeError" in line for line in error.traceback)
    assert all(c.cell_type == "code" and "__COURSEWORK" not in c.source for c in nb.cells)
    data = [o.data for c in nb.cells for o in c.outputs if "data" in o]
    assert data and all(set(d) <= {"text/plain", "image/png"} for d in data)
    assert '<a href="s104.ipynb">s104.ipynb</a>' in (feedback / "s104.html").read_text()
    assert "as the grader ran it" not in (feedback / "broken.html").read_text()


@pytest.mark.slow
def test_the_reasoning_is_exported_for_a_ta(graded):
    """q12-reasoning.csv: a row per graded ID, s101's typed reasoning, points blank."""
    with (graded[0].parent / "manual" / "q12-reasoning.csv").open() as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert sorted(rows) == ["broken", "s101", "s102", "s103", "s104"]
    assert rows["s101"]["answer"] == "TP stays on NVLink" and rows["s101"]["points"] == ""
    assert rows["s102"]["answer"] == "" and rows["s101"]["max"] == "1"


@pytest.mark.slow
def test_a_one_student_regrade_changes_that_row_alone(tmp_path, capsys):
    """Three students graded; s302 then fixes q1 and is regraded with --student: in both
    CSVs every other line is byte for byte what it was and in its place, s302's lines are
    new; a full run of the folder holding only s302 is refused (it would drop two)."""
    folder = tmp_path / "subs"
    ids = ["s301", "s302", "s303"]
    write_edition(folder, ROOT, ids, ["problems"])
    for sid in ids:
        _fill(folder / sid / f"{sid}_problems.ipynb", {"q2": reference("q2", sid)})
    out, details = tmp_path / "out" / "grades.csv", tmp_path / "out" / "details.csv"
    args = [str(folder), "--out", str(out), "--details", str(details), "--timeout", "600"]
    assert main(args) == 0
    before = out.read_bytes().splitlines(keepends=True)
    before_details = details.read_bytes().splitlines(keepends=True)
    _fill(folder / "s302" / "s302_problems.ipynb", {"q1": reference("q1", "s302")})
    assert main([*args, "--student", "S302"]) == 0
    after = out.read_bytes().splitlines(keepends=True)
    after_details = details.read_bytes().splitlines(keepends=True)
    assert len(after) == len(before) == 4
    assert [after[i] for i in (0, 1, 3)] == [before[i] for i in (0, 1, 3)]
    assert after[2] != before[2] and after[2].startswith(b"s302,")
    assert _rows(out)["s302"]["q1"] == "1" and _rows(out)["s302"]["total"] == "2"
    rows_of = len(PROBLEMS)
    s302 = slice(1 + rows_of, 1 + 2 * rows_of)
    assert before_details[: s302.start] == after_details[: s302.start]
    assert before_details[s302.stop :] == after_details[s302.stop :]
    assert before_details[s302] != after_details[s302]
    only = tmp_path / "only"
    only.mkdir()
    (folder / "s302" / "s302_problems.ipynb").rename(only / "s302.ipynb")
    capsys.readouterr()
    assert main([str(only), "--out", str(out), "--timeout", "600"]) == 2
    assert "s301, s303" in capsys.readouterr().err
    assert out.read_bytes().splitlines(keepends=True) == after


def test_a_regrade_of_a_student_without_a_submission_grades_nothing(tmp_path, capsys):
    folder = _broken_folder(tmp_path, 2)
    out = tmp_path / "grades.csv"
    assert main([str(folder), "--out", str(out), "--no-sandbox", "--student", "s7"]) == 2
    assert "no submission" in capsys.readouterr().err and not out.exists()


@pytest.mark.slow
def test_a_timeout_and_a_crash_at_the_same_cell_read_later_answers_alike(tmp_path):
    """The same notebook twice, cell 3 of 4 hanging in one and killing its kernel in the
    other: q2, typed in cell 4 after it, is right in both and marked as read from the
    source (code cell 3); q1, typed before it, is right in both."""
    results = {}
    for kind, stop in (("hang", "while True:\n    pass"), ("crash", "import os\nos._exit(3)")):
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell('STUDENT = "s401"'),
            nbformat.v4.new_code_cell(f"answer_q1 = {reference('q1', 's401')!r}"),
            nbformat.v4.new_code_cell(stop),
            nbformat.v4.new_code_cell(f"answer_q2 = {reference('q2', 's401')!r}"),
        ]
        path = tmp_path / kind / "s401.ipynb"
        path.parent.mkdir()
        nbformat.write(nb, path)
        results[kind] = grade_notebook("s401", path, timeout=10)
    hang, crash = results["hang"], results["crash"]
    assert (hang.status, crash.status) == ("timed out", "kernel died")
    for sub in (hang, crash):
        assert sub.results["q1"].score == sub.results["q2"].score == 1.0, sub.notes
        assert sub.from_source["q2"] == "read from source: the notebook stopped at code cell 3"
    assert {q: r.status for q, r in hang.results.items()} == {
        q: r.status for q, r in crash.results.items()
    }
    assert "read from source: the notebook stopped at code cell 3: q2" in hang.notes


@pytest.mark.slow
def test_runaway_notebook_is_stopped_and_keeps_its_answers(tmp_path):
    """A notebook that loops forever is stopped at the limit and keeps the answers given
    before the loop (read from the kernel, or from the source if the limit came first)."""
    write_edition(tmp_path, ROOT, ["s201"], ["problems"])
    loop = tmp_path / "s201" / "s201_problems.ipynb"
    _fill(loop, {"q1": reference("q1", "s201")}, extra="while True:\n    pass", at=12)
    # The loop always runs into the limit, whatever the machine's load: it is short so
    # the test is, and nothing here depends on the earlier cells finishing within it.
    sub = grade_notebook("s201", loop, timeout=10)
    assert sub.status == "timed out"
    assert sub.results["q1"].score == 1.0
    write_scores([sub], tmp_path / "out" / "g.csv")
    write_details([sub], tmp_path / "out" / "d.csv")
    assert _rows(tmp_path / "out" / "g.csv")["s201"]["q1"] == "1"


@pytest.mark.slow
def test_dying_notebook_is_read_from_its_source(tmp_path):
    """A notebook that kills its kernel keeps the answers typed before it, read from source.

    The limit is generous: the kernel dies as soon as the cell runs, so a busy machine
    only makes the test slower, never a timeout instead of a death.
    """
    write_edition(tmp_path, ROOT, ["s202"], ["problems"])
    path = tmp_path / "s202" / "s202_problems.ipynb"
    _fill(path, {"q2": reference("q2", "s202")})
    _fill(path, {}, extra="import os\nos._exit(3)", at=12)
    sub = grade_notebook("s202", path, timeout=300)
    assert sub.status == "kernel died"
    assert sub.results["q2"].score == 1.0
    assert "source" in " ".join(sub.notes)


@pytest.mark.slow
def test_grading_uses_the_file_name_not_the_notebooks_student(tmp_path):
    """A student who changes STUDENT to someone else's ID is still graded as themselves."""
    write_edition(tmp_path, ROOT, ["s301"], ["problems"])
    nb_path = tmp_path / "s301" / "s301_problems.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "student-id":
            cell.source = cell.source.replace('"s301"', '"s999"')
    nbformat.write(nb, nb_path)
    _fill(nb_path, {q: reference(q, "s999") for q in PROBLEMS})
    (sub,) = grade_folder(tmp_path, timeout=600)
    assert sub.student == "s301"
    assert "s999" in " ".join(sub.notes)
    assert sub.total < SET_POINTS


def test_static_answers_survive_hostile_sources():
    """Numbers as sources, 100,000 minus signs, huge literals: skipped, never raised."""
    raw = {
        "cells": [
            {"cell_type": "code", "source": 42},
            {"cell_type": "code", "source": [1, 2]},
            {"cell_type": "code", "source": ["answer_q1 = ", "140\n"]},
            {"cell_type": "code", "source": "answer_q2 = " + "-" * 100_000 + "1"},
            {"cell_type": "code", "source": "answer_q3 = " + "9" * 5000},
            {"cell_type": "code", "source": "answer_q4 = " + "(" * 500 + "1" + ")" * 500},
            "not a cell",
        ]
    }
    answers = _static_answers(raw)
    assert answers.get("q1") == 140
    assert "q2" not in answers and "q4" not in answers
    assert _static_answers({"cells": 7}) == {} and _static_answers([]) == {}


def test_spreadsheet_formulas_are_neutralised():
    """Cells starting with = + - @ get an apostrophe; others and control characters."""
    from lesson_lib.coursework.grades_csv import spreadsheet_safe

    assert [spreadsheet_safe(x) for x in ("=1+1", "+1", "-2", "@SUM(A1)", "s001", 3)] == [
        "'=1+1",
        "'+1",
        "'-2",
        "'@SUM(A1)",
        "s001",
        "3",
    ]
    assert spreadsheet_safe("a\x1b[31mb") == "a\\x1b[31mb"
    # a semicolon-locale spreadsheet splits at ";": every piece is text
    assert spreadsheet_safe("Eve;=HYPERLINK(1);+2;x") == "Eve;'=HYPERLINK(1);'+2;x"
    assert spreadsheet_safe("alice\n: 16 / 16") == "alice\\n: 16 / 16"


def test_duplicate_ids_are_flagged_on_every_copy():
    """s1, S1 and s1/problems are one student: each row says so, none is dropped."""
    from lesson_lib.coursework.graded import Submission
    from lesson_lib.coursework.grading import _flag_duplicates

    subs = [
        Submission("s1", Path("s1.ipynb"), file="s1.ipynb"),
        Submission("s1", Path("S1.ipynb"), file="S1.ipynb"),
        Submission("s1", Path("s1/problems.ipynb"), file="s1/problems.ipynb"),
        Submission("s2", Path("s2.ipynb"), file="s2.ipynb"),
    ]
    assert set(_flag_duplicates(subs)) == {"s1"}
    assert all(s.notes[0].startswith("DUPLICATE student ID 's1': 3 submissions") for s in subs[:3])
    assert subs[3].notes == []


def test_csv_is_replaced_only_by_a_complete_one(tmp_path):
    """A write that fails midway leaves the earlier CSV as it was, and no temporary file."""
    from lesson_lib.coursework.check import check
    from lesson_lib.coursework.graded import Submission

    good = Submission("s1", Path("s1.ipynb"), file="s1.ipynb")
    good.results = {q: check(q, None) for q in PROBLEMS}
    out = tmp_path / "g.csv"
    write_scores([good], out)
    before = out.read_bytes()
    broken = Submission("s2", Path("s2.ipynb"))  # no results: fails while writing
    with pytest.raises(KeyError):
        write_scores([good, broken], out)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv"]


@pytest.mark.parametrize("bad", ["0", "-5", "nan", "inf", "-inf", "1e9", "soon"])
def test_timeout_must_be_a_finite_positive_number(tmp_path, bad, capsys):
    """--timeout 0, negative, nan, inf or absurdly long: a usage error (2), no CSV."""
    (tmp_path / "s1.ipynb").write_text("{}")
    out = tmp_path / "g.csv"
    assert main([str(tmp_path), "--out", str(out), "--timeout", bad]) == 2
    assert "--timeout" in capsys.readouterr().err
    assert not out.exists()


def test_grader_refuses_without_a_sandbox(tmp_path, monkeypatch, capsys):
    """No bubblewrap: exit 3, a message naming what to install and --no-sandbox, no CSV."""
    monkeypatch.setenv("LESSON_BWRAP", "/no/such/bwrap")
    (tmp_path / "s1.ipynb").write_text("{}")
    out = tmp_path / "g.csv"
    assert main([str(tmp_path), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "bubblewrap" in err and "--no-sandbox" in err and "Traceback" not in err
    assert not out.exists()


def test_folder_as_output_is_a_usage_error(tmp_path, capsys):
    """--out naming a folder is refused before anything runs."""
    (tmp_path / "s1.ipynb").write_text("{}")
    assert main([str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


@pytest.mark.slow
def test_no_sandbox_grades_and_warns_in_every_row(tmp_path, monkeypatch):
    """--no-sandbox still grades (clean copy, limits) and writes a warning into the notes."""
    monkeypatch.setenv("LESSON_BWRAP", "/no/such/bwrap")
    write_edition(tmp_path / "in", ROOT, ["s401"], ["problems"])
    _fill(
        tmp_path / "in" / "s401" / "s401_problems.ipynb",
        {q: reference(q, "s401") for q in PROBLEMS},
    )
    out = tmp_path / "g.csv"
    assert main([str(tmp_path / "in"), "--out", str(out), "--no-sandbox", "--timeout", "90"]) == 0
    row = _rows(out)["s401"]
    assert row["total"] == str(SET_POINTS)
    assert "WARNING: graded without the sandbox" in row["notes"]


def test_every_problem_is_graded_up_to_the_last(tmp_path):
    """A small notebook answering the first and the last problem scores both: no problem
    is left out of running, reading, checking or the CSV (runs one kernel, ~2 s)."""
    last = list(PROBLEMS)[-1]
    assert last == max(PROBLEMS, key=lambda qid: int(qid[1:]))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"answer_q1 = {reference('q1', 's777')!r}"),
        nbformat.v4.new_code_cell(f"answer_{last} = {reference(last, 's777')!r}"),
    ]
    path = tmp_path / "s777.ipynb"
    nbformat.write(nb, path)
    sub = grade_notebook("s777", path, timeout=300)
    assert sub.status == "ran"
    assert list(sub.results) == list(PROBLEMS)
    assert sub.results["q1"].score == 1.0 and sub.results[last].score == 1.0
    assert sub.total == 1 + 3  # q1 is worth 1 point, q25 3
    write_scores([sub], tmp_path / "g.csv")
    row = _rows(tmp_path / "g.csv")["s777"]
    assert (row[last], row["total"], row["max"]) == ("3", "4", str(SET_POINTS))
    write_details([sub], tmp_path / "d.csv")
    with (tmp_path / "d.csv").open() as f:
        assert [r["problem"] for r in csv.DictReader(f)] == list(PROBLEMS)


def _broken_folder(tmp_path: Path, count: int) -> Path:
    """A submissions folder of ``count`` files that are not notebooks (graded without a kernel)."""
    folder = tmp_path / "subs"
    folder.mkdir()
    for i in range(count):
        (folder / f"s{i}.ipynb").write_text("not a notebook")
    return folder


def test_an_earlier_grades_file_is_kept_when_a_run_replaces_it(tmp_path, capsys):
    """A good grades.csv of 43 rows, then a run where everything is broken: the new file has
    its 3 rows and the 43 rows are kept under a name with the time; an identical rerun keeps
    nothing more."""
    folder = _broken_folder(tmp_path, 3)
    out = tmp_path / "grades.csv"
    earlier = "student,total\n" + "".join(f"s{i},16\n" for i in range(43))
    out.write_text(earlier)
    args = [str(folder), "--out", str(out), "--no-sandbox"]
    assert main(args) == 0
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("grades.2")]
    assert len(kept) == 1 and kept[0].read_text() == earlier
    assert kept[0].name in capsys.readouterr().out
    assert len(_rows(out)) == 3
    assert main(args) == 0
    assert [p for p in tmp_path.iterdir() if p.name.startswith("grades.2")] == kept


def test_out_and_details_must_be_two_files(tmp_path, capsys):
    """The same name twice, or two names of one file (a hard link): exit 2, nothing written."""
    folder = _broken_folder(tmp_path, 1)
    out = tmp_path / "grades.csv"
    out.write_text("scores")
    assert main([str(folder), "--out", str(out), "--details", str(out), "--no-sandbox"]) == 2
    assert "same file" in capsys.readouterr().err
    os.link(out, tmp_path / "alias.csv")
    args = [str(folder), "--out", str(out), "--details", str(tmp_path / "alias.csv")]
    assert main([*args, "--no-sandbox"]) == 2
    assert out.read_text() == "scores"


def test_outputs_that_are_not_regular_files_are_refused(tmp_path, capsys):
    """A link like /dev/stdout, a copy of a device node, a FIFO or a link as --out: exit 2 before grading,
    and the special file is still what it was."""
    folder = _broken_folder(tmp_path, 1)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    stdout = tmp_path / "stdout"  # what /dev/stdout is, without risking the real one
    stdout.symlink_to("/proc/self/fd/1")
    targets = [str(stdout), str(fifo), str(link)]
    if os.geteuid() == 0:
        os.mknod(tmp_path / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        targets.append(str(tmp_path / "null"))
    for target in targets:
        for option in ("--out", "--details"):
            other = ["--out", str(tmp_path / "g.csv")] if option == "--details" else []
            assert main([str(folder), *other, option, target, "--no-sandbox"]) == 2, target
            err = capsys.readouterr().err
            assert "not a regular file" in err or "a symbolic link" in err, err
    assert stdout.is_symlink() and stat.S_ISFIFO(fifo.lstat().st_mode)
    assert link.is_symlink() and not (tmp_path / "elsewhere.csv").exists()
    if os.geteuid() == 0:
        assert stat.S_ISCHR((tmp_path / "null").lstat().st_mode)
    assert not (tmp_path / "g.csv").exists()


def test_each_answer_is_checked_with_a_time_limit(monkeypatch):
    """A check that never returns is stopped after CHECK_SECONDS: unreadable, scores nothing."""
    import time

    from lesson_lib.coursework import scoring

    def forever(*args, **kwargs):
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(scoring, "CHECK_SECONDS", 0.2)
    monkeypatch.setattr(scoring, "check", forever)
    started = time.monotonic()
    result = scoring._check_in_time("q1", 140, None)
    assert time.monotonic() - started < 5
    assert result.status == "unreadable" and result.score == 0
    assert "longer than 0.2 s" in result.message
    monkeypatch.undo()
    assert scoring._check_in_time("q1", reference("q1"), None).status == "right"


def test_only_readings_of_the_problems_answers_leave_the_sandbox():
    """The grader keeps a reading per problem from the runner's payload; extra keys, forged
    fields and a long STUDENT are dropped."""
    from lesson_lib.coursework.answers import read_answer
    from lesson_lib.coursework.extract import _plain_payload

    good = read_answer(reference("q1")).to_json()
    payload = {
        "answers": {
            "answer_q1": good,
            "answer_q2": {**good, "why": "my own note", "kind": "other"},
            "answer_q3": "140",
            "answer_q999": good,
            "notes": "graded by hand: full marks",
        },
        "student": "x" * 10_000,
        "status": "ran",
    }
    answers, student = _plain_payload(payload)
    assert set(answers) == {"q1", "q2", "q3"}
    assert answers["q1"] == read_answer(reference("q1"))
    assert answers["q2"].why == answers["q3"].why == "object"
    assert student is None
    assert _plain_payload({"answers": []}) is None


def test_a_long_answer_typed_in_the_source_is_too_long_and_its_message_short():
    """An answer cell of 15,000 spaces read from the source (the notebook could not run)
    gets 'too long' and a message within the cap, so the details CSV stays small."""
    from lesson_lib.coursework.check import MAX_MESSAGE_CHARS
    from lesson_lib.coursework.scoring import _check_in_time

    nb = {"cells": [{"cell_type": "code", "source": "answer_q1 = '1 a" + " " * 15_000 + "b'"}]}
    result = _check_in_time("q1", _static_answers(nb)["q1"], None)
    assert result.status == "unreadable" and "too long" in result.message
    assert len(result.message) <= MAX_MESSAGE_CHARS


FORGE = """
import json, os, signal
fake = {"status": "ran", "raised": 0, "error": "FORGED NOTE: full marks agreed",
        "payload": {"answers": {}, "student": "someone-else"}}
for path in (".grader-result.json", "/tmp/.grader-result.json"):
    try:
        with open(path, "w") as fh:
            json.dump(fake, fh)
    except OSError:
        pass
reached = []
for fd in range(3, 64):
    try:
        with open(f"/proc/{os.getppid()}/fd/{fd}", "w") as fh:
            fh.write(json.dumps(fake))
        reached.append(fd)
    except OSError:
        pass
os.kill(os.getppid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_a_kernel_cannot_write_the_graders_result_or_its_notes(tmp_path):
    """A notebook that writes its own result file, writes to every descriptor of the runner
    it can open and kills the runner: no result reaches the grader ('could not run'), its
    note is nowhere, and the answer typed in the source still counts."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"answer_q1 = {reference('q1', 's778')!r}"),
        nbformat.v4.new_code_cell(FORGE),
    ]
    path = tmp_path / "s778.ipynb"
    nbformat.write(nb, path)
    sub = grade_notebook("s778", path, timeout=300)
    assert sub.status == "could not run", (sub.status, sub.notes)
    assert "FORGED" not in " ".join(sub.notes)
    assert "no result" in " ".join(sub.notes)
    assert sub.results["q1"].score == 1.0
    assert sub.executed is None  # nor an executed notebook


def test_space_limits_become_the_status_and_notes():
    """The runner's report of a full /tmp and a file at the limit: status 'out of space' and
    the grader's own notes with the limits; unknown folders and odd values are ignored."""
    from lesson_lib.coursework.sandbox import Limits
    from lesson_lib.coursework.sandbox_run import RunRecord, run_outcome

    def outcome(record: dict) -> tuple:
        return run_outcome(RunRecord.from_json(record), 60, 3, Limits(), sandbox=True)

    space = {"full": ["/tmp", "/elsewhere", 3], "file_limit": True}
    assert outcome({"status": "ran", "raised": 1, "space": space}) == (
        "out of space",
        [
            "1 cell(s) raised an error",
            "filled /tmp (its 256 MiB limit)",
            "wrote a file of 64 MiB, the file-size limit",
        ],
    )
    named = {"status": "ran", "raised": 2, "errors": ["MemoryError", "NameError", 7]}
    assert outcome(named)[1] == ["2 cell(s) raised an error (MemoryError, NameError)"]
    for odd in (None, "full", {"full": "/tmp", "file_limit": "yes"}):
        assert outcome({"status": "ran", "space": odd}) == ("ran", [])
    for forged in (["ran"], {"ran": 1}, "finished", None):
        assert outcome({"status": forged}) == ("could not run", [])
    assert outcome({"status": "timed out", "space": {"full": ["/home/student"]}}) == (
        "timed out",
        ["stopped at the 60 s limit", "filled /home/student (its 256 MiB limit)"],
    )


def _notebook_json(student: str, answers: dict) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"STUDENT = {student!r}")]
    nb.cells += [nbformat.v4.new_code_cell(f"answer_{q} = {v!r}") for q, v in answers.items()]
    return nbformat.writes(nb)


def test_an_impostors_name_scores_nothing_and_is_flagged_beside_the_id_it_imitates(
    tmp_path, capsys
):
    """a001 with a Cyrillic a, and a001 with a zero-width space, beside the real a001:
    both are 'invalid ID' rows, not run, scoring nothing, each flagged as imitating
    a001, whose row names them; the run says so on stderr."""
    folder = tmp_path / "subs"
    folder.mkdir()
    book = {q: reference(q) for q in PROBLEMS}
    (folder / "a001.ipynb").write_text("the real student's broken file")
    (folder / "\u0430001.ipynb").write_text(_notebook_json("a001", book))
    (folder / "a001\u200b.ipynb").write_text(_notebook_json("a001", book))
    out = tmp_path / "g.csv"
    assert main([str(folder), "--out", str(out), "--no-sandbox"]) == 0
    with out.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3
    impostors = [r for r in rows if r["status"] == "invalid ID"]
    assert len(impostors) == 2
    for row in impostors:
        assert row["total"] == "0" and row["notes"].startswith("IMITATES student ID 'a001'")
        assert "not run, nothing graded" in row["notes"]
    real = next(r for r in rows if r["status"] != "invalid ID")
    assert real["student"] == "a001" and real["notes"].startswith("IMITATED: ")
    assert "\\u0430001.ipynb" in real["notes"] and "a001\\u200b.ipynb" in real["notes"]
    captured = capsys.readouterr()
    assert "not valid student IDs" in captured.err
    assert "\u200b" not in captured.err + captured.out + out.read_text()


def test_a_name_with_a_newline_prints_one_escaped_progress_line(tmp_path, capsys):
    """A file named to forge a progress line gets its own line, the newline escaped, in the
    terminal and in the CSV."""
    folder = tmp_path / "subs"
    folder.mkdir()
    forged = "x\nalice: 16 \u2215 16 (ran, 2.1 s)"
    (folder / f"{forged}.ipynb").write_text("not a notebook")
    (folder / "bob.ipynb").write_text("not a notebook")
    out = tmp_path / "g.csv"
    assert main([str(folder), "--out", str(out), "--no-sandbox"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if f"/ {SET_POINTS} points (" in ln]
    assert len(lines) == 2
    assert not any(ln.startswith("alice") for ln in lines)
    assert any(ln.startswith("x\\nalice: 16") for ln in lines)
    text = out.read_text()
    assert "\nalice" not in text and "x\\nalice" in text


def _processes_mounting(marker: str) -> list[int]:
    """Live processes whose mounts name ``marker`` (a sandbox of this test's run)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker in Path(f"/proc/{entry}/mountinfo").read_text():
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_leaves_nothing_and_keeps_the_old_grades(tmp_path, signum):
    """SIGTERM or Ctrl-C while a notebook runs: exit 128 + the signal, one line and no
    traceback, the earlier grades.csv as it was, no temporary folder and no process left."""
    import subprocess
    import time

    from sandbox_support import need_sandbox

    need_sandbox()
    folder = tmp_path / "subs"
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import time\ntime.sleep(600)")]
    nbformat.write(nb, folder / "s779.ipynb")
    out = tmp_path / "grades.csv"
    out.write_text("student,total\nearlier,16\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "lesson_lib.coursework.grade", str(folder), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    try:
        deadline = time.monotonic() + 240
        while not _processes_mounting(str(scratch)):  # the sandbox is up
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(1)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err and "interrupted" in err and "no grades written" in err
    assert out.read_text() == "student,total\nearlier,16\n"
    assert list(scratch.iterdir()) == []
    assert list(tmp_path.glob("grades.*")) == [out]
    time.sleep(0.5)
    assert _processes_mounting(str(scratch)) == []


def test_a_lookup_sets_the_status_and_heads_the_notes():
    """A notebook that ran and calls reference() gets the status 'answer lookup' and the
    note first; one that could not run keeps its status, with the note."""
    from lesson_lib.coursework.graded import Submission
    from lesson_lib.coursework.grading import _flag_lookups

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("answer_q1 = reference('q1', 's001')")]
    lookup = "answer lookup"
    cases = [("ran", lookup), ("ran with errors", lookup), ("timed out", "timed out")]
    for status, after in cases:
        sub = Submission("s001", Path("s001.ipynb"), status=status, notes=["earlier"])
        _flag_lookups(sub, nb)
        assert sub.status == after and sub.answer_lookup
        assert sub.notes[0].startswith("ANSWER LOOKUP: reference( in code cell 1")
        assert sub.notes[1] == "earlier"
    clean = Submission("s001", Path("s001.ipynb"))
    _flag_lookups(clean, nbformat.v4.new_notebook())
    assert clean.status == "ran" and clean.notes == [] and not clean.answer_lookup


@pytest.mark.slow
def test_reference_in_a_salted_class_is_flagged_and_scores_what_chance_gives(tmp_path, capsys):
    """Two students of an edition made with a course salt: one types the answers worked out
    for their own (salted) numbers, one fills every answer with reference(q, STUDENT) in a
    cell of its own. The grader, given the salt, scores the first fully; the second is
    flagged 'answer lookup' with a note naming the cell, and since the student's package has
    no salt, reference() computed a variant no one was given."""
    from lesson_lib.coursework.student_edition import main as edition
    from lesson_lib.coursework.variants import read_salt_file, salted, set_course_salt

    folder, salt_file = tmp_path / "class", tmp_path / "instructor" / "salt"
    args = ["--root", str(ROOT), "--pages", "problems", "--salt-file", str(salt_file)]
    assert edition([*args, "--out", str(folder), "--ids", "s401", "s402"]) == 0
    with salted(read_salt_file(salt_file)):
        own = {q: reference(q, "s401") for q in PROBLEMS}
    _fill(folder / "s401" / "s401_problems.ipynb", own)
    lookup = (
        "from lesson_lib.coursework.problems import PROBLEMS, reference\n"
        "for q in PROBLEMS:\n"
        "    globals()[f'answer_{q}'] = reference(q, STUDENT)"
    )
    cheat = folder / "s402" / "s402_problems.ipynb"
    _fill(cheat, {}, extra=lookup, at=len(nbformat.read(cheat, as_version=4).cells) - 1)
    out = tmp_path / "grades.csv"
    try:
        status = main(
            [str(folder), "--out", str(out), "--salt-file", str(salt_file), "--timeout", "600"]
        )
    finally:
        set_course_salt(None)
    assert status == 0
    captured = capsys.readouterr()
    assert f"variants: the course salt in {salt_file}" in captured.out
    assert "1 submission(s) call reference()" in captured.err
    rows = _rows(out)
    assert rows["s401"]["status"] == "ran" and rows["s401"]["total"] == str(SET_POINTS)
    flagged = rows["s402"]
    assert flagged["status"] == "answer lookup"
    assert flagged["notes"].startswith("ANSWER LOOKUP: ")
    assert "reference( in code cell" in flagged["notes"] and "problem bank" in flagged["notes"]
    # a few problems draw from so few values that the public and salted answers coincide
    assert float(flagged["total"]) <= SET_POINTS / 2


def test_a_regrade_finds_a_canvas_download_by_its_students_id(tmp_path):
    """``--student s001`` names the student, not the file: Canvas's download name
    ``smithjane_12345_6789012_s001_problems.ipynb`` (user 12345, file 6789012) is s001's,
    and the plain ``s002_problems.ipynb`` is s002's."""
    import nbformat

    from lesson_lib.coursework.grading import entry_id
    from lesson_lib.coursework.submissions import find_submissions

    for name, sid in (
        ("smithjane_12345_6789012_s001_problems.ipynb", "s001"),
        ("s002_problems.ipynb", "s002"),
    ):
        nb = nbformat.v4.new_notebook()
        nb.metadata["lesson"] = {"student_id": sid}
        nbformat.write(nb, tmp_path / name)
    ids = sorted(entry_id(e) for e in find_submissions(tmp_path))
    assert ids == ["s001", "s002"]


def test_the_csvs_hold_each_problems_points_and_the_total_counts_the_late_factor(tmp_path):
    """No kernel: s900 answers q11 (3 points) and q5 (2 points) 3 % off, close, and q1
    (1 point) right, graded at a close credit of 0.25 and handed in late with 0.75 kept.
    By hand: q11 3 x 0.25 = 0.75, q5 2 x 0.25 = 0.5, q1 1; earned 2.25; total
    2.25 x 0.75 = 1.6875 of 62."""
    from lesson_lib.coursework.check import check
    from lesson_lib.coursework.graded import Submission

    answers = {
        "q1": reference("q1", "s900"),
        "q5": reference("q5", "s900") * 1.03,
        "q11": reference("q11", "s900") * 1.03,
    }
    sub = Submission("s900", tmp_path / "s900.ipynb", file="s900.ipynb", graded_as="s900")
    sub.results = {q: check(q, answers.get(q), "s900", close_credit=0.25) for q in PROBLEMS}
    sub.late_factor = 0.75
    write_scores([sub], tmp_path / "g.csv")
    row = _rows(tmp_path / "g.csv")["s900"]
    assert (row["q1"], row["q5"], row["q11"], row["q2"]) == ("1", "0.5", "0.75", "0")
    assert (row["total"], row["max"], row["late factor"]) == ("1.6875", "62", "0.75")
    write_details([sub], tmp_path / "d.csv")
    with (tmp_path / "d.csv").open() as f:
        by_q = {r["problem"]: r for r in csv.DictReader(f)}
    assert [by_q["q11"][c] for c in ("status", "score", "points", "max")] == [
        "close",
        "0.25",
        "0.75",
        "3",
    ]


def test_a_bad_close_credit_is_refused_before_anything_runs(tmp_path, capsys):
    """--close-credit takes 0 to 1; 1.5 and "half" stop the run with a message naming it."""
    (tmp_path / "s1.ipynb").write_text("{}")
    for bad in ("1.5", "half", "nan"):
        assert main([str(tmp_path), "--out", str(tmp_path / "g.csv"), "--close-credit", bad]) == 2
        err = capsys.readouterr().err
        assert "--close-credit" in err and "from 0 to 1" in err
    assert not (tmp_path / "g.csv").exists()


@pytest.mark.slow
def test_a_regrade_with_the_tas_points_counts_them_in_every_total(graded, tmp_path):
    """The TA gives s101 0.5 and s104 1 for q12's reasoning; s101 is regraded with
    --manual-import. By hand: s101 62 + 0.5 = 62.5, s104 4 + 1 = 5, s103 0 (blank, not
    graded yet); every row's max 62 + 1 = 63; s101's feedback page says 62.5 of 63."""
    import shutil

    out, _, folder = graded
    work = tmp_path / "out"
    work.mkdir()
    shutil.copy(out, work / "grades.csv")
    with (out.parent / "manual" / "q12-reasoning.csv").open() as fh:
        sheet = list(csv.reader(fh))
    for row in sheet[1:]:
        row[3] = {"s101": "0.5", "s104": "1"}.get(row[0], "")
    (tmp_path / "ta").mkdir()
    with (tmp_path / "ta" / "q12-reasoning.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows(sheet)
    args = [str(folder), "--out", str(work / "grades.csv"), "--timeout", "600"]
    assert main([*args, "--student", "s101", "--manual-import", str(tmp_path / "ta")]) == 0
    rows = _rows(work / "grades.csv")
    got = {s: (r["q12 reasoning"], r["total"], r["max"]) for s, r in rows.items()}
    assert got["s101"] == ("0.5", "62.5", "63") and got["s104"] == ("1", "5", "63")
    assert got["s103"] == ("", "0", "63")
    page = (work / "feedback" / "s101.html").read_text()
    assert "<strong>62.5 of 63</strong>" in page and "<td>0.5 / 1</td>" in page


@pytest.mark.slow
def test_a_regrade_given_no_options_keeps_the_late_penalty_of_the_full_run(tmp_path, capsys):
    """s501 hands in q1 right (1 point) 24 h after --due, at 0.25 a day: one started day,
    1 x (1 - 0.25) = 0.75; an hour later it is two started days, 1 x (1 - 2 x 0.25) = 0.5.
    A regrade of s501 with no options still gives 0.5 (and says which options it took);
    one with another penalty is refused, the file as it was."""
    folder = tmp_path / "subs"
    write_edition(folder, ROOT, ["s501", "s502"], ["problems"])
    path = folder / "s501" / "s501_problems.ipynb"
    _fill(path, {"q1": reference("q1", "s501")})
    handed_in = 1_772_409_600  # 2026-03-02 00:00 UTC
    os.utime(path, (handed_in, handed_in))
    out = tmp_path / "out" / "grades.csv"
    args = [str(folder), "--out", str(out), "--timeout", "600", "--no-salt"]
    policy = ["--due", "2026-03-01T00:00:00Z", "--late-penalty-per-day", "0.25"]
    assert main([*args, *policy]) == 0
    rows = _rows(out)
    assert (rows["s501"]["total"], rows["s501"]["late factor"]) == ("0.75", "0.75")
    os.utime(path, (handed_in + 3600, handed_in + 3600))  # one hour more: 2 started days
    assert main([*args, *policy, "--replace"]) == 0
    assert _rows(out)["s501"]["total"] == "0.5"
    capsys.readouterr()
    assert main([*args, "--student", "s501"]) == 0
    assert "regrade: scored as the run that wrote" in capsys.readouterr().out
    assert (_rows(out)["s501"]["total"], _rows(out)["s501"]["late factor"]) == ("0.5", "0.5")
    before = out.read_bytes()
    assert main([*args, "--student", "s501", "--late-penalty-per-day", "0.1"]) == 2
    assert "--late-penalty-per-day 0.25 and this regrade has" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_a_status_is_written_as_its_text_and_read_back_as_it(tmp_path):
    """The status enum's members are the CSV's words: an ID mismatch is written 'ID mismatch'
    and, read back, is nobody's answers; a copy --keep did not pick is written 'not counted'.
    Whether a row counts comes from its status, never from its notes: a row whose notes begin
    NOT COUNTED but whose status is 'ran' counts."""
    from lesson_lib.coursework.graded import Submission
    from lesson_lib.coursework.grades_csv import read_grades_row, read_scores
    from lesson_lib.coursework.scoring import score_nothing
    from lesson_lib.coursework.status import Status

    sub = score_nothing(Submission("s1", tmp_path / "s1.ipynb", Status.ID_MISMATCH))
    copy = score_nothing(Submission("s2", tmp_path / "s2.ipynb", counted=False))
    write_scores([sub, copy], tmp_path / "g.csv")
    assert _rows(tmp_path / "g.csv")["s1"]["status"] == "ID mismatch"
    assert _rows(tmp_path / "g.csv")["s2"]["status"] == "not counted"
    mismatch, dropped = read_scores(tmp_path / "g.csv")
    assert (mismatch.status, mismatch.counted, mismatch.graded) == ("ID mismatch", True, False)
    assert (dropped.counted, dropped.graded) == (False, False)
    said = read_grades_row({"status": "ran", "notes": "NOT COUNTED (--keep best): b.ipynb"})
    assert (said.counted, said.graded) == (True, True)
    by_status = read_grades_row({"status": "not counted", "notes": "counts, says the TA"})
    assert (by_status.counted, by_status.graded) == (False, False)
