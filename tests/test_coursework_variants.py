"""Per-student variants: IDs are normalized, and seed the same numbers every time."""

import numpy as np
import pytest

from lesson_lib.coursework.variants import normalize_student, pick, rng_for, shuffled


def test_no_id_means_book_version():
    """None and blank strings mean "no student": the book's numbers."""
    assert normalize_student(None) is None
    assert normalize_student("") is None
    assert normalize_student("   ") is None


def test_ids_ignore_case_and_spaces():
    """' S123 ' and 's123' are the same student; integers become strings."""
    assert normalize_student(" S123 ") == "s123"
    assert normalize_student(42) == "42"


@pytest.mark.parametrize("bad", ["a b", "x/../y", "-lead", "é", "a" * 65])
def test_malformed_ids_are_rejected(bad):
    """An ID also names a folder: only letters, digits, '.', '_' and '-' are allowed."""
    with pytest.raises(ValueError, match="student must be"):
        normalize_student(bad)


@pytest.mark.parametrize("bad", [True, 1.5, ["s1"]])
def test_non_string_ids_are_type_errors(bad):
    """Booleans, floats and lists are not IDs."""
    with pytest.raises(TypeError, match="student must be"):
        normalize_student(bad)


def test_same_id_same_draws_different_ids_differ():
    """The generator depends only on (ID, problem), so draws repeat exactly."""
    a = rng_for("s1", "q3").integers(0, 2**32, size=4)
    b = rng_for("s1", "q3").integers(0, 2**32, size=4)
    c = rng_for("s2", "q3").integers(0, 2**32, size=4)
    d = rng_for("s1", "q4").integers(0, 2**32, size=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, d)


def test_pick_and_shuffled_return_plain_values():
    """pick returns an element of the choices; shuffled a permutation of plain ints."""
    rng = rng_for("s1", "q1")
    assert pick(rng, (3, 5, 8)) in (3, 5, 8)
    order = shuffled(rng, 4)
    assert sorted(order) == [0, 1, 2, 3]
    assert all(type(i) is int for i in order)
