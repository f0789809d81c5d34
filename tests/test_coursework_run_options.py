"""lesson_lib.coursework.run_options: a regrade scores with the options of the full run."""

import dataclasses
import re

import pytest

from lesson_lib.coursework import run_options
from lesson_lib.coursework.run_options import (
    OptionsDiffer,
    _options_path,
    bank_fingerprint,
    describe,
    read_options,
    reconcile,
    record_options,
    salt_fingerprint,
)

FULL_RUN = {
    "roster": "/course/roster.csv",
    "due": "2026-03-01T23:59Z",
    "late_penalty_per_day": 0.1,
    "keep": "latest",
    "close_credit": 0.25,
    "salt": "0123456789abcdef",
}
NOTHING_GIVEN = dict.fromkeys(FULL_RUN) | {"salt": "0123456789abcdef"}
RECORDED = FULL_RUN | {"problems": bank_fingerprint()}


def test_the_options_are_kept_beside_the_grades_and_read_back(tmp_path):
    grades = tmp_path / "grades.csv"
    assert _options_path(grades) == tmp_path / "grades.options.json"
    assert read_options(grades) is None
    record_options(grades, FULL_RUN)
    assert read_options(grades) == RECORDED
    (tmp_path / "grades.options.json").write_text("[1, 2")
    assert read_options(grades) is None


def test_a_regrade_given_nothing_takes_every_option_of_the_full_run():
    assert reconcile(RECORDED, NOTHING_GIVEN) == FULL_RUN
    assert describe(FULL_RUN) == (
        "--roster /course/roster.csv, --due 2026-03-01T23:59Z, --late-penalty-per-day 0.1, "
        "--keep latest, --close-credit 0.25, the course salt"
    )


def test_a_regrade_given_the_same_option_is_fine_and_another_is_refused():
    assert reconcile(RECORDED, NOTHING_GIVEN | {"due": "2026-03-01T23:59Z"}) == FULL_RUN
    with pytest.raises(OptionsDiffer, match=r"--late-penalty-per-day 0.1 and this regrade has"):
        reconcile(RECORDED, NOTHING_GIVEN | {"late_penalty_per_day": 0.2})
    with pytest.raises(OptionsDiffer, match="another course salt"):
        reconcile(RECORDED, NOTHING_GIVEN | {"salt": None})


@pytest.mark.parametrize(
    "change",
    [
        {"rtol": 0.03},  # a tolerance
        {"points": 7.0},  # what the problem is worth
        {"reference": lambda p: 173.0},  # the answer's code
        {"mistakes": lambda p: []},  # its named mistakes
    ],
)
def test_a_regrade_under_a_bank_that_scores_otherwise_is_refused(monkeypatch, change):
    """A regrade after any change that scores q21 otherwise would mix two rules in one file."""
    before = bank_fingerprint()
    assert re.fullmatch("[0-9a-f]{16}", before) and bank_fingerprint() == before
    changed = dataclasses.replace(run_options.PROBLEMS["q21"], **change)
    monkeypatch.setitem(run_options.PROBLEMS, "q21", changed)
    assert bank_fingerprint() != before
    with pytest.raises(OptionsDiffer, match=f"problem bank {before} and this lesson_lib .* bank"):
        reconcile(FULL_RUN | {"problems": before}, NOTHING_GIVEN)


def test_grades_written_with_no_bank_recorded_are_not_regraded():
    with pytest.raises(OptionsDiffer, match=r"problem bank \(none\).*grade the whole class"):
        reconcile(FULL_RUN, NOTHING_GIVEN)


def test_the_salt_is_kept_as_a_fingerprint_only():
    """SHA-256 of "abc" begins ba7816bf8f01cfea (FIPS 180-2's first example)."""
    assert salt_fingerprint("abc") == "ba7816bf8f01cfea"
    assert salt_fingerprint(None) is None


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [("close_credit", "abc", "close_credit is abc, not float"), ("due", 5, "due is 5, not str")],
)
def test_a_recorded_option_of_another_type_is_an_error_naming_file_and_field(
    tmp_path, field, value, said
):
    grades = tmp_path / "grades.csv"
    record_options(grades, FULL_RUN | {field: value})
    with pytest.raises(ValueError, match=rf"grades\.options\.json: {said}$"):
        read_options(grades)
