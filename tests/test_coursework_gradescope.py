"""The Gradescope autograder: the zip's contents, results.json, and its run script run locally
against a fake /autograder root with the project's own grader."""

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from set_points import POINTS, SET_POINTS

from lesson_lib.coursework.check import check
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.gradescope import PYTHON_REQUEST, _read_json, _results_json, build_zip
from lesson_lib.coursework.problems import PROBLEMS, reference
from lesson_lib.coursework.student_edition import write_edition

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory):
    return build_zip(tmp_path_factory.mktemp("zip") / "autograder.zip", ROOT)


def test_the_zip_holds_both_scripts_at_its_root_and_the_pinned_package(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        names = set(zf.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        requirements = zf.read("lesson/requirements.txt").decode()
        setup = zf.read("setup.sh").decode()
        config = json.loads(zf.read("config.json"))
    assert {"setup.sh", "run_autograder", "config.json", "lesson/pyproject.toml"} <= names
    assert "lesson/lesson_lib/coursework/gradescope.py" in names
    assert not any("__pycache__" in n for n in names)
    assert modes["run_autograder"] & stat.S_IXUSR and modes["setup.sh"] & stat.S_IXUSR
    assert "-e ." not in requirements and "nbclient==" in requirements
    assert "bubblewrap" in setup and '--python ">=3.11.5,<3.12"' in setup
    assert "venv --clear" in setup  # setup.sh can run again over an earlier venv
    assert config == {
        "visibility": "after_due_date",
        "timeout": 30.0,  # the grader's default: max(30 s, 10 x a 2.1 s clean run)
        "require_sandbox": False,
        "close_credit": 0.5,
    }


def test_the_python_setup_sh_asks_for_installs_every_pin():
    """Every package pinned (installed here from requirements.txt) accepts 3.11.5, the
    lowest Python setup.sh takes; soupsieve 4.1.3 declares Requires-Python >=3.11.5, so
    3.11.4 (and Debian 12's 3.11.2, Ubuntu 22.04's 3.10) must be refused."""
    from importlib.metadata import distributions

    from packaging.specifiers import SpecifierSet

    accepted = SpecifierSet(PYTHON_REQUEST)
    assert "3.11.5" in accepted and "3.11.4" not in accepted and "3.12.0" not in accepted
    pinned = {
        line.split("==")[0].strip().lower()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line
    }
    for dist in distributions():
        needs = dist.metadata.get("Requires-Python")
        if needs and dist.metadata["Name"].lower().replace("_", "-") in pinned:
            assert "3.11.5" in SpecifierSet(needs), (dist.metadata["Name"], needs)
    soupsieve = next(d for d in distributions() if d.metadata["Name"] == "soupsieve")
    assert "3.11.4" not in SpecifierSet(soupsieve.metadata["Requires-Python"])


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="visibility must be one of"):
        build_zip(tmp_path / "a.zip", ROOT, visibility="sometimes")
    with pytest.raises(ValueError, match="timeout must be > 0"):
        build_zip(tmp_path / "a.zip", ROOT, timeout=0)
    with pytest.raises(ValueError, match="close_credit"):
        build_zip(tmp_path / "a.zip", ROOT, close_credit=2)


def test_make_gradescope_packs_the_issued_roster_unless_told_otherwise(
    tmp_path, monkeypatch, capsys
):
    """The build command ships what make grade would read: with a salt whose folder holds
    the edition's roster.csv, that roster's platform ids and student IDs, never a name, section
    or e-mail; --no-roster, or no salt in use (LESSON_COURSE_SALT_FILE empty), ships none; a
    named --roster wins."""
    from lesson_lib.coursework.gradescope import main
    from lesson_lib.coursework.roster import add_issued_ids
    from lesson_lib.coursework.variants import create_salt_file

    salt = tmp_path / "instructor" / "salt"
    create_salt_file(salt)
    add_issued_ids(tmp_path / "instructor" / "roster.csv", ["s001", "s002"])
    named = tmp_path / "class.csv"
    named.write_text("lms_user_id,name,section,student_id,email\n7,Ann,S1,s009,ann@x.edu\n")

    def shipped(*args: str) -> bytes | None:
        out = tmp_path / "autograder.zip"
        assert main(["build", "--root", str(ROOT), "--out", str(out), *args]) == 0
        with zipfile.ZipFile(out) as zf:
            return zf.read("roster.csv") if "roster.csv" in zf.namelist() else None

    monkeypatch.setenv("LESSON_COURSE_SALT_FILE", str(salt))
    assert shipped() == b"lms_user_id,name,section,student_id\n,,,s001\n,,,s002\n"
    assert "(no names, sections or e-mails)" in capsys.readouterr().out
    assert shipped("--no-roster") is None
    assert shipped("--roster", str(named)) == b"lms_user_id,name,section,student_id\n7,,,s009\n"
    monkeypatch.setenv("LESSON_COURSE_SALT_FILE", "")
    assert shipped() is None


def test_results_have_one_test_per_problem_with_its_points_and_visibility():
    """q1 right (1 point), q2 wrong, q10 right (3 points): 1 + 0 + 3 = 4, every other
    problem 0; each test named, worth its problem's points, shown after the due date."""
    answers = {"q1": reference("q1", "s001"), "q2": -1.0, "q10": reference("q10", "s001")}
    sub = Submission("s001", Path("s001_problems.ipynb"), "ran", answers, notes=["a note"])
    sub.results = {q: check(q, answers.get(q), "s001") for q in PROBLEMS}
    results = _results_json(sub, "after_due_date", ["first line"])
    assert results["score"] == 4.0
    assert len(results["tests"]) == len(PROBLEMS)
    by_q = {t["name"].split(":")[0]: t for t in results["tests"]}
    assert [t["max_score"] for t in by_q.values()] == list(POINTS.values())
    first, second = by_q["q1"], by_q["q2"]
    assert first["score"] == 1.0 and by_q["q10"]["score"] == 3.0
    assert first["max_score"] == 1.0 and first["visibility"] == "after_due_date"
    assert second["score"] == 0.0 and second["output"]
    assert by_q["q3"]["output"] == "No answer was found for this problem in the notebook handed in."
    assert results["output"].splitlines()[0] == "first line"
    assert "a note" in results["output"]
    assert results["extra_data"] == {"student_id": "s001", "status": "ran"}


def _fake_root(tmp_path: Path, autograder_zip: Path, metadata_id: str) -> Path:
    """/autograder as Gradescope lays it out: source/ (the zip), submission/, the metadata."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    os.chmod(root / "source" / "run_autograder", 0o755)
    write_edition(tmp_path / "edition", ROOT, ["s001"], ["problems"])
    nb = nbformat.read(tmp_path / "edition" / "s001" / "s001_problems.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "answer":
            qid = cell.source.split("=")[0].strip()[len("answer_") :]
            cell.source = f"answer_{qid} = {reference(qid, 's001')!r}"
    nb.metadata["lesson"]["student_id"] = metadata_id
    (root / "submission").mkdir(parents=True)
    nbformat.write(nb, root / "submission" / "s001_problems.ipynb")
    metadata = {
        "id": 123456,
        "created_at": "2026-03-01T14:22:32.365935-07:00",
        "assignment": {"due_date": "2026-03-02T23:00:00.000000-07:00", "title": "Problem set"},
        "users": [{"email": "jane.smith@example.edu", "id": 1234, "name": "Jane Smith"}],
    }
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    return root


def _run_autograder(root: Path, prefix: tuple[str, ...] = ()) -> dict:
    env = {
        **os.environ,
        "LESSON_AUTOGRADER_ROOT": str(root),
        "LESSON_AUTOGRADER_PYTHON": sys.executable,
    }
    argv = [*prefix, "bash", str(root / "source" / "run_autograder")]
    subprocess.run(argv, env=env, check=True, timeout=900)
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow
def test_the_run_script_grades_a_right_submission_in_full(tmp_path, autograder_zip):
    results = _run_autograder(_fake_root(tmp_path, autograder_zip, "s001"))
    assert results["score"] == SET_POINTS
    assert [t["score"] for t in results["tests"]] == list(POINTS.values())
    assert {t["visibility"] for t in results["tests"]} == {"after_due_date"}
    assert results["extra_data"] == {"student_id": "s001", "status": "ran"}


@pytest.mark.slow
def test_the_run_script_scores_nothing_when_file_name_and_metadata_disagree(
    tmp_path, autograder_zip
):
    results = _run_autograder(_fake_root(tmp_path, autograder_zip, "s002"))
    assert results["score"] == 0
    assert results["extra_data"]["status"] == "ID mismatch"
    assert "ID MISMATCH" in results["output"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may drop its capabilities")
def test_without_the_sandbox_or_a_spare_user_the_notebook_is_not_run(tmp_path, autograder_zip):
    """Every capability dropped (util-linux's setpriv): bubblewrap cannot start and root cannot
    switch to a spare user, so the notebook would run as the autograder's own user, who reads
    the salt: it is not run, nothing is scored, and the output says what is missing."""
    root = _fake_root(tmp_path, autograder_zip, "s001")
    marker = tmp_path / "the notebook ran"
    notebook = root / "submission" / "s001_problems.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(f"open({str(marker)!r}, 'w').close()"))
    nbformat.write(nb, notebook)
    results = _run_autograder(root, ("setpriv", "--bounding-set=-all"))
    assert not marker.exists()
    assert results["score"] == 0 and "extra_data" not in results
    assert results["output"].startswith("Not graded: the grader's sandbox cannot run")
    assert "root with CAP_SETUID, CAP_SETGID and CAP_CHOWN" in results["output"]
    assert len(results["tests"]) == len(PROBLEMS)


def test_the_course_salt_is_shipped_when_given_and_checked(tmp_path, monkeypatch):
    """A salt file made by create_salt_file goes into the zip as `salt`, as written; a file
    that holds no salt is refused with its name; the command line finds the salt as
    make grade does (here through LESSON_COURSE_SALT_FILE)."""
    from lesson_lib.coursework.gradescope import main
    from lesson_lib.coursework.variants import SALT_FILE_ENV, create_salt_file

    salt = create_salt_file(tmp_path / "salt")
    with zipfile.ZipFile(build_zip(tmp_path / "a.zip", ROOT, salt_file=tmp_path / "salt")) as zf:
        assert zf.read("salt").decode().strip() == salt
    with zipfile.ZipFile(build_zip(tmp_path / "b.zip", ROOT)) as zf:
        assert "salt" not in zf.namelist()
    (tmp_path / "bad").write_text("not a salt\n")
    with pytest.raises(ValueError, match="bad"):
        build_zip(tmp_path / "c.zip", ROOT, salt_file=tmp_path / "bad")
    monkeypatch.setenv(SALT_FILE_ENV, str(tmp_path / "salt"))
    assert main(["build", "--out", str(tmp_path / "d.zip"), "--root", str(ROOT)]) == 0
    with zipfile.ZipFile(tmp_path / "d.zip") as zf:
        assert zf.read("salt").decode().strip() == salt


@pytest.mark.slow
def test_a_salted_class_is_graded_on_its_own_variants(tmp_path):
    """The edition made with a course salt, answered with that salt's references: with the
    salt in the zip every problem is right (without it the public variants were graded and
    the same notebook scored 3.5 of 22); the run leaves the salt readable by its owner only."""
    from lesson_lib.coursework.gradescope import run
    from lesson_lib.coursework.variants import (
        course_salt,
        create_salt_file,
        salted,
        set_course_salt,
    )

    salt = create_salt_file(tmp_path / "salt")
    zip_path = build_zip(tmp_path / "autograder.zip", ROOT, salt_file=tmp_path / "salt")
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
    write_edition(tmp_path / "edition", ROOT, ["s001"], ["problems"], salt=salt)
    nb = nbformat.read(tmp_path / "edition" / "s001" / "s001_problems.ipynb", as_version=4)
    with salted(salt):
        for cell in nb.cells:
            if cell.metadata.get("coursework") == "answer":
                qid = cell.source.split("=")[0].strip()[len("answer_") :]
                cell.source = f"answer_{qid} = {reference(qid, 's001')!r}"
    (root / "submission").mkdir(parents=True)
    nbformat.write(nb, root / "submission" / "s001_problems.ipynb")
    try:
        results = run(root, {})
        salt_in_use = course_salt()
    finally:
        set_course_salt(None)  # the public variants again for the other tests
    assert salt_in_use == salt
    assert results["score"] == sum(t["max_score"] for t in results["tests"])
    assert results["extra_data"]["status"] == "ran"
    assert (root / "source" / "salt").stat().st_mode & 0o777 == 0o600  # the grader's alone


def test_metadata_json_nested_too_deeply_or_a_fifo_is_read_as_none(tmp_path):
    """No RecursionError traceback, no wait on a FIFO: the metadata is left out."""
    path = tmp_path / "submission_metadata.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert _read_json(path) is None
    path.unlink()
    os.mkfifo(path)
    assert _read_json(path) is None


def test_results_show_a_students_markup_as_text():
    """An answer and a note holding ``<img onerror>``: Gradescope's documented ``output_format``
    is ``text`` at the top and on every test, so neither is shown as HTML."""
    hostile = "<img src=x onerror=alert(1)>"
    sub = Submission("s001", Path("s001_problems.ipynb"), "ran", {"q2": hostile}, notes=[hostile])
    sub.results = {q: check(q, sub.answers.get(q), "s001") for q in PROBLEMS}
    results = _results_json(sub, "after_due_date")
    assert hostile in results["output"] and results["output_format"] == "text"
    assert {t["output_format"] for t in results["tests"]} == {"text"}
