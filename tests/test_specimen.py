"""The specimen and its assumptions table."""

import pytest

from lesson_lib.specimen import ASSUMPTIONS, FAST, GPU, MODEL, SLOW


def test_every_assumption_has_value_unit_and_source():
    """No row without a source or a shown value; names are unique."""
    names = [a.name for a in ASSUMPTIONS]
    assert len(names) == len(set(names))
    for a in ASSUMPTIONS:
        assert a.shown and a.unit and a.source
        assert a.value > 0


def test_latencies_are_labelled_as_assumptions():
    """The 10 and 50 us figures are the lesson's assumptions, not vendor figures."""
    rows = {a.name: a for a in ASSUMPTIONS}
    for fabric, name in ((FAST, "fast"), (SLOW, "slow")):
        row = rows[f"{name} fabric: one small all-reduce"]
        assert row.value == fabric.latency
        assert row.source.startswith("assumption")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("parameters", MODEL.params),
        ("hidden size", MODEL.hidden_size),
        ("accelerator memory", GPU.memory_bytes),
        ("HBM bandwidth", GPU.hbm_bandwidth),
    ],
)
def test_table_matches_the_objects(name, value):
    """The table is built from the same objects the model uses."""
    assert {a.name: a.value for a in ASSUMPTIONS}[name] == value
