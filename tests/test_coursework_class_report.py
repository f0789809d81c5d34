"""The class report: means, verdicts and common mistakes, worked out by hand."""

from __future__ import annotations

import csv

import pytest

from lesson_lib.coursework.check import check
from lesson_lib.coursework.class_report import (
    class_report,
    main,
    plot,
    read_details,
    render_markdown,
)


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


def test_the_markdown_names_the_common_mistakes():
    text = render_markdown(class_report(ROWS), top=1)
    line = next(x for x in text.splitlines() if x.startswith("| q7 "))
    assert "`q07.us-as-ms` (2)" in line and "unit-kib" not in line
    assert "4 students; close answers earn 0.5" in text and "worth 3 points" in text


def test_real_verdicts_carry_the_ids_the_report_counts():
    """Through the real checker: q7's book answer 2.0345 MiB; 2034.5 is it x 1000 (us as ms)."""
    rows = []
    for student, answer in (("a", 2034.5), ("b", 2034.5), ("c", "2.0345")):
        result = check("q7", answer)
        rows.append(_row(student, "q7", result.status, result.mistake))
    q7 = class_report(rows).problems[0]
    assert q7.mistakes == [("q07.us-as-ms", 2)] and q7.statuses["right"] == 1


def test_the_command_writes_report_plot_and_points(tmp_path):
    details = tmp_path / "details.csv"
    with details.open("w", newline="") as handle:
        out = csv.DictWriter(handle, ["student", "file", "problem", "status", "mistake"])
        out.writeheader()
        out.writerows({**r, "file": r["student"] + ".ipynb"} for r in ROWS)
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
