"""The class report: means, verdicts and common mistakes, worked out by hand."""

from __future__ import annotations

import collections
import csv

import pytest

from lesson_lib.coursework.check import CLOSE_CREDIT, check
from lesson_lib.coursework.class_report import (
    _render_markdown,
    class_report,
    main,
    plot,
    read_details,
)
from lesson_lib.coursework.report_rows import read_grades


def _row(student: str, qid: str, status: str, mistake: str = "") -> dict[str, str]:
    return {"student": student, "problem": qid, "status": status, "mistake": mistake}


#: Four students, two problems. q1 is one star (1 point), q7 two stars (2 points).
ROWS = [
    _row("s001", "q1", "right"),
    _row("s002", "q1", "close"),
    _row("s003", "q1", "wrong", "q01.params-as-gb"),
    _row("s004", "q1", "not answered yet"),
    _row("s001", "q7", "wrong", "q07.us-as-ms"),
    _row("s002", "q7", "wrong", "q07.us-as-ms"),
    _row("s003", "q7", "wrong", "q07.unit-kib"),
    _row("s004", "q7", "right"),
]


def test_means_and_verdicts_by_hand():
    """q1: (1 + 0.5 + 0 + 0) / 4 = 0.375; q7: (0 + 0 + 0 + 2) / 4 = 0.5."""
    report = class_report(ROWS)
    q1, q7 = report.problems
    assert (q1.qid, q1.max_points, q1.mean_points) == ("q1", 1.0, 0.375)
    assert (q7.qid, q7.max_points, q7.mean_points) == ("q7", 2.0, 0.5)
    assert q1.statuses == {
        "right": 1,
        "close": 1,
        "wrong": 1,
        "not answered yet": 1,
        "unreadable": 0,
    }
    assert q7.mistakes == [("q07.us-as-ms", 2), ("q07.unit-kib", 1)]
    # totals: s001 1 + 0, s002 0.5 + 0, s003 0, s004 0 + 2; the set here is 1 + 2 = 3 points
    assert report.totals() == {"s001": 1.0, "s002": 0.5, "s003": 0.0, "s004": 2.0}
    assert report.max_points == 3.0


def test_close_credit_is_the_instructors():
    """At a close credit of 0.25, s002's close q1 earns 0.25 of 1 point; the mean (1.25) / 4."""
    report = class_report(ROWS, close_credit=0.25)
    assert report.problems[0].mean_points == pytest.approx(0.3125)
    assert report.points["s002"]["q1"] == 0.25


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_a_close_credit_outside_0_to_1_is_refused(bad):
    with pytest.raises(ValueError, match="close_credit"):
        class_report(ROWS, close_credit=bad)


def test_rows_of_no_problem_or_no_verdict_are_skipped():
    report = class_report([*ROWS, _row("s009", "q99", "right"), _row("s009", "q1", "ID mismatch")])
    assert [p.answers for p in report.problems] == [4, 4]


def test_split_by_variant_when_the_class_drew_few():
    """q19 draws one of about ten measured systems: 30 students meet each about three times.

    q1 draws 731 sizes, so 4 students are 4 groups of one: no split.
    """
    rows = [_row(f"s{i:03d}", "q19", "right" if i % 3 else "wrong", "") for i in range(30)]
    (q19,) = class_report(rows).problems
    assert 2 <= len(q19.variants) <= 12
    assert sum(v.students for v in q19.variants) == 30
    assert all(v.label.startswith("system=") for v in q19.variants)
    assert class_report(ROWS).problems[0].variants == []


def test_the_report_splits_variants_by_the_salt_the_grades_were_drawn_with(tmp_path, monkeypatch):
    """A salted class: make report finds the salt as the grader does, checks it against the
    grades' options, and labels each variant by the students' own numbers, not the public ones.
    A salt the grades were not made with is refused, naming the variable to set."""
    from lesson_lib.coursework.class_report import _variant_label
    from lesson_lib.coursework.run_options import record_options, salt_fingerprint
    from lesson_lib.coursework.variants import SALT_FILE_ENV, create_salt_file, salted

    salt = create_salt_file(tmp_path / "salt")
    students = [f"s{i:03d}" for i in range(30)]
    details, grades = tmp_path / "details.csv", tmp_path / "grades.csv"
    with details.open("w", newline="") as handle:
        out = csv.DictWriter(handle, ["student", "file", "problem", "status", "mistake"])
        out.writeheader()
        out.writerows({**_row(s, "q19", "right"), "file": f"{s}.ipynb"} for s in students)
    grades.write_text(
        "student,file,late factor,status,notes\n"
        + "".join(f"{s},{s}.ipynb,1,ran,\n" for s in students)
    )
    record_options(grades, {"salt": salt_fingerprint(salt)})
    with salted(salt):
        own = collections.Counter(_variant_label("q19", s) for s in students)
    assert own != collections.Counter(_variant_label("q19", s) for s in students)  # public ones
    monkeypatch.setenv(SALT_FILE_ENV, str(tmp_path / "salt"))
    assert main([str(details), "--grades", str(grades), "--out", str(tmp_path / "r")]) == 0
    text = (tmp_path / "r" / "class_report.md").read_text()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| q19 | system=")]
    assert {row[1]: int(row[2]) for row in rows} == own
    monkeypatch.setenv(SALT_FILE_ENV, "")
    assert main([str(details), "--grades", str(grades), "--out", str(tmp_path / "r2")]) == 2


def test_the_markdown_names_the_common_mistakes():
    text = _render_markdown(class_report(ROWS), top=1)
    line = next(x for x in text.splitlines() if x.startswith("| q7 "))
    assert "`q07.us-as-ms` (2)" in line and "unit-kib" not in line
    assert "4 students counted; close answers earn 0.5" in text and "worth 3 points" in text


def test_real_verdicts_carry_the_ids_the_report_counts():
    """Through the real checker: q7's book answer 2.0345 MiB; 2034.5 is it x 1000 (us as ms)."""
    rows = []
    for student, answer in (("a", 2034.5), ("b", 2034.5), ("c", "2.0345")):
        result = check("q7", answer)
        rows.append(_row(student, "q7", result.status, result.mistake))
    q7 = class_report(rows).problems[0]
    assert q7.mistakes == [("q07.us-as-ms", 2)] and q7.statuses["right"] == 1


def test_wrong_letters_of_a_multiple_choice_problem_are_counted_as_its_mistakes(tmp_path):
    """q4's wrong letters each have their own explanation: the report counts them by letter,
    as the details file holds them (the checker writes a letter answer as 'b')."""
    details = tmp_path / "details.csv"
    answers = [("s001", "b"), ("s002", "b"), ("s003", "d"), ("s004", "C")]
    with details.open("w", newline="") as handle:
        out = csv.DictWriter(handle, ["student", "file", "problem", "answer", "status", "mistake"])
        out.writeheader()
        for student, letter in answers:
            result = check("q4", letter)
            out.writerow(
                {"student": student, "file": "x.ipynb", "problem": "q4", "answer": result.given}
                | {"status": result.status, "mistake": result.mistake}
            )
    q4 = class_report(read_details(details)).problems[0]
    assert q4.statuses["right"] == 1 and q4.statuses["wrong"] == 3
    assert q4.mistakes == [("q4.letter-b", 2), ("q4.letter-d", 1)]


def test_the_command_writes_report_plot_and_points(tmp_path):
    details = tmp_path / "details.csv"
    with details.open("w", newline="") as handle:
        out = csv.DictWriter(handle, ["student", "file", "problem", "status", "mistake"])
        out.writeheader()
        out.writerows({**r, "file": r["student"] + ".ipynb"} for r in ROWS)
    (tmp_path / "grades.csv").write_text(
        "student,file,late factor,status,notes\n"
        + "".join(f"s00{i},s00{i}.ipynb,1,ran,\n" for i in range(1, 5))
    )
    assert main([str(details), "--out", str(tmp_path / "r"), "--close-credit", "1"]) == 0
    assert (tmp_path / "r" / "class_report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "q07.us-as-ms" in (tmp_path / "r" / "class_report.md").read_text()
    with (tmp_path / "r" / "class_points.csv").open() as handle:
        points = {row["student"]: row for row in csv.DictReader(handle)}
    # close credit 1: s002's close q1 earns the full point
    assert points["s002"]["q1"] == "1" and points["s004"]["total"] == "2"


def test_a_details_file_without_the_columns_is_refused(tmp_path, capsys):
    bad = tmp_path / "grades.csv"
    bad.write_text("student,file,q1\ns001,s001.ipynb,1\n")
    with pytest.raises(ValueError, match="problem, status"):
        read_details(bad)
    assert main([str(bad), "--out", str(tmp_path / "r")]) == 2
    assert "--details" in capsys.readouterr().err


def test_the_plot_has_a_bar_per_problem_and_mistake():
    fig = plot(class_report(ROWS))
    by_status, common = fig.axes
    # most common first; ties in the order first met (q1's rows come first)
    labels = [t.get_text() for t in common.get_yticklabels()]
    assert labels == ["q07.us-as-ms", "q01.params-as-gb", "q07.unit-kib"]
    assert len(by_status.patches) == 2 * 5  # two problems, five statuses


# A class graded with --due, a late penalty and --keep best, written by hand as the
# grader writes it (only the columns the report reads, plus the problems q1 and q7):
# s001 on time; s002 two days late (late factor 0.8); s003 handed in twice, the first
# copy better and counted; s004 an ID mismatch and s999 an unknown ID (nobody's answers).
GRADES_CSV = """\
student,file,q1,q7,total,max,late factor,status,notes,q12 reasoning
s001,s001.ipynb,1,2,3,3,1,ran,on time,
s002,s002.ipynb,1,1,1.6,3,0.8,ran,LATE 2 day(s); total x 0.8,
s003,s003-1.ipynb,1,2,3,3,1,ran,COUNTED (--keep best): 1 of 2 submissions of this ID,
s003,s003-2.ipynb,0,0,0,3,1,not counted,NOT COUNTED (--keep best): s003-1.ipynb counts for this ID,
s004,s004.ipynb,0,0,0,3,1,ID mismatch,the notebook says s005,
s999,s999.ipynb,0,0,0,3,1,unknown ID,not on the roster,
"""
DETAILS_CSV = """\
student,file,problem,answer,status,score,points,max,message,mistake
s001,s001.ipynb,q1,x,right,1,1,1,,
s001,s001.ipynb,q7,x,right,1,2,2,,
s002,s002.ipynb,q1,x,right,1,1,1,,
s002,s002.ipynb,q7,x,close,0.5,1,2,,
s003,s003-1.ipynb,q1,x,right,1,1,1,,
s003,s003-1.ipynb,q7,x,right,1,2,2,,
s003,s003-2.ipynb,q1,x,wrong,0,0,1,,q01.params-as-gb
s003,s003-2.ipynb,q7,x,wrong,0,0,2,,q07.us-as-ms
s004,s004.ipynb,q1,,not answered yet,0,0,1,,
s004,s004.ipynb,q7,,not answered yet,0,0,2,,
s999,s999.ipynb,q1,,not answered yet,0,0,1,,
s999,s999.ipynb,q7,,not answered yet,0,0,2,,
"""


def _class(tmp_path, grades=GRADES_CSV, details=DETAILS_CSV):
    (tmp_path / "grades.csv").write_text(grades)
    (tmp_path / "grades-details.csv").write_text(details)
    return tmp_path / "grades-details.csv"


def _late_class(tmp_path, close_credit=CLOSE_CREDIT):
    path = _class(tmp_path)
    return class_report(read_details(path), close_credit, read_grades(tmp_path / "grades.csv"))


def test_the_report_counts_what_the_grades_count(tmp_path):
    """Counted: s001, s002 and s003's first copy, 3 students (not 6 rows' 5 IDs).

    q1: all three right, mean 1. q7: 2 + 1 (close, 0.5 x 2) + 2 = 5, mean 5 / 3.
    Totals after the late factor: s001 3; s002 (1 + 1) x 0.8 = 1.6; s003 3 (the counted
    first copy, not the last row's 0). Mean total (3 + 1.6 + 3) / 3 = 7.6 / 3 = 2.5333.
    """
    report = _late_class(tmp_path)
    q1, q7 = report.problems
    assert (q1.answers, q1.mean_points, q1.statuses["right"]) == (3, 1.0, 3)
    assert (q7.answers, q7.statuses["close"], q7.mistakes) == (3, 1, [])
    assert q7.mean_points == pytest.approx(5 / 3)
    assert report.totals() == {"s001": 3.0, "s002": 1.6, "s003": 3.0}
    assert report.left_out == {"ID mismatch": 1, "unknown ID": 1, "not counted": 1}
    text = _render_markdown(report)
    assert text.count("3 students counted") == 1
    assert "Mean total: 2.53 of 3, after each student's late factor" in text
    assert (
        "1 notebook of status 'ID mismatch'" in text
        and "1 notebook of status 'not counted'" in text
    )


def test_the_close_credit_what_if_keeps_the_late_factor(tmp_path):
    """Close credit 1: s002's close q7 earns 2, so (1 + 2) x 0.8 = 2.4; q7's mean 6 / 3 = 2."""
    report = _late_class(tmp_path, close_credit=1.0)
    assert report.totals()["s002"] == pytest.approx(2.4)
    assert report.problems[1].mean_points == 2.0


def test_class_points_match_the_grades_csv(tmp_path):
    """The report's totals at the grader's close credit (0.5) are the grades CSV's total."""
    path = _class(tmp_path)
    assert main([str(path), "--out", str(tmp_path / "r")]) == 0
    with (tmp_path / "r" / "class_points.csv").open() as handle:
        points = {row["student"]: row for row in csv.DictReader(handle)}
    assert sorted(points) == ["s001", "s002", "s003"]
    assert (points["s002"]["late factor"], points["s002"]["total"]) == ("0.8", "1.6")
    assert (points["s003"]["file"], points["s003"]["total"]) == ("s003-1.ipynb", "3")
    assert points["s001"]["max"] == "3"


def test_two_counted_copies_of_an_id_are_listed_not_merged(tmp_path):
    """No --keep: s005 has two counted copies (right and wrong q1); s006 one, right.

    Neither of s005's copies is counted: 1 student, q1 1 answer, mean 1; 2 notebooks left out.
    """
    grades = (
        "student,file,q1,total,max,late factor,status,notes\n"
        "s005,s005-a.ipynb,1,1,1,1,ran,DUPLICATE student ID\n"
        "s005,s005-b.ipynb,0,0,1,1,ran,DUPLICATE student ID\n"
        "s006,s006.ipynb,1,1,1,1,ran,\n"
    )
    details = (
        "student,file,problem,status,mistake\n"
        "s005,s005-a.ipynb,q1,right,\n"
        "s005,s005-b.ipynb,q1,wrong,q01.params-as-gb\n"
        "s006,s006.ipynb,q1,right,\n"
    )
    path = _class(tmp_path, grades, details)
    for report in (
        class_report(read_details(path), grades=read_grades(tmp_path / "grades.csv")),
        class_report(read_details(path)),  # the details alone do not merge them either
    ):
        assert report.totals() == {"s006": 1.0}
        assert report.problems[0].answers == 1
        assert report.two_copies == {"s005": ["s005-a.ipynb", "s005-b.ipynb"]}
        text = _render_markdown(report)
        assert "1 student counted" in text
        assert "s005 has 2 counted copies (s005-a.ipynb, s005-b.ipynb), none counted" in text


def test_a_ta_s_points_count_before_the_late_factor(tmp_path):
    """s001: q1 right (1) and 0.5 for q12's reasoning, late factor 0.8: (1 + 0.5) x 0.8 = 1.2.

    Its most: q1's 1 and the reasoning's 1, 2 points.
    """
    grades = (
        "student,file,q1,total,max,late factor,status,notes,q12 reasoning\n"
        "s001,s001.ipynb,1,1.2,2,0.8,ran,LATE 2 day(s),0.5\n"
    )
    details = "student,file,problem,status,mistake\ns001,s001.ipynb,q1,right,\n"
    path = _class(tmp_path, grades, details)
    report = class_report(read_details(path), grades=read_grades(tmp_path / "grades.csv"))
    assert report.totals() == {"s001": 1.2}
    assert report.student_max("s001") == 2.0
    assert "Mean total: 1.20 of 2" in _render_markdown(report)


def test_a_details_row_the_grades_do_not_list_is_left_out(tmp_path):
    details = DETAILS_CSV + "s007,s007.ipynb,q1,x,right,1,1,1,,\n"
    report = class_report(
        read_details(_class(tmp_path, details=details)),
        grades=read_grades(tmp_path / "grades.csv"),
    )
    assert "s007" not in report.points
    assert report.left_out["in the details but not in the grades CSV"] == 1


def test_without_a_grades_csv_the_command_says_so(tmp_path, capsys):
    path = _class(tmp_path)
    (tmp_path / "grades.csv").unlink()
    assert main([str(path), "--out", str(tmp_path / "r")]) == 2
    assert "--grades" in capsys.readouterr().err
    # named elsewhere, it is found
    (tmp_path / "other.csv").write_text(GRADES_CSV)
    assert main([str(path), "--grades", str(tmp_path / "other.csv"), "--out", str(tmp_path)]) == 0


def test_a_details_cell_too_long_latin_1_details_or_an_out_file_give_exit_status_2(
    tmp_path, capsys
):
    details = tmp_path / "details.csv"
    (tmp_path / "grades.csv").write_text("student,file,late factor,status,notes\n")
    details.write_text("student,file,problem,status,mistake\ns001,f,q1," + "x" * 131_073 + ",\n")
    assert main([str(details), "--out", str(tmp_path / "r")]) == 2
    assert f"details CSV '{details}', line 2: field larger" in capsys.readouterr().err
    details.write_text("student,file,problem,status,mistake\nRené,f,q1,right,\n", "latin-1")
    assert main([str(details), "--out", str(tmp_path / "r")]) == 2
    assert "details.csv' is not UTF-8 text" in capsys.readouterr().err
    details.write_text("student,file,problem,status,mistake\n")
    (tmp_path / "taken").write_text("a file, not a folder")
    assert main([str(details), "--out", str(tmp_path / "taken")]) == 2
    assert "File exists" in capsys.readouterr().err


def test_a_students_file_name_is_text_in_the_markdown_report():
    """A file name holding a tag and a Markdown link renders as itself: its <, > and & escaped
    and Markdown's punctuation backslash-escaped, so a viewer that allows HTML runs nothing."""
    from lesson_lib.coursework.class_report import _markdown_text

    name = "<img src=x onerror=alert(1)>[a](javascript:x)_1.ipynb"
    assert _markdown_text(name) == (
        "&lt;img src=x onerror=alert\\(1\\)&gt;\\[a\\]\\(javascript:x\\)\\_1.ipynb"
    )
    assert _markdown_text("s005-a.ipynb") == "s005-a.ipynb"


def test_a_large_class_draws_only_the_variants_it_can_split_by(monkeypatch):
    """2,000 students: a problem with more than MAX_VARIANT_GROUPS variants stops drawing them
    once that many are met (13 labels, not 2,000), so a 400,000-row details file stays linear
    and quick; q17 (9 variants) still draws every student's, and is split by them."""
    import lesson_lib.coursework.class_report as report_module

    drawn = collections.Counter()
    real = report_module._variant_label
    monkeypatch.setattr(
        report_module, "_variant_label", lambda q, s: drawn.update([q]) or real(q, s)
    )
    rows = [
        {
            "student": f"s{i:04d}",
            "file": f"s{i:04d}.ipynb",
            "problem": q,
            "status": "right",
            "mistake": "",
        }
        for i in range(2000)
        for q in ("q1", "q17")
    ]
    report = report_module.class_report(rows)
    assert drawn["q17"] == 2000 and drawn["q1"] < 100
    by_q = {p.qid: p for p in report.problems}
    assert by_q["q1"].variants == [] and len(by_q["q17"].variants) == 9
