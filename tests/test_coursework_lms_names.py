"""Canvas and Gradescope names, the notebook's metadata ID and the platforms' times, read back."""

import datetime as dt
import shutil
from pathlib import Path

import pytest

from lesson_lib.coursework.lms_names import (
    CanvasName,
    _parse_time,
    id_in_file_stem,
    is_gradescope_folder,
    metadata_student,
    parse_canvas_name,
    read_gradescope_export,
    read_gradescope_metadata,
)

DATA = Path(__file__).parent / "data" / "lms"


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        (
            "smithjane_12345_6789012_s001_problems",
            CanvasName("smithjane", False, "12345", "6789012", "s001_problems", 0),
        ),
        (
            "smithjane_LATE_12345_6789013_s001_problems-1",
            CanvasName("smithjane", True, "12345", "6789013", "s001_problems", 1),
        ),
        (
            "doejohn_12346_6789014_problems-12",
            CanvasName("doejohn", False, "12346", "6789014", "problems", 12),
        ),
        (
            "anon_k3Xq9_6789015_s001_problems",
            CanvasName("", False, "", "6789015", "s001_problems", 0, "k3Xq9"),
        ),
        (
            "m\u00fcllerj\u00fcrgen_LATE_12347_6789016_problems",
            CanvasName("m\u00fcllerj\u00fcrgen", True, "12347", "6789016", "problems", 0),
        ),
        ("s001_problems", None),
        ("s001", None),
        ("problems", None),
        ("smithjane_LATE_s001_problems", None),  # no user and attachment ids
    ],
)
def test_canvas_download_names(stem, expected):
    """Name, LATE marker, user id, attachment id, the uploaded stem and the -N resubmission."""
    assert parse_canvas_name(stem) == expected


@pytest.mark.parametrize(
    ("stem", "readings"),
    [
        ("evedoe_111_9_666_9005_s002_problems", ("111_9", "9_666", "666_9005")),
        ("frankx_777_9_LATE_777_9007_s001_problems", ("777_9", "LATE_777_9007")),
        ("smithjane_12345_6789012_111_9_s001_problems", ("12345_6789012", "6789012_111", "111_9")),
        ("anon_k3xq9_6789015_12_34_problems", ("anon_k3xq9_6789015", "6789015_12", "12_34")),
    ],
)
def test_a_canvas_name_that_reads_more_than_one_way_lists_every_reading(stem, readings):
    """The name part (Canvas drops ``_<digits>_`` before spaces: ``Doe_111 _9`` is ``doe_111_9``)
    and the uploaded name are the student's; ``LATE`` is upper case, the name part never is."""
    assert parse_canvas_name(stem).ambiguous == readings


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("s001_problems", ("s001", True)),
        ("S001_Problems", ("S001", True)),
        ("problems", (None, True)),
        ("s001", ("s001", False)),
        ("my_id_problems", ("my_id", True)),
        ("_problems", ("_problems", False)),
    ],
)
def test_the_id_a_file_stem_carries(stem, expected):
    assert id_in_file_stem(stem) == expected


def test_gradescope_folders_are_recognised():
    assert is_gradescope_folder("submission_301245")
    assert not is_gradescope_folder("s001")
    assert not is_gradescope_folder("submission_")


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"lesson": {"student_id": "S001 "}}, "s001"),
        ({"lesson": {"student_id": 1}}, None),  # not a string: not trusted
        ({"lesson": {"student_id": "\u0430001"}}, None),  # a Cyrillic a: not an ID
        ({"lesson": "s001"}, None),
        ({}, None),
    ],
)
def test_the_metadata_id_is_read_only_when_it_is_a_valid_id(metadata, expected):
    assert metadata_student({"metadata": metadata, "cells": []}) == expected
    assert metadata_student("not a notebook") is None


def test_times_as_gradescope_writes_them():
    """ISO 8601 with microseconds, the YAML export's nanoseconds and spaced zone, no zone = UTC."""
    minus7 = dt.timezone(dt.timedelta(hours=-7))
    assert _parse_time("2018-07-01T14:22:32.365935-07:00") == dt.datetime(
        2018, 7, 1, 14, 22, 32, 365935, minus7
    )
    assert _parse_time("2018-07-01 14:22:32.365935000 -07:00") == dt.datetime(
        2018, 7, 1, 14, 22, 32, 365935, minus7
    )
    assert _parse_time("2018-07-01T21:22:32Z") == dt.datetime(2018, 7, 1, 21, 22, 32, tzinfo=dt.UTC)
    assert _parse_time("2018-07-01 21:22:32") == dt.datetime(2018, 7, 1, 21, 22, 32, tzinfo=dt.UTC)
    assert _parse_time("yesterday") is None and _parse_time(12) is None


def test_a_gradescope_export_maps_folders_to_submitters_and_times(tmp_path):
    """The hand-written export metadata: users (sid, e-mail), names and created_at, by folder."""
    shutil.copy(DATA / "gradescope_submission_metadata.yml", tmp_path / "submission_metadata.yml")
    found = read_gradescope_export(tmp_path)
    assert sorted(found) == ["submission_301245", "submission_301246"]
    dana = found["submission_301245"]
    assert dana.users == ("12350", "dana.fox@example.edu")
    assert dana.names == ("Dana Fox",)
    # 09:15:42 at -08:00 is 17:15:42 UTC
    assert dana.created_at == dt.datetime(2026, 3, 1, 17, 15, 42, 123456, tzinfo=dt.UTC)
    assert read_gradescope_export(tmp_path / "elsewhere") == {}


def test_a_broken_export_metadata_is_an_error_naming_the_file(tmp_path):
    (tmp_path / "submission_metadata.yml").write_text("- a list\n- not a mapping\n")
    with pytest.raises(ValueError, match=r"submission_metadata\.yml must map"):
        read_gradescope_export(tmp_path)
    (tmp_path / "submission_metadata.yml").write_text("a: [unclosed\n")
    with pytest.raises(ValueError, match="is not YAML"):
        read_gradescope_export(tmp_path)


def test_an_autograders_submission_metadata():
    """The fields Gradescope's documentation shows that the grader reads: created_at, users."""
    record = read_gradescope_metadata(
        {
            "id": 123456,
            "created_at": "2018-07-01T14:22:32.365935-07:00",
            "assignment": {"due_date": "2018-07-31T23:00:00.000000-07:00", "title": "PS"},
            "users": [{"email": "Student@Example.com", "id": 1234, "name": "Student User"}],
        }
    )
    assert record.users == ("student@example.com", "1234")
    assert record.names == ("Student User",)
    assert record.created_at == dt.datetime(2018, 7, 1, 21, 22, 32, 365935, tzinfo=dt.UTC)
    assert read_gradescope_metadata(None).users == ()


def test_a_gradescope_export_nested_too_deeply_is_an_error_naming_the_file(tmp_path):
    (tmp_path / "submission_metadata.yml").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(
        ValueError, match=r"submission_metadata\.yml is not YAML: maximum recursion"
    ):
        read_gradescope_export(tmp_path)


def test_a_gradescope_export_is_parsed_once_while_unchanged(tmp_path, monkeypatch):
    """Read three times (as a run does), the YAML is parsed once; rewritten, it is parsed again."""
    import yaml

    calls = []
    real = yaml.load
    monkeypatch.setattr(yaml, "load", lambda *a, **k: calls.append(1) or real(*a, **k))
    metadata = tmp_path / "submission_metadata.yml"
    shutil.copy(DATA / "gradescope_submission_metadata.yml", metadata)
    first = [read_gradescope_export(tmp_path) for _ in range(3)]
    assert len(calls) == 1 and first[0] == first[2]
    metadata.write_text("submission_1:\n  submitters: []\n")
    assert sorted(read_gradescope_export(tmp_path)) == ["submission_1"] and len(calls) == 2
