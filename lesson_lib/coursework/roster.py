"""The class roster: who each issued student ID belongs to on the learning platform.

A CSV file, one row per student, with the :data:`REQUIRED_COLUMNS` (header names without case; an
optional ``email`` is matched too, any others are ignored), as the instructor guide's "Whose
notebook it is" shows. With a roster the grader grades a file only as an ID on it, checks the
platform's user agrees, and fills the gradebook.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lesson_lib.coursework.files import write_atomically
from lesson_lib.coursework.student_ids import normalize_student
from lesson_lib.model._safe_io import read_csv_rows, read_file

#: Columns a roster must have (header, case ignored).
REQUIRED_COLUMNS = ("lms_user_id", "name", "section", "student_id")
#: Largest roster file read, bytes.
MAX_ROSTER_BYTES = 8 * 2**20
#: The issued IDs' roster is this file in the folder of the course salt.
ISSUED_ROSTER_NAME = "roster.csv"
#: The header of a roster the student edition starts (``email`` is optional, matched on Gradescope).
SKELETON_HEADER = ("lms_user_id", "name", "section", "student_id", "email")


@dataclass(frozen=True)
class RosterEntry:
    """One student of the roster."""

    #: Canvas's user id, or Gradescope's submitter ``sid`` ("" until the instructor fills it in).
    lms_user_id: str
    name: str
    section: str
    #: The issued student ID, normalised.
    student_id: str
    #: The student's e-mail address, lower case ("" if the roster has none).
    email: str = ""


class Roster:
    """Roster entries by issued ID and by platform user.

    Parameters
    ----------
    entries : iterable of RosterEntry
        IDs, user ids and e-mail addresses each unique (blank user ids are not compared).

    Raises
    ------
    ValueError
        If an ID, a user id or an e-mail address appears twice.
    """

    def __init__(self, entries: Iterable[RosterEntry]) -> None:
        self.entries = list(entries)
        self.by_student: dict[str, RosterEntry] = {}
        self.by_user: dict[str, RosterEntry] = {}
        for entry in self.entries:
            keys = [(self.by_student, entry.student_id, "student_id")]
            if entry.lms_user_id:  # blank: not filled in yet, matches no platform user
                keys.append((self.by_user, entry.lms_user_id.casefold(), "lms_user_id"))
            if entry.email:
                keys.append((self.by_user, entry.email, "email"))
            for table, key, column in keys:
                if key in table and table[key] is not entry:
                    raise ValueError(f"roster: {column} {key!r} is given twice")
                table[key] = entry

    def student(self, student_id: str) -> RosterEntry | None:
        """The entry of the issued ID ``student_id`` (normalised), or None."""
        return self.by_student.get(student_id)

    def user(self, *users: str) -> RosterEntry | None:
        """The entry of the first of ``users`` (platform ids or e-mails, any case), or None."""
        keys = (str(user).strip().casefold() for user in users)
        return next((self.by_user[key] for key in keys if key in self.by_user), None)

    def without_platform_user(self) -> list[RosterEntry]:
        """The entries with neither an ``lms_user_id`` nor an ``email``: no platform user is
        compared with their ID, and only a Canvas download name fills their gradebook cell."""
        return [e for e in self.entries if not e.lms_user_id and not e.email]


def read_roster(path: Path) -> Roster:
    """Read a roster CSV (see the module for its columns).

    Parameters
    ----------
    path : Path
        The CSV file (UTF-8, a byte-order mark allowed, at most 8 MiB).

    Returns
    -------
    Roster

    Raises
    ------
    ValueError
        A required column is missing, a ``student_id`` is empty or invalid, or a value is given
        twice; the message names the file, the row and the column.
    """
    rows = iter(read_csv_rows(path, "roster", ValueError, MAX_ROSTER_BYTES))
    header = next(rows, None)
    if header is None:
        raise ValueError(f"roster {path} is empty: it needs the columns {REQUIRED_COLUMNS}")
    columns = {name.strip().casefold(): i for i, name in enumerate(header)}
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ValueError(
            f"roster {path} lacks the column(s) {missing}; its header must name "
            f"{', '.join(REQUIRED_COLUMNS)} (and optionally email)"
        )
    entries = []
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        values = {name: row[i].strip() for name, i in columns.items() if i < len(row)}
        try:
            sid = normalize_student(values.get("student_id"))
        except (TypeError, ValueError) as err:
            raise ValueError(f"roster {path}, row {number}: student_id: {err}") from None
        if sid is None:
            raise ValueError(f"roster {path}, row {number}: student_id must not be empty")
        user, name, section = (values.get(column, "") for column in REQUIRED_COLUMNS[:3])
        entries.append(RosterEntry(user, name, section, sid, values.get("email", "").casefold()))
    try:
        return Roster(entries)
    except ValueError as err:
        raise ValueError(f"{err} (in {path})") from None


def issued_roster_file(salt_file: Path) -> Path:
    """Where the edition keeps the IDs it issued with a salt: :data:`ISSUED_ROSTER_NAME` beside it.

    Parameters
    ----------
    salt_file : Path

    Returns
    -------
    Path
    """
    return Path(salt_file).parent / ISSUED_ROSTER_NAME


def roster_file_in_use(
    given: Path | None, salt_file: Path | None, *, off: bool = False
) -> Path | None:
    """The roster the grader reads: ``given``, else the IDs issued beside the salt in use, if any.

    Parameters
    ----------
    given : Path or None
        A roster named on the command line (``--roster``); it always wins.
    salt_file : Path or None
        The course salt in use, or None for the public variants.
    off : bool, default False
        True (``--no-roster``): no roster unless ``given``.

    Returns
    -------
    Path or None
        None: any valid ID is graded.
    """
    if given is not None:
        return Path(given)
    if off or salt_file is None:
        return None
    beside = issued_roster_file(salt_file)
    return beside if beside.is_file() else None


def add_issued_ids(path: Path, students: Sequence[str]) -> list[str]:
    """Append the IDs an edition issues, only ``student_id`` filled in, to the roster at ``path``.

    A new file gets :data:`SKELETON_HEADER`; an existing one is kept byte for byte. It is replaced
    atomically, readable by its owner only: once filled in it holds names.

    Parameters
    ----------
    path : Path
    students : sequence of str

    Returns
    -------
    list of str
        The IDs added, normalised, in the order given.

    Raises
    ------
    ValueError
        If an ID is not valid, or the existing file is not a roster; nothing is written then.
    """
    path = Path(path)
    wanted: list[str] = []
    for raw in students:
        try:
            sid = normalize_student(raw)
        except (TypeError, ValueError) as err:
            raise ValueError(f"issued ID {raw!r}: {err}") from None
        if sid is None:
            raise ValueError("issued IDs must not be empty")
        if sid not in wanted:
            wanted.append(sid)
    if path.exists():
        on_file = read_roster(path)
        old = read_file(path, "roster", ValueError, MAX_ROSTER_BYTES)
        header = read_csv_rows(path, "roster", ValueError, MAX_ROSTER_BYTES)[0]
    else:
        on_file, old, header = Roster([]), b"", list(SKELETON_HEADER)
    added = [sid for sid in wanted if on_file.student(sid) is None]
    if not added and old:
        return []
    index = [name.strip().casefold() for name in header].index("student_id")
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    if not old:
        writer.writerow(header)
    for sid in added:
        writer.writerow(["" if i != index else sid for i in range(len(header))])
    joint = b"" if not old or old.endswith((b"\n", b"\r")) else b"\n"
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = old + joint + rows.getvalue().encode("utf-8")
    # whole or not at all, for its owner only: a reader never sees half a roster
    write_atomically(path, lambda fh: fh.write(data), binary=True, mode=0o600)
    return added
