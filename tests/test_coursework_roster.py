"""The roster CSV: read, looked up by issued ID and by platform user, refused when wrong; the
issued IDs the student edition lists, and the grader reading them by default."""

import csv
import shutil
from pathlib import Path

import pytest
from sandbox_support import need_sandbox

from lesson_lib.coursework.grade import main
from lesson_lib.coursework.roster import (
    add_issued_ids,
    issued_roster_file,
    read_roster,
    roster_file_in_use,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "lms"


def test_the_sample_roster_is_looked_up_both_ways():
    roster = read_roster(DATA / "roster.csv")
    assert len(roster.entries) == 6
    jane = roster.student("s001")
    assert (jane.lms_user_id, jane.name, jane.section) == ("12345", "Smith, Jane", "Section 01")
    assert roster.user("12350").student_id == "s006"
    assert roster.user("nobody", "Dana.Fox@example.edu ").student_id == "s006"
    assert roster.user("99999") is None and roster.student("s999") is None


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("lms_user_id,name,student_id\n1,A,s001\n", r"lacks the column\(s\) \['section'\]"),
        ("lms_user_id,name,section,student_id\n1,A,S1,\n", "row 2: student_id must not"),
        ("lms_user_id,name,section,student_id\n1,A,S1,s 01\n", "row 2: student_id: student must"),
        (
            "lms_user_id,name,section,student_id\n1,A,S1,s001\n2,B,S1,S001\n",
            "student_id 's001' is given twice",
        ),
        (
            "lms_user_id,name,section,student_id\n1,A,S1,s001\n1,B,S1,s002\n",
            "lms_user_id '1' is given twice",
        ),
        (  # one of two student_id columns would be read, the other ignored
            "lms_user_id,name,section,student_id, Student_ID\n1,A,S1,s001,s002\n",
            r"header: the column ' Student_ID' is given twice \(columns 4 and 5\); keep one",
        ),
    ],
)
def test_a_wrong_roster_is_refused_naming_row_and_column(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_roster(_write(tmp_path, text))


def test_headers_in_any_case_a_bom_and_blank_lines_are_accepted(tmp_path):
    path = _write(tmp_path, "\ufeffLMS_User_ID,Name,Section,Student_ID\n\n7,Ann,S2, A7 \n")
    (entry,) = read_roster(path).entries
    assert (entry.lms_user_id, entry.student_id, entry.email) == ("7", "a7", "")


def test_the_grader_refuses_a_broken_roster_before_grading(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "s001.ipynb").write_text("{}")
    roster = _write(tmp_path, "id,name\n1,A\n")
    out = tmp_path / "grades.csv"
    assert main([str(tmp_path / "in"), "--out", str(out), "--roster", str(roster)]) == 2
    assert "lacks the column(s)" in capsys.readouterr().err
    assert not out.exists()


def test_blank_platform_columns_are_allowed_and_listed_as_unmatched(tmp_path):
    """The edition's skeleton leaves lms_user_id blank: such rows are read, their IDs
    looked up, two blanks do not collide, and without_platform_user names them (a row with
    only an e-mail can still be matched on Gradescope, so it is not listed)."""
    path = _write(
        tmp_path,
        "lms_user_id,name,section,student_id,email\n"
        ",,,s001,\n,,,s002,\n7,Ann,S2,s003,\n,,,s004,d@example.edu\n",
    )
    roster = read_roster(path)
    assert [e.student_id for e in roster.entries] == ["s001", "s002", "s003", "s004"]
    assert roster.student("s002").lms_user_id == ""
    assert roster.user("") is None and roster.user(" ") is None
    assert roster.user("7").student_id == "s003"
    assert roster.user("D@example.edu").student_id == "s004"
    assert [e.student_id for e in roster.without_platform_user()] == ["s001", "s002"]


SKELETON = "lms_user_id,name,section,student_id,email\n"


def test_issued_ids_are_added_to_the_roster_and_every_row_is_kept(tmp_path):
    """Three IDs, then the instructor fills one row in from the platform, then a late
    student: four rows, the filled-in one kept byte for byte, the file its owner's only.
    The expected bytes are written out by hand: the header, then ``,,,<id>,`` per ID."""
    path = tmp_path / "instructor" / "roster.csv"
    assert add_issued_ids(path, ["s001", "S002", " s003 "]) == ["s001", "s002", "s003"]
    assert path.read_text() == SKELETON + ",,,s001,\n,,,s002,\n,,,s003,\n"
    assert path.stat().st_mode & 0o777 == 0o600
    filled = SKELETON + '12345,"Smith, Jane",Section 01,s001,jane@example.edu\n,,,s002,\n,,,s003,'
    path.write_text(filled)  # no newline at the end, as an editor may leave it
    assert add_issued_ids(path, ["s002", "s004"]) == ["s004"]
    assert path.read_text() == filled + "\n,,,s004,\n"
    roster = read_roster(path)
    assert [e.student_id for e in roster.entries] == ["s001", "s002", "s003", "s004"]
    assert roster.student("s001").name == "Smith, Jane"
    before = path.read_bytes()
    assert add_issued_ids(path, ["S004"]) == [] and path.read_bytes() == before


def test_the_issued_roster_keeps_the_instructors_columns_in_their_order(tmp_path):
    """A roster the instructor wrote with other columns, student_id third of five: a new ID
    goes into that column, the others blank (4 commas for 5 columns)."""
    path = _write(tmp_path, "name,lms_user_id,student_id,section,notes\nAnn,7,s001,S1,x\n")
    assert add_issued_ids(path, ["s002"]) == ["s002"]
    assert path.read_text().splitlines()[-1] == ",,s002,,"


def test_a_broken_roster_or_id_stops_the_list_and_changes_nothing(tmp_path):
    path = _write(tmp_path, "id,name\n1,A\n")
    with pytest.raises(ValueError, match=r"lacks the column\(s\)"):
        add_issued_ids(path, ["s001"])
    assert path.read_text() == "id,name\n1,A\n"
    fresh = tmp_path / "new" / "roster.csv"
    with pytest.raises(ValueError, match="issued ID 's 01': student must"):
        add_issued_ids(fresh, ["s001", "s 01"])
    assert not fresh.exists()


def test_the_roster_in_use_is_the_one_named_else_the_one_beside_the_salt(tmp_path):
    salt = tmp_path / "instructor" / "salt"
    named = tmp_path / "class.csv"
    assert issued_roster_file(salt) == tmp_path / "instructor" / "roster.csv"
    assert roster_file_in_use(None, None) is None  # public variants: no list
    assert roster_file_in_use(None, salt) is None  # no edition has listed IDs yet
    add_issued_ids(issued_roster_file(salt), ["s001"])
    assert roster_file_in_use(None, salt) == issued_roster_file(salt)
    assert roster_file_in_use(None, salt, off=True) is None
    assert roster_file_in_use(named, salt) == named
    assert roster_file_in_use(named, None, off=True) == named


def _grader_says(args: list[str], capsys) -> str:
    """What the grader prints before it finds the (empty) folder has no submission."""
    from lesson_lib.coursework.variants import set_course_salt

    try:
        assert main(["in", "--out", "grades.csv", *args]) == 2
    finally:
        set_course_salt(None)
    captured = capsys.readouterr()
    assert "no submissions in in" in captured.err
    return captured.out


def test_the_grader_reads_the_issued_roster_with_the_default_salt(tmp_path, monkeypatch, capsys):
    """Run from a folder whose _build/instructor/ holds a salt and the issued IDs: the
    grader reads that roster and says so; --no-roster, a named --roster, or no salt
    (LESSON_COURSE_SALT_FILE empty, as in these tests) each turn it off or replace it."""
    from lesson_lib.coursework.variants import DEFAULT_SALT_FILE, create_salt_file

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LESSON_COURSE_SALT_FILE")
    (tmp_path / "in").mkdir()
    create_salt_file(DEFAULT_SALT_FILE)
    add_issued_ids(issued_roster_file(DEFAULT_SALT_FILE), ["s001", "s002"])
    said = _grader_says([], capsys)
    assert "roster: _build/instructor/roster.csv (the IDs the student edition issued" in said
    assert "2 ID(s)" in said and "2 roster row(s) have no lms_user_id or email" in said
    assert "roster:" not in _grader_says(["--no-roster"], capsys)
    named = _write(tmp_path, "lms_user_id,name,section,student_id\n7,Ann,S1,s009\n")
    said = _grader_says(["--roster", str(named)], capsys)
    assert f"roster: {named}: 1 ID(s)" in said and "no lms_user_id" not in said
    monkeypatch.setenv("LESSON_COURSE_SALT_FILE", "")
    assert "roster:" not in _grader_says([], capsys)


def test_roster_and_no_roster_together_are_refused(tmp_path, capsys):
    assert main(["in", "--out", "g.csv", "--roster", "r.csv", "--no-roster"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.slow
def test_an_id_no_edition_issued_is_unknown_with_no_roster_flag(tmp_path, monkeypatch):
    """The class folder holds s001, issued by the edition run here, and s999, a notebook
    made by another edition (its own salt) with name and metadata agreeing. Graded with no
    roster or salt flag from this folder: s001 runs, s999 is 'unknown ID', 0, not run. A
    roster named on the command line wins: with one listing only s999 the roles swap."""
    from lesson_lib.coursework.status import Status
    from lesson_lib.coursework.student_edition import main as edition
    from lesson_lib.coursework.variants import set_course_salt

    need_sandbox()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LESSON_COURSE_SALT_FILE")
    pages = ["--root", str(ROOT), "--pages", "problems"]
    assert edition([*pages, "--out", "class", "--ids", "s001"]) == 0
    assert edition([*pages, "--out", "other", "--ids", "s999", "--salt-file", "x/salt"]) == 0
    shutil.copytree(tmp_path / "other" / "s999", tmp_path / "class" / "s999")
    listed = _write(tmp_path, "lms_user_id,name,section,student_id\n9,Nine,S1,s999\n")
    rows = {}
    try:
        for out, extra in (("default.csv", []), ("named.csv", ["--roster", str(listed)])):
            assert main(["class", "--out", out, "--timeout", "600", *extra]) == 0
            with open(out, newline="") as fh:
                rows[out] = {r["student"]: r for r in csv.DictReader(fh)}
    finally:
        set_course_salt(None)
    by_default, named = rows["default.csv"], rows["named.csv"]
    assert by_default["s001"]["status"] == "ran"
    assert by_default["s999"]["status"] == Status.UNKNOWN_ID
    assert float(by_default["s999"]["total"]) == 0
    assert (
        "'s999'" in by_default["s999"]["notes"]
        and "not on the roster" in by_default["s999"]["notes"]
    )
    assert named["s999"]["status"] == "ran" and named["s001"]["status"] == Status.UNKNOWN_ID


def test_a_roster_cell_too_long_a_latin_1_roster_or_a_link_to_dev_zero_is_refused(tmp_path, capsys):
    """A one-line error naming the file (and line or encoding), exit status 2, no traceback; a
    link to /dev/zero (size 0) is never read."""
    (tmp_path / "in").mkdir()
    header = "lms_user_id,name,section,student_id\n"
    roster = _write(tmp_path, header + "7," + "x" * 131_073 + ",S1,s001\n")
    out = tmp_path / "grades.csv"
    assert main([str(tmp_path / "in"), "--out", str(out), "--roster", str(roster)]) == 2
    assert f"roster '{roster}', line 2: field larger than field limit" in capsys.readouterr().err
    roster.write_text(header + "7,René,S1,s001\n", encoding="latin-1")
    with pytest.raises(ValueError, match=r"roster\.csv' is not UTF-8 text \(byte 41\)"):
        read_roster(roster)
    roster.unlink()
    roster.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"roster\.csv' is a character device"):
        read_roster(roster)
