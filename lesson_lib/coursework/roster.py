"""The class roster: who each issued student ID belongs to on the learning platform.

A roster is a CSV file with one row per student and at least these columns
(header names without case; any others are kept out of the way)::

    lms_user_id,name,section,student_id
    12345,"Smith, Jane",Section 01,s001

``lms_user_id`` is the student's id on the platform: on Canvas the user id
that its downloaded file names and the gradebook export's ``ID`` column
carry; on Gradescope the submitter's ``sid`` (Student ID) or ``email``. An
optional ``email`` column is matched too. ``student_id`` is the ID the
student edition was made with (``make student IDS=...``). With a roster the
grader (``--roster``) grades a file only as an ID on it, checks that the
platform's user and the notebook agree, and fills the gradebook.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lesson_lib.coursework.student_ids import normalize_student

#: Columns a roster must have (header, case ignored).
REQUIRED_COLUMNS = ("lms_user_id", "name", "section", "student_id")
#: Largest roster file read, bytes.
MAX_ROSTER_BYTES = 8 * 2**20


@dataclass(frozen=True)
class RosterEntry:
    """One student of the roster.

    Attributes
    ----------
    lms_user_id : str
        The platform's id of the student (as written, surrounding spaces taken off).
    name : str
        The student's name.
    section : str
        The section.
    student_id : str
        The issued student ID, normalised.
    email : str
        The student's e-mail address, lower case ("" if the roster has none).
    """

    lms_user_id: str
    name: str
    section: str
    student_id: str
    email: str = ""


class Roster:
    """Roster entries by issued ID and by platform user.

    Parameters
    ----------
    entries : iterable of RosterEntry
        The students; IDs, user ids and e-mail addresses must each be unique.

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
            keys.append((self.by_user, entry.lms_user_id.casefold(), "lms_user_id"))
            if entry.email:
                keys.append((self.by_user, entry.email, "email"))
            for table, key, column in keys:
                if key in table and table[key] is not entry:
                    raise ValueError(f"roster: {column} {key!r} is given twice")
                table[key] = entry

    def student(self, student_id: str) -> RosterEntry | None:
        """The entry of an issued ID (normalised), or None.

        Parameters
        ----------
        student_id : str
            A normalised student ID.

        Returns
        -------
        RosterEntry or None
        """
        return self.by_student.get(student_id)

    def user(self, *users: str) -> RosterEntry | None:
        """The entry of the first platform user (id or e-mail, any case) on the roster, or None.

        Parameters
        ----------
        *users : str
            Platform user ids or e-mail addresses.

        Returns
        -------
        RosterEntry or None
        """
        for user in users:
            found = self.by_user.get(str(user).strip().casefold())
            if found is not None:
                return found
        return None


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
        If a required column is missing, a row has no ``lms_user_id`` or an
        invalid ``student_id``, or a value is given twice; the message names
        the file, the row and the column.
    OSError
        If the file cannot be read.
    """
    path = Path(path)
    if path.stat().st_size > MAX_ROSTER_BYTES:
        raise ValueError(f"roster {path} must be at most {MAX_ROSTER_BYTES // 2**20} MiB")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
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
        for number, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue

            def cell(column: str, row: list[str] = row) -> str:
                index = columns.get(column)
                return row[index].strip() if index is not None and index < len(row) else ""

            user = cell("lms_user_id")
            if not user:
                raise ValueError(f"roster {path}, row {number}: lms_user_id must not be empty")
            try:
                sid = normalize_student(cell("student_id"))
            except (TypeError, ValueError) as err:
                raise ValueError(f"roster {path}, row {number}: student_id: {err}") from None
            if sid is None:
                raise ValueError(f"roster {path}, row {number}: student_id must not be empty")
            entries.append(
                RosterEntry(user, cell("name"), cell("section"), sid, cell("email").casefold())
            )
    try:
        return Roster(entries)
    except ValueError as err:
        raise ValueError(f"{err} (in {path})") from None
