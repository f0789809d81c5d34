"""lesson_lib.coursework.grading: the flags raised across a folder's rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.grading import _flag_imitations, _passes_for
from lesson_lib.coursework.status import Status
from lesson_lib.coursework.student_ids import skeleton


@pytest.mark.parametrize(
    ("name", "ids", "passes_for"),
    [
        ("s0\u04bb1", {"s0h1", "s001"}, "s0h1"),  # Cyrillic shha, in no table
        ("S0\u02611", {"s0g1", "s0h2"}, "s0g1"),  # Latin script g: Latin, but not ASCII
        ("\u03f2s01", {"cs01"}, "cs01"),  # Greek lunate sigma
        ("\u0430001", set(), "a001"),  # a Cyrillic a, in the table: named without its row
        ("jo\u04bbn", {"john", "joan"}, ""),  # passes for two: not one ID
        ("\u0438\u0432\u0430\u043d", {"abcd"}, ""),  # a name in another script, not a mix
        ("s0\u20ac1", {"s0e1"}, ""),  # a euro sign is no letter
    ],
)
def test_a_mixed_script_name_passes_for_the_one_id_it_matches(name, ids, passes_for):
    """A letter outside ASCII among ASCII ones stands for any ASCII letter: a look-alike no table
    lists still names the classmate's ID it was made to pass for."""
    assert _passes_for(skeleton(name), ids) == passes_for


def test_a_look_alike_no_table_lists_is_flagged_on_both_rows():
    """s0h1 with a Cyrillic shha beside the real s0h1: the impostor row names s0h1 and its file,
    the real row names the impostor's file."""
    real = Submission(student="s0h1", path=Path("s0h1.ipynb"), file="s0h1.ipynb")
    fake = Submission(student="s0\\u04bb1", path=Path("x.ipynb"), file="s0\u04bb1.ipynb")
    fake.status, fake.looks_like = Status.INVALID_ID, skeleton("s0\u04bb1")
    assert list(_flag_imitations([real, fake])) == ["s0h1"]
    assert fake.notes[0] == "IMITATES student ID 's0h1' (s0h1.ipynb)"
    assert (
        real.notes[0]
        == "IMITATED: 's0\\u04bb1.ipynb' has a name that looks like this ID but is not it"
    )
