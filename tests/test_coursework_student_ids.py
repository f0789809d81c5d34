"""Student IDs: plain ASCII after NFKC, invisible and bidirectional characters and Windows
device names refused, and the plain ID a refused name imitates."""

from __future__ import annotations

import pytest

from lesson_lib.coursework.student_ids import id_problem, normalize_student, skeleton

CYRILLIC_A = "\u0430"
ZERO_WIDTH_SPACE = "\u200b"
RIGHT_TO_LEFT_OVERRIDE = "\u202e"


def test_full_width_letters_and_digits_are_the_plain_id():
    """NFKC turns the full-width s001 (U+FF53 U+FF10 U+FF10 U+FF11) into s001."""
    assert normalize_student("\uff53\uff10\uff10\uff11") == "s001"
    assert normalize_student(" S001 ") == "s001"


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        (f"{CYRILLIC_A}001", "U+0430 CYRILLIC SMALL LETTER A"),
        (f"a001{ZERO_WIDTH_SPACE}", "invisible character, U+200B ZERO WIDTH SPACE"),
        ("a\u2060001", "invisible character, U+2060 WORD JOINER"),
        ("\ufeffa001", "invisible character, U+FEFF ZERO WIDTH NO-BREAK SPACE"),
        (f"{RIGHT_TO_LEFT_OVERRIDE}a001", "bidirectional control character, U+202E"),
        ("a\u2066001", "bidirectional control character, U+2066"),
        ("\u00e9001", "plain ASCII; it holds U+00E9"),
        ("s\u2028001", "U+2028 LINE SEPARATOR"),
    ],
)
def test_non_ascii_invisible_and_bidi_characters_are_named(bad, named):
    """Each refused character is named with its code point."""
    with pytest.raises(ValueError, match="student must be") as info:
        normalize_student(bad)
    assert named in str(info.value)


@pytest.mark.parametrize("name", ["con", "NUL", "aux", "prn", "com1", "LPT9", "con.backup"])
def test_names_windows_keeps_for_devices_are_refused(name):
    """A folder named con or nul cannot be unpacked on Windows."""
    with pytest.raises(ValueError, match="Windows keeps for a device"):
        normalize_student(name)
    assert normalize_student("console") == "console" and normalize_student("com10") == "com10"


def test_a_trailing_dot_is_refused():
    """Windows drops a trailing dot from a folder's name."""
    with pytest.raises(ValueError, match=r"not ending in '\.'"):
        normalize_student("s001.")
    assert normalize_student("s.001") == "s.001"


def test_a_long_text_is_refused_by_its_length():
    """A million characters: refused without normalising them."""
    with pytest.raises(ValueError, match="1,000,000 characters"):
        normalize_student("s" * 10**6)


@pytest.mark.parametrize(
    ("name", "looks_like"),
    [
        (f"{CYRILLIC_A}001", "a001"),
        (f"a001{ZERO_WIDTH_SPACE}", "a001"),
        (f"{RIGHT_TO_LEFT_OVERRIDE}A001", "a001"),
        ("\u00e1001", "a001"),  # an accent
        ("\u0455\u0435\u0441001", "sec001"),  # Cyrillic dze, ie, es
        ("\u039f\u03c1\u03b1", "opa"),  # Greek Omicron, rho, alpha
        ("s001", "s001"),
    ],
)
def test_skeleton_is_the_plain_id_a_name_looks_like(name, looks_like):
    """Accents, invisible characters and lookalike letters go; case is folded."""
    assert skeleton(name) == looks_like
    assert id_problem(looks_like) == ""
