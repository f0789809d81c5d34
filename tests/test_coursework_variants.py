"""Per-student variants: IDs are normalized, and seed the same numbers every time."""

import os
from pathlib import Path

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


SALT_A = "ab" * 32
SALT_B = "cd" * 32


def test_a_course_salt_is_mixed_into_the_seed_as_documented():
    """With a salt the seed is sha256(SALT / course salt / student / qid), first 16 bytes;
    without, sha256(SALT / student / qid): the public variants the pins hold."""
    import hashlib

    from lesson_lib.coursework.variants import SALT, salted

    def by_hand(text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")
        return np.random.default_rng(seed).integers(0, 2**32, size=4)

    with salted(SALT_A):
        salted_draw = rng_for("s1", "q3").integers(0, 2**32, size=4)
    np.testing.assert_array_equal(salted_draw, by_hand(f"{SALT}/{SALT_A}/s1/q3"))
    np.testing.assert_array_equal(
        rng_for("s1", "q3").integers(0, 2**32, size=4), by_hand(f"{SALT}/s1/q3")
    )
    with salted(SALT_B):
        other = rng_for("s1", "q3").integers(0, 2**32, size=4)
    assert not np.array_equal(salted_draw, other)


def test_salted_restores_the_salt_before_it():
    """The context manager leaves the process as it found it, even on an error."""
    from lesson_lib.coursework.variants import course_salt, salted, set_course_salt

    assert course_salt() is None
    with pytest.raises(RuntimeError), salted(SALT_A):
        assert course_salt() == SALT_A
        raise RuntimeError
    assert course_salt() is None
    set_course_salt(SALT_B)
    try:
        with salted(None):
            assert course_salt() is None
        assert course_salt() == SALT_B
    finally:
        set_course_salt(None)


@pytest.mark.parametrize("bad", ["", "ab" * 31, "AB" * 32, "zz" * 32, 7])
def test_a_salt_must_be_64_lower_case_hex_digits(bad):
    """Anything else is refused with a message naming the form."""
    from lesson_lib.coursework.variants import set_course_salt

    with pytest.raises(ValueError, match="course salt must be 64 lower-case hex digits"):
        set_course_salt(bad)


def test_the_salt_file_is_made_once_for_its_owner_only(tmp_path):
    """create_salt_file: 64 hex digits, mode 0600, kept when it exists; a file holding
    anything else is refused, naming the file."""
    from lesson_lib.coursework.variants import create_salt_file, read_salt_file

    path = tmp_path / "instructor" / "salt"
    salt = create_salt_file(path)
    assert len(salt) == 64 and set(salt) <= set("0123456789abcdef")
    assert path.stat().st_mode & 0o777 == 0o600
    assert create_salt_file(path) == salt == read_salt_file(path)
    assert create_salt_file(tmp_path / "other") != salt  # random, not derived
    bad = tmp_path / "bad"
    bad.write_text("hunter2\n")
    with pytest.raises(ValueError, match="bad: course salt must be"):
        read_salt_file(bad)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # once opened and waited on for a writer that never came
    with pytest.raises(ValueError, match=r"salt file '.*fifo' is a FIFO \(named pipe\)"):
        read_salt_file(fifo)
    bad.write_text("0" * 10_000)
    with pytest.raises(ValueError, match=r"salt file '.*bad' is larger than 128 bytes"):
        read_salt_file(bad)


def test_the_grader_finds_the_salt_file_given_named_or_default(tmp_path, monkeypatch):
    """--salt-file first, then $LESSON_COURSE_SALT_FILE ("" for none), then the default
    _build/instructor/salt when it exists in the working folder."""
    from lesson_lib.coursework.variants import SALT_FILE_ENV, salt_file_in_use

    monkeypatch.chdir(tmp_path)
    given = tmp_path / "given"
    monkeypatch.setenv(SALT_FILE_ENV, "")
    assert salt_file_in_use(given) == given
    assert salt_file_in_use() is None
    monkeypatch.setenv(SALT_FILE_ENV, str(tmp_path / "named"))
    assert salt_file_in_use() == tmp_path / "named"
    monkeypatch.delenv(SALT_FILE_ENV)
    assert salt_file_in_use() is None
    (tmp_path / "_build" / "instructor").mkdir(parents=True)
    (tmp_path / "_build" / "instructor" / "salt").write_text("x")
    assert salt_file_in_use() == Path("_build/instructor/salt")
