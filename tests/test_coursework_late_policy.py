"""The late policy: started days late, what is left of the score, which copy counts."""

import datetime as dt
from dataclasses import dataclass, field

import pytest

from lesson_lib.coursework.grade import main
from lesson_lib.coursework.identity import Identity
from lesson_lib.coursework.late_policy import (
    LatePolicy,
    apply_policy,
    days_late,
    implausible_times_warning,
    late_factor,
    parse_due,
)

DUE = dt.datetime(2026, 3, 3, 7, 59, tzinfo=dt.UTC)


def test_started_days_after_the_due_time():
    """One second late is a day; exactly 24 h late is still one; 24 h and a second is two."""
    assert days_late(DUE, DUE) == 0
    assert days_late(DUE - dt.timedelta(days=3), DUE) == 0
    assert days_late(DUE + dt.timedelta(seconds=1), DUE) == 1
    assert days_late(DUE + dt.timedelta(hours=24), DUE) == 1
    assert days_late(DUE + dt.timedelta(hours=24, seconds=1), DUE) == 2
    assert days_late(None, DUE) == 0 and days_late(DUE, None) == 0


def test_what_is_left_of_a_late_score():
    """1 - days x penalty, never below 0: 2 days at 0.1 leave 0.8, 12 days at 0.1 nothing."""
    assert late_factor(0, 0.1) == 1.0
    assert late_factor(2, 0.1) == pytest.approx(0.8)
    assert late_factor(3, 0.25) == pytest.approx(0.25)
    assert late_factor(12, 0.1) == 0.0


def test_due_times_and_bad_settings():
    assert parse_due("2026-03-02T23:59:00-08:00") == DUE
    assert parse_due("2026-03-03 07:59Z") == DUE
    assert parse_due("2026-03-03T07:59") == DUE  # no zone: UTC
    with pytest.raises(ValueError, match="due must be an ISO 8601"):
        parse_due("next Friday")
    with pytest.raises(ValueError, match="late_penalty_per_day must be a fraction from 0 to 1"):
        LatePolicy(DUE, 1.5)
    with pytest.raises(ValueError, match="late_penalty_per_day"):
        LatePolicy(DUE, float("nan"))
    with pytest.raises(ValueError, match="keep must be one of"):
        LatePolicy(DUE, 0.1, "first")
    with pytest.raises(ValueError, match="due must have a time zone"):
        LatePolicy(dt.datetime(2026, 3, 3), 0.1)


@dataclass
class _Row:
    """Stands in for the grader's Submission: the fields the policy reads and sets."""

    student: str
    file: str
    raw: float
    identity: Identity | None
    status: str = "ran"
    notes: list[str] = field(default_factory=list)
    late_factor: float = 1.0
    counted: bool = True
    duplicate_note: str = ""
    late_note: str = ""

    @property
    def total(self) -> float:
        return self.raw * self.late_factor


def _row(file: str, raw: float, at: dt.datetime | None, student: str = "s001", **extra) -> _Row:
    ident = Identity(student, submitted_at=at, time_source="file time", **extra)
    duplicate = "DUPLICATE student ID 's001': ..."
    return _Row(student, file, raw, ident, notes=[duplicate], duplicate_note=duplicate)


def test_keep_latest_counts_the_last_one_handed_in_and_penalises_it():
    early = _row("a.ipynb", 20, DUE - dt.timedelta(hours=1))
    late = _row("b.ipynb", 16, DUE + dt.timedelta(hours=30))  # 2 started days
    apply_policy([early, late], LatePolicy(DUE, 0.1, "latest"))
    assert (early.counted, late.counted) == (False, True)
    assert late.total == pytest.approx(16 * 0.8)
    assert early.notes[0] == "NOT COUNTED (--keep latest): b.ipynb counts for this ID"
    assert late.notes[0].startswith("COUNTED (--keep latest): 1 of 2")
    assert not any(n.startswith("DUPLICATE") for n in early.notes + late.notes)
    assert any(n.startswith("LATE 2 day(s)") and "x 0.8" in n for n in late.notes)
    assert any(n.startswith("on time") for n in early.notes)


def test_keep_best_counts_the_highest_total_after_the_penalty():
    """20 on time against 22 three days late at 0.1 (22 x 0.7 = 15.4): the on-time one."""
    on_time = _row("a.ipynb", 20, DUE)
    late = _row("b.ipynb", 22, DUE + dt.timedelta(days=2, hours=1))
    apply_policy([on_time, late], LatePolicy(DUE, 0.1, "best"))
    assert late.total == pytest.approx(22 * 0.7)
    assert (on_time.counted, late.counted) == (True, False)


def test_a_canvas_late_marker_without_a_late_time_counts_one_day():
    marked = _row(
        "x_LATE_1_2_s001_problems.ipynb", 10, DUE - dt.timedelta(days=1), late_marker=True
    )
    apply_policy([marked], LatePolicy(DUE, 0.25))
    assert marked.total == pytest.approx(7.5)
    assert "counted as 1 day" in " ".join(marked.notes)
    unpolicied = _row("y.ipynb", 10, None, late_marker=True)
    apply_policy([unpolicied], LatePolicy())
    assert unpolicied.total == 10 and "no --due given" in " ".join(unpolicied.notes)


def test_a_canvas_name_without_late_is_on_time_whatever_its_file_time():
    """Copied with cp two days after the due time: Canvas did not mark it LATE, so on time."""
    copied = _row("x_1_2_s001_problems.ipynb", 10, DUE + dt.timedelta(days=2), canvas_named=True)
    assert apply_policy([copied], LatePolicy(DUE, 0.25)) == []
    assert copied.total == 10
    assert copied.notes[-1].startswith("on time per Canvas's name (no LATE marker)")
    plain = _row("s001_problems.ipynb", 10, DUE + dt.timedelta(days=2))  # no Canvas name
    apply_policy([plain], LatePolicy(DUE, 0.25))
    assert plain.total == pytest.approx(5.0)  # 2 started days x 0.25 off: 10 x 0.5


def test_a_late_file_whose_time_cannot_be_the_hand_in_is_noted_and_counted_for_the_warning():
    """LATE with a file time after the run started (30 h after due: 2 days, 10 x 0.5 = 5),
    LATE before --due (1 day: 10 x 0.75 = 7.5), LATE 25 h after due and before the run (kept,
    not flagged: 2 days)."""
    started = DUE + dt.timedelta(hours=26)
    policy = LatePolicy(DUE, 0.25, run_started=started)
    future = _row("a_LATE_1_2_s001_problems.ipynb", 10, DUE + dt.timedelta(hours=30),
                  canvas_named=True, late_marker=True)  # fmt: skip
    early = _row("b_LATE_1_3_s002_problems.ipynb", 10, DUE - dt.timedelta(hours=1),
                 student="s002", canvas_named=True, late_marker=True)  # fmt: skip
    fine = _row("c_LATE_1_4_s003_problems.ipynb", 10, DUE + dt.timedelta(hours=25),
                student="s003", canvas_named=True, late_marker=True)  # fmt: skip
    odd = apply_policy([future, early, fine], policy)
    assert odd == [future.file, early.file]
    assert (future.total, early.total, fine.total) == (5.0, 7.5, 5.0)
    assert "after this grading run started" in future.notes[-1]
    assert "before --due although Canvas marked it LATE" in early.notes[-1]
    assert "not when it was handed in" not in fine.notes[-1]
    warning = implausible_times_warning(odd)
    assert warning.startswith("warning: 2 file(s) Canvas marked LATE")
    assert future.file in warning and implausible_times_warning([]) == ""


def test_rows_not_graded_for_their_identity_are_left_alone():
    mismatch = _row("m.ipynb", 0, DUE + dt.timedelta(days=5))
    mismatch.status = "ID mismatch"
    apply_policy([mismatch], LatePolicy(DUE, 0.5, "latest"))
    assert mismatch.late_factor == 1.0 and mismatch.counted


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--late-penalty-per-day", "2"], "late_penalty_per_day must be a fraction from 0 to 1"),
        (["--due", "friday"], "due must be an ISO 8601 date and time"),
    ],
)
def test_the_grader_refuses_a_bad_policy_before_grading(tmp_path, capsys, flags, message):
    """Exit status 2, the parameter and its range named, no CSV written."""
    (tmp_path / "s001.ipynb").write_text("{}")
    out = tmp_path / "grades.csv"
    assert main([str(tmp_path), "--out", str(out), "--no-sandbox", *flags]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
