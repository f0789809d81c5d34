"""Tests of lesson_lib.lab.records: writing, reading, validating results files."""

from __future__ import annotations

import json
import stat

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib.lab.records import (
    FORMAT,
    ResultsError,
    load_reference,
    measurement_from_dict,
    measurement_to_dict,
    read_results,
    validate,
    write_results,
)


def sample(ranks: int = 2) -> dict:
    """A small valid results dictionary."""
    recs = [
        {"bytes": b, "median_s": 4e-6 + b / 2e9, "p10_s": 3.9e-6 + b / 2e9, "p90_s": 5e-6 + b / 2e9}
        for b in (8, 1024, 1 << 20)
    ]
    return {"format": FORMAT, "ranks": ranks, "records": recs, "started": "2026-01-02T03:04:05"}


def test_round_trip(tmp_path):
    """What is written reads back as the same numbers, readable by others (mode 644)."""
    path = write_results(tmp_path / "sub" / "r.json", sample())
    m = read_results(path)
    assert m.ranks == 2 and m.complete and m.path == str(path)
    assert_allclose(m.bytes, [8, 1024, 1 << 20])
    assert_allclose(m.algbw, m.bytes / m.median_s)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]  # no temporary left


def test_bus_bandwidth_uses_ring_factor():
    """For 4 ranks busbw is 1.5 x algbw."""
    m = measurement_from_dict(sample(4))
    assert_allclose(m.busbw, 1.5 * m.algbw)


def test_missing_spread_becomes_nan():
    """Records without p10/p90 (nccl-tests) read as NaN spreads."""
    data = sample()
    for r in data["records"]:
        r["p10_s"] = r["p90_s"] = None
    m = measurement_from_dict(data)
    assert np.all(np.isnan(m.p10_s)) and np.all(np.isnan(m.p90_s))


def test_empty_file(tmp_path):
    """An empty (or blank) file says it is empty and to run again."""
    for text in ("", "  \n"):
        p = tmp_path / "e.json"
        p.write_text(text)
        with pytest.raises(ResultsError, match="is empty"):
            read_results(p)


def test_truncated_file_names_line_and_column(tmp_path):
    """A truncated file is reported as corrupt with the position of the break."""
    p = tmp_path / "t.json"
    p.write_text(json.dumps(sample(), indent=1)[:150])
    with pytest.raises(ResultsError, match=r"not valid JSON \(line \d+, column \d+"):
        read_results(p)


def test_missing_file(tmp_path):
    """A missing file is a ResultsError, not a bare FileNotFoundError."""
    with pytest.raises(ResultsError, match="does not exist"):
        read_results(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="other"), "format is 'other'"),
        (lambda d: d.update(ranks=1), "'ranks' must be an integer from 2 to 4096"),
        (lambda d: d.update(records=[]), "non-empty list"),
        (
            lambda d: d["records"][1].update(median_s=-1.0),
            "record 1 needs a number 'median_s' from 1e-12 to 1e",
        ),
        (
            lambda d: d["records"][1].update(median_s=1e-320),
            "record 1 needs a number 'median_s' from 1e-12",
        ),
        (lambda d: d["records"][1].update(bytes=0.5), "record 1 needs a number 'bytes' from 1 "),
        (lambda d: d["records"][2].update(bytes=8), "record 2: sizes must be strictly ascending"),
        (lambda d: d["records"][0].update(p90_s=0), "record 0: 'p90_s' must be from 1e-12"),
        (lambda d: d["records"][0].update(p10_s=5e-324), "record 0: 'p10_s' must be from 1e-12"),
    ],
)
def test_validation_names_the_problem(change, message):
    """Each structural problem is reported with the record index and the field."""
    data = sample()
    change(data)
    with pytest.raises(ResultsError, match=message):
        validate(data)


def test_json_that_is_not_an_object(tmp_path):
    """A JSON list is rejected with what it is."""
    p = tmp_path / "l.json"
    p.write_text("[1, 2]")
    with pytest.raises(ResultsError, match="holds a JSON list"):
        read_results(p)


def test_shipped_references_load_and_are_labelled():
    """The reference sweeps ship with the package, complete, labelled with machine and date."""
    two, four = load_reference(2), load_reference(4)
    assert two.complete and two.ranks == 2 and len(two.bytes) == 24
    assert four.ranks == 4 and four.machine["oversubscribed"]
    assert "MPICH" in two.label() and "UTC" in two.label()
    with pytest.raises(ValueError, match="ranks must be one of"):
        load_reference(3)


def test_measurement_to_dict_round_trip():
    """A measurement converts back to file content that reads the same."""
    m = load_reference(2)
    again = measurement_from_dict(measurement_to_dict(m))
    assert_allclose(again.median_s, m.median_s)
    assert_allclose(again.p90_s, m.p90_s)
    assert again.machine == m.machine
