"""Whose notebook: file name, metadata and roster compared (no kernel: nothing is run here),
and a simulated class handed in through Canvas and Gradescope, graded end to end."""

import csv
import datetime as dt
import json
import os
import shutil
from pathlib import Path

import nbformat
import pytest
from sandbox_support import need_sandbox
from set_points import SET_POINTS

from lesson_lib.coursework.grade import main
from lesson_lib.coursework.identity import identify
from lesson_lib.coursework.lms_names import read_gradescope_export
from lesson_lib.coursework.problems import reference
from lesson_lib.coursework.roster import read_roster
from lesson_lib.coursework.status import Status
from lesson_lib.coursework.student_edition import write_edition
from lesson_lib.coursework.submissions import find_submissions

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "lms"


def _notebook(path: Path, student: str | None = None) -> Path:
    """A tiny notebook, with the edition's metadata ID when ``student`` is given."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("answer_q1 = None")]
    if student is not None:
        nb.metadata["lesson"] = {"student_id": student}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def _identities(folder: Path, roster=None) -> dict:
    export = read_gradescope_export(folder)
    return {e.file: identify(e, roster=roster, export=export) for e in find_submissions(folder)}


def test_names_and_metadata_that_agree_give_the_id(tmp_path):
    _notebook(tmp_path / "s001" / "s001_problems.ipynb", "s001")
    _notebook(tmp_path / "s002.ipynb")  # an older edition: no metadata
    _notebook(tmp_path / "smithjane_12345_6789012_s003_problems.ipynb", "s003")
    _notebook(tmp_path / "problems.ipynb", "s004")  # renamed by the student
    found = _identities(tmp_path)
    assert {f: (i.student, i.status) for f, i in found.items()} == {
        "s001/s001_problems.ipynb": ("s001", None),
        "s002.ipynb": ("s002", None),
        "smithjane_12345_6789012_s003_problems.ipynb": ("s003", None),
        "problems.ipynb": ("s004", None),
    }
    assert found["smithjane_12345_6789012_s003_problems.ipynb"].lms_user == "12345"
    assert "identified by the notebook's metadata as 's004'" in found["problems.ipynb"].notes


def test_disagreeing_names_metadata_or_roster_are_an_id_mismatch(tmp_path):
    """Each pair that can disagree: file vs metadata, folder vs file, roster vs the rest."""
    _notebook(tmp_path / "s001_problems.ipynb", "s002")
    _notebook(tmp_path / "s003" / "s004_problems.ipynb")
    _notebook(tmp_path / "leeanna_12347_6789014_s001_problems.ipynb", "s001")  # 12347 is s003
    found = _identities(tmp_path, read_roster(DATA / "roster.csv"))
    assert {f: i.status for f, i in found.items()} == dict.fromkeys(found, Status.ID_MISMATCH)
    notes = " ".join(found["leeanna_12347_6789014_s001_problems.ipynb"].notes)
    assert "the roster (user 12347) says 's003'" in notes and "file name says 's001'" in notes


def test_no_id_anywhere_or_an_id_off_the_roster_is_unknown(tmp_path):
    _notebook(tmp_path / "problems.ipynb")
    _notebook(tmp_path / "s999_problems.ipynb", "s999")
    found = _identities(tmp_path, read_roster(DATA / "roster.csv"))
    assert found["problems.ipynb"].status == Status.UNKNOWN_ID
    assert found["problems.ipynb"].student == ""
    assert found["s999_problems.ipynb"].status == Status.UNKNOWN_ID
    assert "'s999'" in " ".join(found["s999_problems.ipynb"].notes)
    without_roster = _identities(tmp_path)
    assert without_roster["s999_problems.ipynb"].status is None  # no roster: any valid ID


def test_a_name_that_is_not_an_id_is_left_to_the_graders_own_check(tmp_path):
    """The Cyrillic impostor keeps its raw name (the grader marks it invalid ID)."""
    _notebook(tmp_path / "\u0430001.ipynb", "a001")
    (ident,) = _identities(tmp_path).values()
    assert (ident.student, ident.status) == ("\u0430001", None)


def test_a_gradescope_export_is_identified_by_its_metadata_and_the_roster(tmp_path):
    """The folder submission_<n> is not an ID; the file, the metadata and the sid are."""
    shutil.copy(DATA / "gradescope_submission_metadata.yml", tmp_path / "submission_metadata.yml")
    _notebook(tmp_path / "submission_301245" / "problems.ipynb", "s006")
    _notebook(tmp_path / "submission_301246" / "s005_problems.ipynb", "s005")
    found = _identities(tmp_path, read_roster(DATA / "roster.csv"))
    dana = found["submission_301245/problems.ipynb"]
    assert (dana.student, dana.status, dana.lms_user) == ("s006", None, "12350")
    assert dana.submitted_at == dt.datetime(2026, 3, 1, 17, 15, 42, 123456, tzinfo=dt.UTC)
    assert dana.time_source == "Gradescope created_at"
    carl = found["submission_301246/s005_problems.ipynb"]
    assert (carl.student, carl.status) == ("s005", None)  # by e-mail: his sid is not the LMS id


def test_a_renamed_notebook_is_graded_when_its_other_sources_agree(tmp_path):
    """'Problems FINAL.ipynb' names nobody: the metadata's s004, on the roster, is the ID, with a
    note; a metadata ID not on the roster is unknown; with no other source it is invalid."""
    roster = read_roster(DATA / "roster.csv")
    _notebook(tmp_path / "Problems FINAL.ipynb", "s004")
    (final,) = _identities(tmp_path, roster).values()
    assert (final.student, final.status) == ("s004", None)
    assert "the file name 'Problems FINAL' is not an ID: left out" in final.notes
    _notebook(tmp_path / "Problems FINAL.ipynb", "s999")
    (stranger,) = _identities(tmp_path, roster).values()
    assert stranger.status == Status.UNKNOWN_ID
    _notebook(tmp_path / "Problems FINAL.ipynb")
    (nobody,) = _identities(tmp_path, roster).values()
    assert (nobody.student, nobody.status) == ("Problems FINAL", None)  # the grader's invalid ID


def test_a_renamed_notebook_in_a_gradescope_export_is_its_submitters(tmp_path):
    """A Gradescope export's folder holding only 'Problems FINAL.ipynb': the folder's one notebook
    is the problem set, and Dana's sid (s006 on the roster) and the metadata agree on s006."""
    shutil.copy(DATA / "gradescope_submission_metadata.yml", tmp_path / "submission_metadata.yml")
    _notebook(tmp_path / "submission_301245" / "Problems FINAL.ipynb", "s006")
    (dana,) = _identities(tmp_path, read_roster(DATA / "roster.csv")).values()
    assert (dana.student, dana.status, dana.lms_user) == ("s006", None, "12350")


def test_canvas_late_marker_and_resubmission_are_kept(tmp_path):
    path = _notebook(tmp_path / "doejohn_LATE_12346_6789016_s002_problems-2.ipynb", "s002")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    (ident,) = _identities(tmp_path).values()
    assert (ident.student, ident.late_marker, ident.resubmission) == ("s002", True, 2)
    assert ident.submitted_at == dt.datetime.fromtimestamp(1_700_000_000, dt.UTC)
    assert ident.time_source == "file time"


def test_a_canvas_upload_named_as_the_student_liked_is_identified_by_metadata_and_user(tmp_path):
    """Canvas user 12349 is s005 on the roster; the metadata says s005; the uploaded part
    ('My problems FINAL', 'Untitled') is the student's own file name, not an ID."""
    roster = read_roster(DATA / "roster.csv")
    _notebook(tmp_path / "poecarl_12349_6789099_My problems FINAL.ipynb", "s005")
    _notebook(tmp_path / "poecarl_12349_6789100_Untitled.ipynb", "s005")
    _notebook(tmp_path / "poecarl_12349_6789101_Untitled-1.ipynb", "s004")  # someone else's
    _notebook(tmp_path / "roebob_12348_6789102_s004.ipynb")  # older edition: no metadata
    found = _identities(tmp_path, roster)
    final = found["poecarl_12349_6789099_My problems FINAL.ipynb"]
    assert (final.student, final.status, final.lms_user) == ("s005", None, "12349")
    notes = " ".join(final.notes)
    assert "'My problems FINAL', which holds no student ID" in notes
    assert "identified by the notebook's metadata and the roster (user 12349) as 's005'" in notes
    assert (found["poecarl_12349_6789100_Untitled.ipynb"].student, "") == ("s005", "")
    assert found["poecarl_12349_6789100_Untitled.ipynb"].status is None
    assert found["poecarl_12349_6789101_Untitled-1.ipynb"].status == Status.ID_MISMATCH
    bare = found["roebob_12348_6789102_s004.ipynb"]  # the roster names 12348 as s004 too
    assert (bare.student, bare.status) == ("s004", None)
    without_roster = _identities(tmp_path)
    assert without_roster["poecarl_12349_6789099_My problems FINAL.ipynb"].student == "s005"
    alone = without_roster["roebob_12348_6789102_s004.ipynb"]  # nothing else names anyone
    assert (alone.student, alone.status) == ("s004", None)
    assert "the uploaded name 's004' is the ID" in " ".join(alone.notes)


def test_a_canvas_upload_with_no_id_anywhere_is_unknown_not_invalid(tmp_path):
    _notebook(tmp_path / "petrovivan_12349_6789099_My problems FINAL.ipynb")
    (ident,) = _identities(tmp_path).values()
    assert (ident.student, ident.status) == ("", Status.UNKNOWN_ID)


def _roster(folder: Path, *rows: str) -> object:
    path = folder / "roster.csv"
    path.write_text("lms_user_id,name,section,student_id\n" + "\n".join(rows) + "\n")
    return read_roster(path)


def test_a_canvas_name_that_reads_two_ways_is_a_mismatch_not_the_other_students(tmp_path):
    """Canvas drops ``_<digits>_`` from a sortable name before it drops spaces: 'Eve, Doe_111 _9'
    (user 666) downloads as evedoe_111_9_666_..., which also reads as user 111, file 9; and
    'Frank, X_777 _9_LATE' hides the LATE marker after a name that ends in user 777's own id."""
    roster = _roster(
        tmp_path, '111,"Victim, Vic",S1,s002', '666,"Doe, Eve",S1,s006', '777,"X, Frank",S1,s007'
    )
    folder = tmp_path / "in"
    _notebook(folder / "evedoe_111_9_666_9005_Untitled.ipynb")  # a blank notebook
    _notebook(folder / "frankx_777_9_LATE_777_9007_Untitled.ipynb", "s007")
    found = _identities(folder, roster)
    eve = found["evedoe_111_9_666_9005_Untitled.ipynb"]
    assert (eve.status, eve.lms_user) == (Status.ID_MISMATCH, "")
    assert "reads as user_file 111_9 or 9_666 or 666_9005" in " ".join(eve.notes)
    frank = found["frankx_777_9_LATE_777_9007_Untitled.ipynb"]
    assert frank.status == Status.ID_MISMATCH
    assert "reads as user_file 777_9 or LATE_777_9007" in " ".join(frank.notes)


def test_a_canvas_name_part_that_is_not_the_rosters_name_for_the_user_is_a_mismatch(tmp_path):
    """The roster's name, lower case with letters and digits only, in either order; a blank name
    is not compared."""
    roster = _roster(
        tmp_path, '12345,"Smith, Jane",S1,s001', "12346,John Doe,S1,s002", "12347,,S1,s003"
    )
    folder = tmp_path / "in"
    _notebook(folder / "leeanna_12345_6789012_s001_problems.ipynb", "s001")
    _notebook(folder / "doejohn_12346_6789013_s002_problems.ipynb", "s002")
    _notebook(folder / "anyone_12347_6789014_s003_problems.ipynb", "s003")
    found = _identities(folder, roster)
    forged = found["leeanna_12345_6789012_s001_problems.ipynb"]
    assert forged.status == Status.ID_MISMATCH
    assert "the Canvas name 'leeanna', not the roster's 'Smith, Jane'," in " ".join(forged.notes)
    assert found["doejohn_12346_6789013_s002_problems.ipynb"].status is None
    assert found["anyone_12347_6789014_s003_problems.ipynb"].status is None


# --- a simulated class, graded as make grade does -------------------------------------------

DUE = "2026-03-02T23:59:00-08:00"


def _fill(path: Path, student: str) -> None:
    """Every answer right for ``student``'s variant, typed as a student would."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "answer":
            qid = cell.source.split("=")[0].strip()[len("answer_") :]
            cell.source = f"answer_{qid} = {reference(qid, student)!r}"
    nbformat.write(nb, path)


def _at(path: Path, when: str) -> None:
    stamp = dt.datetime.fromisoformat(when).timestamp()
    os.utime(path, (stamp, stamp))


@pytest.fixture(scope="module")
def simulated_class(tmp_path_factory):
    """Six students handed in through Canvas's and Gradescope's names (one under the student's
    own file name), plain problems.ipynb, a resubmission, a mismatched and two unknown IDs; graded with the roster, a late policy
    and the Canvas gradebook export."""
    need_sandbox()
    edition = tmp_path_factory.mktemp("edition")
    ids = ["s001", "s002", "s003", "s004", "s005", "s006"]
    write_edition(edition, ROOT, ids, ["problems"])
    hand_in = tmp_path_factory.mktemp("hand_in")

    def copy(student: str, name: str, right: bool = True, when: str = "2026-03-01T12:00:00Z"):
        target = hand_in / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(edition / student / f"{student}_problems.ipynb", target)
        if right:
            _fill(target, student)
        _at(target, when)
        return target

    copy("s001", "smithjane_12345_6789012_s001_problems.ipynb")
    copy("s002", "doejohn_12346_6789010_s002_problems.ipynb", right=False)
    # the resubmission: all right, a day and a bit after the due time
    copy("s002", "doejohn_LATE_12346_6789013_s002_problems-1.ipynb", when="2026-03-04T09:00:00Z")
    copy("s003", "leeanna_12347_6789014_problems.ipynb")  # uploaded as plain problems.ipynb
    copy("s004", "problems.ipynb")  # collected by hand, renamed by the student
    # uploaded under the student's own file name, copied with cp days after the due time;
    # Canvas did not mark it LATE, so it is on time
    copy("s005", "poecarl_12349_6789099_My problems FINAL.ipynb", when="2026-03-05T00:00:00Z")
    mismatch = copy("s005", "s005_problems.ipynb")
    nb = json.loads(mismatch.read_text())
    nb["metadata"]["lesson"]["student_id"] = "s006"  # someone else's notebook, renamed
    mismatch.write_text(json.dumps(nb))
    unknown = copy("s001", "problems (1).ipynb")
    nb = json.loads(unknown.read_text())
    del nb["metadata"]["lesson"]  # no ID anywhere
    unknown.write_text(json.dumps(nb))
    copy("s001", "s999_problems.ipynb")  # metadata s001, name s999: a mismatch
    shutil.copy(DATA / "gradescope_submission_metadata.yml", hand_in / "submission_metadata.yml")
    copy("s006", "submission_301245/s006_problems.ipynb")
    out = tmp_path_factory.mktemp("out")
    args = [
        str(hand_in),
        *("--out", str(out / "grades.csv"), "--timeout", "600"),
        *("--roster", str(DATA / "roster.csv"), "--due", DUE),
        *("--late-penalty-per-day", "0.25", "--keep", "latest"),
        *("--canvas-gradebook", str(DATA / "canvas_gradebook_export.csv")),
    ]
    assert main(args) == 0
    with (out / "grades.csv").open() as fh:
        rows = {row["file"]: row for row in csv.DictReader(fh)}
    with (out / "canvas-import.csv").open() as fh:
        canvas = list(csv.reader(fh))
    return rows, canvas


@pytest.mark.slow
def test_every_row_of_the_class_has_the_status_and_score_it_should(simulated_class):
    rows, _ = simulated_class
    full = SET_POINTS
    expected = {
        "smithjane_12345_6789012_s001_problems.ipynb": ("s001", "ran", full),
        # the earlier copy, which --keep latest does not pick
        "doejohn_12346_6789010_s002_problems.ipynb": ("s002", Status.NOT_COUNTED, 0),
        # due 2026-03-03 07:59 UTC, handed in 2026-03-04 09:00 UTC: 25 h late = 2 started days,
        # 1 - 2 x 0.25 = 0.5 of the full score
        "doejohn_LATE_12346_6789013_s002_problems-1.ipynb": ("s002", "ran", full * 0.5),
        "leeanna_12347_6789014_problems.ipynb": ("s003", "ran", full),
        "problems.ipynb": ("s004", "ran", full),
        "poecarl_12349_6789099_My problems FINAL.ipynb": ("s005", "ran", full),
        "s005_problems.ipynb": ("s005", Status.ID_MISMATCH, 0),
        "problems (1).ipynb": ("problems", Status.UNKNOWN_ID, 0),
        "s999_problems.ipynb": ("s999", Status.ID_MISMATCH, 0),
        "submission_301245/s006_problems.ipynb": ("s006", "ran", full),
    }
    got = {f: (r["student"], r["status"], float(r["total"])) for f, r in rows.items()}
    assert got == expected
    late = rows["doejohn_LATE_12346_6789013_s002_problems-1.ipynb"]["notes"]
    assert "COUNTED (--keep latest)" in late and "LATE 2 day(s)" in late and "x 0.5" in late
    first = rows["doejohn_12346_6789010_s002_problems.ipynb"]["notes"]
    assert first.startswith("NOT COUNTED (--keep latest)")
    assert "on time" in rows["submission_301245/s006_problems.ipynb"]["notes"]
    final = rows["poecarl_12349_6789099_My problems FINAL.ipynb"]["notes"]
    assert "on time per Canvas's name" in final and "holds no student ID" in final


@pytest.mark.slow
def test_the_canvas_import_file_matches_the_gradebook_export(simulated_class):
    """The export's five identity columns and points row, one column filled by Canvas ID;
    the test student is left empty (s005's mismatched copy counts for nothing, his Canvas
    upload fills his cell)."""
    _, canvas = simulated_class
    full = f"{SET_POINTS:g}"
    assert canvas == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Problem set (987654)"],
        ["    Points Possible", "", "", "", "", full],
        ["Smith, Jane", "12345", "A0001", "jsmith", "Section 01", full],
        ["Doe, John", "12346", "A0002", "jdoe", "Section 01", "31"],  # late: 62 x 0.5
        ["Lee, Anna", "12347", "A0003", "alee", "Section 02", full],
        ["Roe, Bob", "12348", "A0004", "broe", "Section 02", full],
        ["Poe, Carl", "12349", "A0005", "cpoe", "Section 01", full],
        ["Fox, Dana", "12350", "A0006", "dfox", "Section 02", full],
        ["Student, Test", "99999", "", "8f3c2a9e1b7d4c6a", "Section 01", ""],
    ]
