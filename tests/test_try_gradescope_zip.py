"""tools/try_gradescope_zip.py: the parts that need no network (the whole run is
`make try-gradescope`, minutes long, outside the suite)."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import try_gradescope_zip as tool

from lesson_lib.coursework.check import check
from lesson_lib.coursework.gradescope import build_zip


def test_the_root_is_entered_as_slash_with_only_the_given_environment(tmp_path):
    env = {"PATH": "/usr/bin", "HOME": "/root"}
    argv = tool.bwrap_argv(tmp_path, "/autograder", env, [Path("/opt/py")])
    assert argv[:4] == ["bwrap", "--bind", str(tmp_path), "/"]
    assert ["--proc", "/proc"] == argv[4:6] and ["--dev", "/dev"] == argv[6:8]
    joined = " ".join(argv)
    assert "--ro-bind /opt/py /opt/py" in joined
    assert "--ro-bind /etc/resolv.conf /etc/resolv.conf" in joined
    assert "--unshare-net" not in argv  # setup.sh needs the network, as on Gradescope
    i = argv.index("--chdir")
    assert argv[i + 1] == "/autograder"
    assert argv[i + 2 :] == ["env", "-i", "PATH=/usr/bin", "HOME=/root"]
    assert "--cap-drop" not in argv
    none = tool.bwrap_argv(tmp_path, "/", env, caps=())
    assert none[none.index("--cap-drop") + 1] == "ALL" and "--cap-add" not in none
    docker = tool.bwrap_argv(tmp_path, "/", env, caps=tool.DOCKER_CAPS)
    added = {docker[i + 1] for i, arg in enumerate(docker) if arg == "--cap-add"}
    assert docker[docker.index("--cap-drop") + 1] == "ALL"
    assert {"CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_KILL"} <= added
    assert "CAP_SYS_ADMIN" not in added and len(added) == 14


def test_the_roots_path_puts_the_stand_in_python_first():
    env = tool.root_environment(["/opt/py/bin"], {"UV_SYSTEM_CERTS": "1"})
    assert env["PATH"] == "/opt/py/bin:" + tool.ROOT_PATH
    assert env["HOME"] == "/root" and env["UV_SYSTEM_CERTS"] == "1"
    assert tool.root_environment()["PATH"] == tool.ROOT_PATH


def test_the_zip_is_laid_out_as_gradescope_does_it(tmp_path):
    """source/ holds the zip with its modes (setup.sh and run_autograder 0755), and
    run_autograder is copied to /autograder itself."""
    zip_path = build_zip(tmp_path / "autograder.zip", tool.REPO)
    autograder = tmp_path / "root" / "autograder"
    tool.unpack_autograder(zip_path, autograder)
    for script in (autograder / "run_autograder", autograder / "source" / "setup.sh"):
        assert stat.S_IMODE(script.stat().st_mode) == 0o755, script
    assert (autograder / "source" / "lesson" / "requirements.txt").is_file()
    same = (autograder / "source" / "run_autograder").read_text()
    assert (autograder / "run_autograder").read_text() == same


def _results(score: float, status: str, tests: int = 3, output: str = "") -> dict:
    return {
        "score": score,
        "output": output,
        "tests": [{"score": 0, "max_score": 1.0}] * tests,
        "extra_data": {"status": status},
    }


def test_a_right_case_needs_full_marks_and_status_ran():
    """Three tests of 1 point: 3 is full marks, 2 is not; 'ID mismatch' is not 'ran'."""
    assert tool.check_results(_results(3.0, "ran"), "right", 3) == []
    assert tool.check_results(_results(2.0, "ran"), "right", 3) == ["score 2.0, expected 3.0"]
    wrong = tool.check_results(_results(3.0, "ID mismatch", 2), "right", 3)
    assert wrong == [
        "2 tests, expected 3",
        "status 'ID mismatch', expected 'ran'",
        "score 3.0, expected 2.0",
    ]


def test_the_no_sandbox_case_needs_the_results_to_say_so():
    said = "Graded without the grader's sandbox (it cannot run in this container), as a spare user."
    assert tool.check_results(_results(3.0, "ran", output=said), "no-sandbox", 3) == []
    wrong = tool.check_results(_results(3.0, "ran"), "no-sandbox", 3)
    assert wrong == ["sandbox, expected spare user"]
    wrong = tool.check_results(_results(3.0, "ran", output=said), "right", 3)
    assert wrong == ["spare user, expected sandbox"]


def test_without_capabilities_nothing_is_graded_and_the_output_says_what_is_missing():
    said = "Not graded: the grader's sandbox cannot run ... needs the grader to run as root with "
    results = {**_results(0.0, "ran", output=said + "CAP_SETUID, CAP_SETGID and CAP_CHOWN.")}
    del results["extra_data"]
    assert tool.check_results(results, "no-capabilities", 3) == []
    results["output"] = said
    assert tool.check_results(results, "no-capabilities", 3) == [
        "the output does not say what is missing"
    ]
    graded = tool.check_results(_results(3.0, "ran"), "no-capabilities", 3)
    assert graded == [
        "status 'ran', expected None",
        "score 3.0, expected 0",
        "sandbox, expected not graded",
    ]


def test_a_hostile_case_fails_on_a_raised_runtime_error_or_the_salt_in_the_results():
    """The hostile notebook is tried in the sandbox and as a spare user, both graded in full."""
    hostile = [case for case in tool.CASES.values() if case.hostile]
    assert sorted(case.graded for case in hostile) == ["sandbox", "spare user"]
    assert all(case.full_marks and case.status == "ran" for case in hostile)
    salt = "5a1f" * 8
    assert tool.check_results(_results(3.0, "ran"), "hostile", 3, salt) == []
    raised = _results(3.0, "ran", output="1 cell(s) raised an error (RuntimeError)")
    assert tool.check_results(raised, "hostile", 3, salt) == [
        "the notebook read something private (a cell raised RuntimeError)"
    ]
    leaked = _results(3.0, "ran", output=f"answer {salt}")
    assert tool.check_results(leaked, "hostile", 3, salt) == ["the course salt is in results.json"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root has another user to run as")
@pytest.mark.skipif(not Path("/usr/bin/python3").is_file(), reason="a Python any user may run")
def test_the_hostile_cell_raises_on_what_it_can_read_and_not_otherwise():
    """Run as another user below this root process it reads nothing (the grader's environment
    and memory are refused it) and ends cleanly; with a salt variable in its environment it
    raises. The sample with it is the edition's notebook plus that last cell."""
    uid = 2_000_000_000 + os.getpid() % 100_000
    cell = ["/usr/bin/python3", "-c", tool.HOSTILE_CELL]
    spare = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *cell]
    run = subprocess.run(spare, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    env = {"PATH": "/usr/bin:/bin", "LESSON_COURSE_SALT_FILE": "/x"}
    run = subprocess.run(cell, capture_output=True, text=True, env=env)
    assert run.returncode == 1 and "RuntimeError: read the salt" in run.stderr
    assert "$LESSON_COURSE_SALT_FILE" in run.stderr


def test_the_hostile_sample_ends_with_the_hostile_cell(tmp_path):
    notebook = tool.write_submission(tmp_path / "autograder", "s001", None, hostile=True)
    nb = nbformat.read(notebook, as_version=4)
    assert nb.cells[-1].cell_type == "code" and nb.cells[-1].source == tool.HOSTILE_CELL
    plain = nbformat.read(tool.write_submission(tmp_path / "b", "s001", None), as_version=4)
    assert len(nb.cells) == len(plain.cells) + 1


def test_a_mismatched_case_needs_nothing_scored():
    assert tool.check_results(_results(0.0, "ID mismatch"), "mismatch", 3) == []
    assert tool.check_results(_results(1.0, "ID mismatch"), "mismatch", 3) == [
        "score 1.0, expected 0"
    ]


def test_the_sample_submission_is_right_for_its_student_and_says_the_id_asked(tmp_path):
    autograder = tmp_path / "autograder"
    (autograder / "submission").mkdir(parents=True)
    (autograder / "submission" / "old.ipynb").write_text("{}")  # a previous case's file
    notebook = tool.write_submission(autograder, "s001", "s002")
    assert [p.name for p in (autograder / "submission").iterdir()] == ["s001_problems.ipynb"]
    nb = nbformat.read(notebook, as_version=4)
    assert nb.metadata["lesson"]["student_id"] == "s002"
    answers = [c.source for c in nb.cells if c.metadata.get("coursework") == "answer"]
    assert answers
    for source in answers:
        name, _, value = source.partition(" = ")
        qid = name[len("answer_") :]
        assert check(qid, ast.literal_eval(value), "s001").status == "right", source
    metadata = json.loads((autograder / "submission_metadata.json").read_text())
    assert metadata["users"][0]["name"] == "Jane Smith"


def test_a_salted_sample_is_right_for_its_student_on_the_salted_variants(tmp_path):
    """With a course salt the answers are the salted references: right under that salt,
    and (for some problem at least) not the public variant's answer."""
    from lesson_lib.coursework.variants import create_salt_file, salted

    salt = create_salt_file(tmp_path / "salt")
    notebook = tool.write_submission(tmp_path / "autograder", "s001", None, salt)
    nb = nbformat.read(notebook, as_version=4)
    answers = {}
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "answer":
            name, _, value = cell.source.partition(" = ")
            answers[name[len("answer_") :]] = ast.literal_eval(value)
    with salted(salt):
        assert all(check(q, a, "s001").status == "right" for q, a in answers.items())
    assert any(check(q, a, "s001").status != "right" for q, a in answers.items())


def test_only_a_python_outside_usr_and_in_setup_shs_range_stands_in(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    monkeypatch.setattr(sys, "version_info", (3, 11, 7, "final", 0))
    assert tool.host_python_folder() == tmp_path.resolve()
    monkeypatch.setattr(sys, "version_info", (3, 11, 2, "final", 0))  # Debian 12's
    assert tool.host_python_folder() is None
    monkeypatch.setattr(sys, "version_info", (3, 11, 7, "final", 0))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    assert tool.host_python_folder() is None


def test_without_root_it_says_so_and_does_nothing(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert tool.main([]) == 2
    assert "needs Linux and root" in capsys.readouterr().out


def test_the_peak_memory_counts_the_children_of_the_command():
    """A shell whose child Python holds 200 MiB, touched: the peak is at least 200 MiB
    (and an interpreter's own few tens of MiB on top leave it well under 400)."""
    child = "b = bytearray(200 * 2**20); import time; time.sleep(1.0)"
    code, peak = tool.run_measured(["bash", "-c", f"{sys.executable} -c '{child}'; true"])
    assert code == 0
    assert 200 * 2**20 <= peak < 400 * 2**20
    assert tool.tree_rss_bytes(2**22 + 1) == 0  # no such process
