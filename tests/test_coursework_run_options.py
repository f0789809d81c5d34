"""lesson_lib.coursework.run_options: a regrade scores with the options of the full run."""

import pytest

from lesson_lib.coursework.run_options import (
    OptionsDiffer,
    _options_path,
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


def test_the_options_are_kept_beside_the_grades_and_read_back(tmp_path):
    grades = tmp_path / "grades.csv"
    assert _options_path(grades) == tmp_path / "grades.options.json"
    assert read_options(grades) is None
    record_options(grades, FULL_RUN)
    assert read_options(grades) == FULL_RUN
    (tmp_path / "grades.options.json").write_text("[1, 2")
    assert read_options(grades) is None


def test_a_regrade_given_nothing_takes_every_option_of_the_full_run():
    assert reconcile(FULL_RUN, NOTHING_GIVEN) == FULL_RUN
    assert describe(FULL_RUN) == (
        "--roster /course/roster.csv, --due 2026-03-01T23:59Z, --late-penalty-per-day 0.1, "
        "--keep latest, --close-credit 0.25, the course salt"
    )


def test_a_regrade_given_the_same_option_is_fine_and_another_is_refused():
    assert reconcile(FULL_RUN, NOTHING_GIVEN | {"due": "2026-03-01T23:59Z"}) == FULL_RUN
    with pytest.raises(OptionsDiffer, match=r"--late-penalty-per-day 0.1 and this regrade has"):
        reconcile(FULL_RUN, NOTHING_GIVEN | {"late_penalty_per_day": 0.2})
    with pytest.raises(OptionsDiffer, match="another course salt"):
        reconcile(FULL_RUN, NOTHING_GIVEN | {"salt": None})


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
