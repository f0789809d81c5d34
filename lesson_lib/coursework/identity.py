"""Whose notebook is it: the ID from the file name, the notebook's metadata (in a class notebook,
the ``STUDENT`` typed) and the roster.

:func:`identify` compares whichever of these name a student: the folder, the file (also in a Canvas
download name), the notebook's metadata and the platform's user via the roster
(:mod:`~lesson_lib.coursework.lms_names` reads the names). If they agree, that ID is graded; two
that disagree give ``ID mismatch``, none (or an ID not on a given roster) ``unknown ID``, neither
run: no guess picks a variant. In a Canvas name with a user id the uploaded part names the student
only as ``<ID>_problems``; a bare valid ID counts only when nothing else names anyone. A Canvas name
that reads more than one way, or whose name part is not the roster's name for its user (lower case,
letters and digits only, as Canvas writes it), is an ``ID mismatch`` too. It also says
when it was handed in (Gradescope's ``created_at``, else the file time) and Canvas's ``LATE``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from lesson_lib.coursework.extract import static_student
from lesson_lib.coursework.lms_names import (
    CanvasName,
    GradescopeSubmission,
    _class_notebook,
    id_in_file_stem,
    is_gradescope_folder,
    metadata_student,
    parse_canvas_name,
)
from lesson_lib.coursework.roster import Roster, RosterEntry
from lesson_lib.coursework.status import Status
from lesson_lib.coursework.student_ids import normalize_student
from lesson_lib.coursework.submissions import Entry, notebook_name, read_notebook
from lesson_lib.model._safe_io import printable


@dataclass
class Identity:
    """Who a submission belongs to, and when it was handed in."""

    #: The ID to grade it as (for an invalid name, the name as it stands).
    student: str
    #: None (grade it), ``Status.ID_MISMATCH`` or ``Status.UNKNOWN_ID``.
    status: Status | None = None
    #: Where the ID came from, and any disagreement.
    notes: list[str] = field(default_factory=list)
    #: The platform's user id (Canvas user id, roster's ``lms_user_id``), or "".
    lms_user: str = ""
    #: When it was handed in (aware).
    submitted_at: dt.datetime | None = None
    #: Where ``submitted_at`` comes from ("Gradescope created_at", "file time").
    time_source: str = ""
    #: Canvas marked the file ``LATE``.
    late_marker: bool = False
    #: The file has a Canvas download name (so its marker decides lateness).
    canvas_named: bool = False
    #: Canvas's resubmission number (``-1`` in the name is 1), 0 if none.
    resubmission: int = 0


def _valid(raw: str | None) -> tuple[str | None, bool]:
    """(normalised ID, True) or (None, False) when ``raw`` is given but not a valid ID."""
    if raw is None:
        return None, True
    try:
        sid = normalize_student(raw)
    except (TypeError, ValueError):
        return None, False
    return sid, sid is not None


def _canvas_upload_claim(
    raw: str, names_set: bool, ident: Identity
) -> tuple[str | None, str | None]:
    """What the uploaded part of a known Canvas user's file name says, (claim, fallback): a claim
    only as ``<ID>_problems``; a bare valid ID is the fallback when nothing else names anyone."""
    if raw is None:  # plain problems.ipynb: no ID in the name, as outside Canvas
        return None, None
    sid, ok = _valid(raw)
    if names_set and ok and sid is not None:
        return raw, None
    shown = printable(ascii(raw)[1:-1], 60)
    if ok and sid is not None:
        ident.notes.append(
            f"uploaded as {shown!r}: the name is not read as an ID while the "
            "notebook's metadata or the roster's user names one"
        )
        return None, sid
    ident.notes.append(
        f"uploaded as {shown!r}, which holds no student ID: the ID is taken from "
        "the notebook's metadata and the roster's user"
    )
    return None, None


def _letters(text: str) -> str:
    return re.sub(r"[\W_]", "", unicodedata.normalize("NFC", text).casefold())


def _not_canvas_name(canvas: CanvasName, listed: RosterEntry) -> bool:
    """Whether the roster's name for the Canvas user (either word order) is not the download's."""
    if listed.lms_user_id != canvas.user_id or not listed.name.strip():
        return False
    words = listed.name.split()
    forms = {_letters(listed.name), _letters("".join(words[-1:] + words[:-1]))}
    return _letters(canvas.name_key) not in forms


def _mismatch(ident: Identity, said: str) -> Identity:
    ident.status = Status.ID_MISMATCH
    ident.notes.append(f"ID MISMATCH: {said}; not run, nothing graded: check whose it is")
    return ident


def _note_canvas(canvas: CanvasName, ident: Identity) -> None:
    """Take the platform user, ``LATE`` and resubmission from a Canvas name, and note them."""
    ident.lms_user, ident.late_marker = canvas.user_id, canvas.late
    ident.resubmission = canvas.resubmission
    who = f"user {canvas.user_id}" if canvas.user_id else f"anonymous {canvas.anonymous_id}"
    extra = (", marked LATE" if canvas.late else "") + (
        f", resubmission {canvas.resubmission}" if canvas.resubmission else ""
    )
    ident.notes.append(f"Canvas name: {who}{extra}")


def _file_time(entry: Entry) -> dt.datetime | None:
    try:
        return dt.datetime.fromtimestamp(os.lstat(entry.path).st_mtime, dt.UTC)
    except OSError:
        return None


def _name_claims(
    folder_raw: str | None, file_raw: str | None
) -> tuple[list[tuple[str, str]], str | None, str | None]:
    """What the folder and file names say: (claims, a plain renamed file's name, an invalid name)."""
    claims: list[tuple[str, str]] = []
    renamed = None
    for where, raw in (("the folder name", folder_raw), ("the file name", file_raw)):
        sid, ok = _valid(raw)
        if not ok and raw is not None and raw.isascii() and where == "the file name":
            # a plain renamed file ("Problems FINAL"): no claim, the other sources must agree;
            # a name that imitates an ID with other letters stays the grader's invalid ID
            renamed = raw
        elif not ok:
            return claims, renamed, raw or ""
        elif sid is not None:
            claims.append((where, sid))
    return claims, renamed, None


def identify(
    entry: Entry,
    *,
    roster: Roster | None = None,
    export: Mapping[str, GradescopeSubmission] | None = None,
    submitters: GradescopeSubmission | None = None,
) -> Identity:
    """Who ``entry`` belongs to (see the module); reads the notebook's metadata, never runs it.

    Parameters
    ----------
    entry : Entry
    roster : Roster, optional
        The class roster; with it every graded ID must be on it.
    export : mapping, optional
        A Gradescope export's metadata by folder.
    submitters : GradescopeSubmission, optional
        This submission's own metadata (inside a Gradescope autograder).

    Returns
    -------
    Identity
    """
    export = export or {}
    in_folder = "/" in entry.file
    record = submitters or (export.get(entry.name) if in_folder else None)
    gradescope_folder = in_folder and (record is not None or is_gradescope_folder(entry.name))
    ident = Identity(student=entry.stem)
    if entry.problem:
        return ident  # not a notebook: the grader's own row says why
    parsed = notebook_name(entry.path.name) if in_folder else None
    file_stem = parsed[0] if parsed else entry.stem
    canvas = parse_canvas_name(file_stem)
    users: list[str] = []
    if canvas is not None:
        ident.canvas_named = True
        if canvas.ambiguous:  # its name part or upload holds _<digits>_
            return _mismatch(
                ident, f"the Canvas name reads as user_file {' or '.join(canvas.ambiguous)}"
            )
        file_stem = canvas.original
        _note_canvas(canvas, ident)
        if canvas.user_id:
            users.append(canvas.user_id)
    if record is not None:
        users.extend(record.users)
        if record.names:
            who = ", ".join(printable(n, 60) for n in record.names[:3])
            ident.notes.append(f"Gradescope submission of {who}")
    file_raw, names_set = id_in_file_stem(file_stem)
    fallback: str | None = None  # a bare uploaded name, used only when nothing else names one
    if canvas is not None and canvas.user_id:
        file_raw, fallback = _canvas_upload_claim(file_raw, names_set, ident)
    folder_raw = None if gradescope_folder or not in_folder else entry.stem
    claims, renamed, invalid = _name_claims(folder_raw, file_raw)
    if invalid is not None:
        ident.student = invalid or entry.stem  # the grader's own invalid-ID check
        return ident
    try:
        nb, _ = read_notebook(entry.path)
    except (OSError, ValueError, RecursionError, MemoryError):
        nb = None
    meta = metadata_student(nb)
    if meta is not None:
        claims.append(("the notebook's metadata", meta))
    elif _class_notebook(nb):  # one notebook for the class: the ID its student typed
        typed, _ = _valid(static_student(nb))
        if typed is not None:
            claims.append(("the notebook's STUDENT", typed))
    on_roster = roster.user(*users) if roster is not None and users else None
    if on_roster is not None:
        claims.append((f"the roster (user {on_roster.lms_user_id})", on_roster.student_id))
        ident.lms_user = on_roster.lms_user_id
        if canvas is not None and _not_canvas_name(canvas, on_roster):
            key, name = printable(ascii(canvas.name_key)[1:-1], 60), printable(on_roster.name, 60)
            claims.append((f"the Canvas name {key!r}, not the roster's {name!r},", "someone else"))
    if record is not None and record.created_at is not None:
        ident.submitted_at, ident.time_source = record.created_at, "Gradescope created_at"
    else:
        ident.submitted_at, ident.time_source = _file_time(entry), "file time"
    if not claims and fallback is not None:
        claims.append(("the uploaded file name", fallback))
        ident.notes.append(
            f"no other source names the student: the uploaded name {fallback!r} is the ID"
        )
    if renamed is not None and not claims:
        ident.student = renamed  # nothing else names anyone: the grader's invalid ID
        return ident
    if renamed is not None:
        ident.notes.append(f"the file name {printable(renamed, 60)!r} is not an ID: left out")
    return _decide(ident, claims, roster, meta, canvas is not None and file_raw is None)


def _decide(
    ident: Identity,
    claims: list[tuple[str, str]],
    roster: Roster | None,
    meta: str | None,
    canvas_claimless: bool,
) -> Identity:
    """The verdict on the claims; ``canvas_claimless``: a Canvas name whose upload names no one."""
    said = "; ".join(f"{where} says {sid!r}" for where, sid in claims)
    ids = {sid for _, sid in claims}
    if len(ids) > 1:
        ident.student = claims[0][1]
        return _mismatch(ident, said)
    if not ids:
        ident.student, ident.status = "", Status.UNKNOWN_ID
        ident.notes.append(
            "UNKNOWN ID: neither the name nor the notebook's metadata gives a student ID; "
            "not run, nothing graded"
        )
        return ident
    ident.student = ids.pop()
    if roster is not None:
        entry_on_roster = roster.student(ident.student)
        if entry_on_roster is None:
            ident.status = Status.UNKNOWN_ID
            ident.notes.append(
                f"UNKNOWN ID: {ident.student!r} ({said}) is not on the roster; not run, "
                "nothing graded"
            )
            return ident
        ident.lms_user = ident.lms_user or entry_on_roster.lms_user_id
    if meta is not None and len(claims) == 1:
        ident.notes.append(f"identified by the notebook's metadata as {meta!r}")
    elif canvas_claimless and len(claims) > 1:
        sources = " and ".join(where for where, _ in claims)
        ident.notes.append(f"identified by {sources} as {ident.student!r}")
    return ident
