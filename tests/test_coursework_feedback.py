"""lesson_lib.coursework.feedback: one escaped HTML page per student with verdicts and points."""

from pathlib import Path

import pytest

from lesson_lib.coursework.check import CheckResult
from lesson_lib.coursework.feedback import _feedback_html, write_feedback
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.manual_grading import MANUAL_PARTS
from lesson_lib.coursework.problems import PROBLEMS


def _sub(student, graded_as, results, file="x.ipynb", **kw):
    sub = Submission(student=student, path=Path(file), file=file, graded_as=graded_as, **kw)
    blank = {q: CheckResult(q, "not answered yet", "Put your answer in.", 0.0) for q in PROBLEMS}
    sub.results = {**blank, **results}
    return sub


def test_each_problem_shows_its_verdict_points_and_hint():
    """q1 right (1 point of 1), q2 wrong with its hint (0), q12 close (1.5 of 3), the rest
    blank: 2.5 of the set's 62 points."""
    sub = _sub(
        "s001",
        "s001",
        {
            "q1": CheckResult("q1", "right", "Right.", 1.0, "54.0", "right", points=1.0),
            "q2": CheckResult("q2", "wrong", "Did you count bits as bytes?", 0.0, "128", "x"),
            "q12": CheckResult("q12", "close", "Nearly.", 0.5, "b", points=1.5),
        },
    )
    page = _feedback_html("s001", [sub])
    assert "<title>Feedback for s001</title>" in page
    q1 = page.split("<td>q1: ")[1].split("</tr>")[0]
    assert 'class="right">right<' in q1 and "<td>1 / 1</td>" in q1 and "54.0" in q1
    q2 = page.split("<td>q2: ")[1].split("</tr>")[0]
    assert 'class="wrong">wrong<' in q2 and "<td>0 / 1</td>" in q2
    assert "Did you count bits as bytes?" in q2
    assert "<td>1.5 / 3</td>" in page.split("<td>q12: ")[1].split("</tr>")[0]
    assert "<strong>2.5 of 62</strong>" in page and "Handed in late" not in page
    assert "<script" not in page


def test_a_crash_names_the_exceptions_and_their_names_are_text():
    sub = _sub("s001", "s001", {}, status="ran with errors")
    sub.notes = ["2 cell(s) raised an error (MemoryError, <b>Evil</b>)", "another note"]
    page = _feedback_html("s001", [sub])
    said = page.split("<h2>x.ipynb</h2>")[1].split("</p>")[0]
    assert "some cells raised an error. 2 cell(s) raised an error (MemoryError," in said
    assert "&lt;b&gt;Evil&lt;/b&gt;" in said and "another note" not in page


def test_a_late_submission_says_what_the_policy_kept_and_a_ta_part_shows_its_points():
    """q10 right (3 points) and the TA's 0.5 of q12's reasoning: 3.5 earned; late, 0.5
    kept: 1.75 of 62 + 1 = 63. A part not graded yet says so."""
    sub = _sub(
        "s002",
        "s002",
        {"q10": CheckResult("q10", "right", "Right.", 1.0, "32", points=3.0)},
        late_factor=0.5,
        manual={"q12": 0.5},
        late_note="LATE 2 day(s): handed in 2026-03-03 10:00:00Z (file time), due 2026-03-01",
    )
    page = _feedback_html("s002", [sub])
    assert "<strong>1.75 of 63</strong>" in page
    assert "the late policy keeps 0.5 of the 3.5 points earned. LATE 2 day(s): handed in" in page
    row = page.split("<td>q12 reasoning</td>")[1].split("</tr>")[0]
    # graded, but the rubric waits for --release (late work may still be coming in)
    assert "<td>0.5 / 1</td>" in row and MANUAL_PARTS["q12"].rubric[:40] not in row
    assert "The rubric is shown once the deadline for every student has passed." in row
    released = _feedback_html("s002", [sub], release=True)
    assert MANUAL_PARTS["q12"].rubric[:40] in released.split("<td>q12 reasoning</td>")[1]
    sub.manual = {"q12": None}
    page = _feedback_html("s002", [sub], release=True)
    assert "not graded yet" in page and MANUAL_PARTS["q12"].rubric[:40] not in page


def test_what_a_student_typed_is_escaped():
    sub = _sub(
        "s001",
        "s001",
        {"q1": CheckResult("q1", "wrong", "No.", 0.0, "'<script>alert(1)</script>'")},
        file="s001/<b>x.ipynb",
    )
    page = _feedback_html("s001", [sub])
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>x" not in page


def test_an_answer_read_from_source_says_where_the_notebook_stopped():
    sub = _sub(
        "s001",
        "s001",
        {"q5": CheckResult("q5", "right", "Right.", 1.0, "3.2")},
        status="timed out",
        from_source={"q5": "read from source: the notebook stopped at code cell 7"},
    )
    page = _feedback_html("s001", [sub])
    q5 = page.split("<td>q5: ")[1].split("</tr>")[0]
    assert "(read from source: the notebook stopped at code cell 7)" in q5
    assert "stopped at the time limit" in page


def test_files_for_valid_ids_only_one_per_student(tmp_path):
    """s001 twice (a duplicate) gives one file with two sections; an invalid name gets none."""
    subs = [
        _sub("s001", "s001", {}, file="s001.ipynb"),
        _sub("bad\\u200bname", None, {}, file="bad.ipynb", status="invalid ID"),
        _sub("s001", "s001", {}, file="S001.ipynb"),
        _sub("s002", "s002", {}, file="s002.ipynb"),
    ]
    written = write_feedback(subs, tmp_path / "fb")
    assert [p.name for p in written] == ["s001.html", "s002.html"]
    assert sorted(p.name for p in (tmp_path / "fb").iterdir()) == ["s001.html", "s002.html"]
    page = (tmp_path / "fb" / "s001.html").read_text()
    assert page.count("<h2>") == 2 and "2 notebooks were handed in under this ID" in page


def test_a_link_as_the_feedback_folder_is_refused(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ValueError, match="must be a folder, not a link"):
        write_feedback([_sub("s001", "s001", {})], tmp_path / "link")


def test_a_copy_the_keep_policy_dropped_is_marked_and_a_blank_answer_says_so():
    """Two copies, the second counted by --keep: each heading says whether it counts; a
    blank answer reads as none found, not as "run this cell again"; q12's reasoning,
    not imported, is to be graded and not in the score."""
    first = _sub("s003", "s003", {}, file="a.ipynb", counted=False)
    second = _sub("s003", "s003", {}, file="b.ipynb")
    page = _feedback_html("s003", [first, second])
    assert "<h2>a.ipynb (not counted)</h2>" in page and "<h2>b.ipynb (counts)</h2>" in page
    assert "the one marked as counting is your grade" in page
    assert "run this cell again" not in page and "No answer was found" in page
    assert "to be graded (1 point(s), not in the score yet)" in page
    assert MANUAL_PARTS["q12"].rubric[:40] not in page  # no giveaway before the points


def test_each_executed_notebook_is_kept_under_the_id_and_linked(tmp_path):
    """Two notebooks under s001: s001.ipynb and s001+2.ipynb ('+' is in no ID), each linked from
    its section; one that never ran has no file and no link; a link in place of one is refused."""
    first = _sub("s001", "s001", {}, file="a.ipynb", executed='{"cells": []}')
    second = _sub("s001", "s001", {}, file="b.ipynb", executed='{"cells": [1]}')
    never = _sub("s002", "s002", {}, file="c.ipynb")
    written = write_feedback([first, second, never], tmp_path)
    assert sorted(p.name for p in written) == [
        "s001+2.ipynb",
        "s001.html",
        "s001.ipynb",
        "s002.html",
    ]
    assert (tmp_path / "s001+2.ipynb").read_text() == '{"cells": [1]}'
    page = (tmp_path / "s001.html").read_text()
    assert '<a href="s001.ipynb">' in page and '<a href="s001+2.ipynb">' in page
    assert "as the grader ran it" not in (tmp_path / "s002.html").read_text()
    (tmp_path / "s001.ipynb").unlink()
    (tmp_path / "s001.ipynb").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="symbolic link"):
        write_feedback([first], tmp_path)
    assert not (tmp_path / "elsewhere").exists()
