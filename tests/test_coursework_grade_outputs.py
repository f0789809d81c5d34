"""lesson_lib.coursework.grade_outputs: the grader's writing step, called without grading."""

import csv
import json
from pathlib import Path

import pytest

from lesson_lib.coursework.check import check
from lesson_lib.coursework.files import manifest_of, output_set
from lesson_lib.coursework.grade_outputs import (
    OutputRefused,
    Outputs,
    Run,
    report,
    write_for_people,
    write_grades,
)
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.late_policy import LatePolicy
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.run_options import DEFAULTS, bank_fingerprint


def _blank(student: str, **kw) -> Submission:
    """A notebook that ran with every answer left empty."""
    sub = Submission(student, Path(f"{student}.ipynb"), file=f"{student}.ipynb", **kw)
    sub.graded_as = student
    sub.results = {q: check(q, None) for q in PROBLEMS}
    return sub


def _run() -> Run:
    """A full run with the default options and no roster."""
    return Run(None, LatePolicy(), dict(DEFAULTS), [], None)


def test_a_full_run_writes_the_grades_options_and_feedback(tmp_path, capsys):
    """Two blank notebooks: grades.csv holds a row each, the options file the defaults, and
    feedback/ beside it a page each; stdout says where each went."""
    out = tmp_path / "grades.csv"
    outputs = Outputs(folder=tmp_path, out=out, details=tmp_path / "details.csv")
    subs = [_blank("s001"), _blank("s002")]
    run = _run()
    write_grades(outputs, run, subs)
    write_for_people(outputs, run, subs)
    with out.open(newline="") as fh:
        assert [row["student"] for row in csv.DictReader(fh)] == ["s001", "s002"]
    recorded = json.loads((tmp_path / "grades.options.json").read_text())
    assert recorded == DEFAULTS | {"problems": bank_fingerprint()}
    assert sorted(p.suffix for p in (tmp_path / "feedback").iterdir()) == [".html", ".html"]
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        f"wrote {out}",
        f"wrote {tmp_path / 'details.csv'}",
        f"wrote 2 feedback file(s) into {tmp_path / 'feedback'}",
    ]


def test_a_manual_import_that_cannot_be_merged_is_refused_and_the_set_not_written(tmp_path):
    """An empty --manual-import folder: OutputRefused with the grader's message, and the set the
    grades were written into is not moved into place (no grades file)."""
    empty = tmp_path / "ta"
    empty.mkdir()
    out = tmp_path / "grades.csv"
    subs = [_blank("s001")]
    with pytest.raises(OutputRefused, match=r"^--manual-import: .* holds none of the exported"):
        with output_set(manifest_of(out), [tmp_path]):
            write_grades(Outputs(folder=tmp_path, out=out, manual_import=empty), _run(), subs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ta"]


def test_report_names_duplicates_shared_ids_and_lookups(capsys):
    """Two counted copies of s001, one of an ID two users handed in, one asking for answers:
    one warning each, the shared one's files separated by '; '."""
    subs = [
        _blank("s001"),
        _blank("S001"),
        _blank("s002", id_shared=True),
        _blank("s003", id_shared=True),
        _blank("s004", answer_lookup=True),
    ]
    report(subs, LatePolicy())
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "warning: duplicate student IDs, every copy graded and flagged in the notes "
        "(--keep latest or best picks one): s001",
        "warning: 2 submission(s) of an ID that two platform users handed in, not graded "
        "(see the notes): 's002.ipynb'; 's003.ipynb'",
        "warning: 1 submission(s) call reference(), solution_text() or the problem bank "
        "(see the notes): 's004.ipynb'",
    ]
