"""How learning platforms name what students hand in, read back into IDs, users and times.

**The student edition** names each problem set ``<ID>/<ID>_problems.ipynb`` and writes the ID into
the notebook's metadata (``metadata.lesson.student_id``), which survives a renamed file.

**Canvas** ("Download Submissions") names every file
``<name>_<user id>_<attachment id>_<file name as uploaded>``, with ``LATE`` after the name when
it counts it late and ``anon_<id>`` for name and user id when grading anonymously; the user id is
the gradebook export's ``ID`` (``get_filename`` and ``add_upload_submission`` in
https://github.com/instructure/canvas-lms/blob/05e9653c12ef7afc65815ca84e5da7aa2e4c3bd3/lib/content_zipper.rb;
otter-grader's ``CanvasParser`` reads it too,
https://github.com/ucbds-infra/otter-grader/blob/3b7c5b05e60ee4ec62bc3c068ceef3042703f8da/otter/grade/metadata.py).
An upload of the same name again gets ``-1``, ``-2`` before its extension
(https://github.com/TimHanneman/Canvas_submission_sort). The name carries no time.

**Gradescope**'s "Export Submissions" zip holds a folder per submission (``submission_123456/``)
and a ``submission_metadata.yml`` giving each its ``:submitters:`` and ``:created_at:``; an
autograder gets ``/autograder/submission_metadata.json``:
https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lesson_lib.coursework.student_ids import normalize_student
from lesson_lib.model._safe_io import read_file

#: Stem of the problem set's file name, alone or after ``<ID>_``.
PROBLEM_SET = "problems"
#: The notebook metadata key under which the student edition writes the ID.
METADATA_KEY = "lesson"
#: The field holding the ID, as in ``metadata["lesson"]["student_id"]``.
METADATA_FIELD = "student_id"
#: The field marking one notebook for the class, whose ``STUDENT`` the student types.
CLASS_FIELD = "class_edition"
#: The file a Gradescope export keeps beside its submission folders.
GRADESCOPE_EXPORT_METADATA = "submission_metadata.yml"

#: What follows Canvas's name part (``anon_<id>`` only where there is no name part).
_CANVAS = re.compile(
    r"(?P<late>LATE_)?(?:anon_(?P<anon>[A-Za-z0-9]{1,20})|(?P<user>\d{1,20}))"
    r"_(?P<attachment>\d{1,20})_(?P<original>.+)"
)
#: Canvas's name part, the sortable name lower-cased (so it never holds ``LATE``).
_CANVAS_NAME = re.compile(r"[^\WA-Z]+")
_RESUBMISSION = re.compile(r"^(?P<stem>.+?)-(?P<n>\d{1,4})$")
_GRADESCOPE_FOLDER = re.compile(r"^submission_\d{1,20}$")


@dataclass(frozen=True)
class CanvasName:
    """What Canvas wrote into a downloaded submission's name."""

    #: The student's name as Canvas writes it (``smithjane``).
    name_key: str
    #: The name has Canvas's ``LATE`` marker.
    late: bool
    #: The Canvas user id ("" when anonymous).
    user_id: str
    #: The id of the uploaded file.
    attachment_id: str
    #: The stem as uploaded, resubmission number taken off (``s001_problems``).
    original: str
    #: The ``-N`` Canvas added for the N-th file of the same name (0 if none).
    resubmission: int = 0
    #: Canvas's anonymous id (``anon_<id>`` in the name), or "".
    anonymous_id: str = ""
    #: Each reading's ``<user id>_<attachment id>`` (``LATE_`` included) if there are several.
    ambiguous: tuple[str, ...] = ()


def parse_canvas_name(stem: str) -> CanvasName | None:
    """Read a Canvas download name (its stem, without ``.ipynb``), or None if it is not one.

    The name part and the uploaded name are the student's: a name part such as ``evedoe_111_9``
    (Canvas drops ``_<digits>_`` before it drops spaces) or an upload ``111_9_x.ipynb`` lets the
    stem be read more than one way; every reading is then listed in ``ambiguous``.

    Parameters
    ----------
    stem : str

    Returns
    -------
    CanvasName or None
    """
    readings = []
    for start in (0, *(at + 1 for at, char in enumerate(stem) if char == "_")):
        match = _CANVAS.fullmatch(stem, start)
        name = stem[: start - 1] if start else ""
        if match and (not start or (_CANVAS_NAME.fullmatch(name) and not match["anon"])):
            readings.append((name, match))
    if not readings:
        return None
    name, match = readings[0]
    original, resubmission = match["original"], 0
    again = _RESUBMISSION.match(original)
    if again:
        original, resubmission = again["stem"], int(again["n"])
    ambiguous = tuple(stem[m.start() : m.end("attachment")] for _, m in readings)
    return CanvasName(
        name, bool(match["late"]), match["user"] or "", match["attachment"], original,
        resubmission, match["anon"] or "", ambiguous if len(readings) > 1 else (),
    )  # fmt: skip


def id_in_file_stem(stem: str) -> tuple[str | None, bool]:
    """The student ID a problem-set file's stem carries, and whether it names the problem set.

    Parameters
    ----------
    stem : str
        ``s001_problems``, ``problems`` or ``s001`` (an ``<ID>.ipynb`` file).

    Returns
    -------
    (str or None, bool)
        ``("s001", True)``, ``(None, True)`` (plain ``problems``: no ID in the name) or ``("s001",
        False)``; the ID is returned as written, not normalised.
    """
    if stem.casefold() == PROBLEM_SET:
        return None, True
    head, sep, tail = stem.rpartition("_")
    if sep and head and tail.casefold() == PROBLEM_SET:
        return head, True
    return stem, False


def is_gradescope_folder(name: str) -> bool:
    """Whether a folder's name is one of a Gradescope export's (``submission_123456``).

    Parameters
    ----------
    name : str

    Returns
    -------
    bool
    """
    return bool(_GRADESCOPE_FOLDER.match(name))


def metadata_student(nb: object) -> str | None:
    """The student ID the edition wrote into a notebook's metadata, normalised; None if there is
    none or it is not valid (a forged value is absent: the file name and the roster still count).

    Parameters
    ----------
    nb : dict

    Returns
    -------
    str or None
    """
    value = _lesson(nb).get(METADATA_FIELD)
    if type(value) is not str:
        return None
    try:
        return normalize_student(value)
    except (TypeError, ValueError):
        return None


def _lesson(nb: object) -> dict:
    """The notebook's ``metadata["lesson"]``, or an empty dict."""
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    lesson = meta.get(METADATA_KEY) if isinstance(meta, dict) else None
    return lesson if isinstance(lesson, dict) else {}


def _class_notebook(nb: object) -> bool:
    """Whether the edition wrote ``nb`` as one notebook for the class (the student types the ID)."""
    return _lesson(nb).get(CLASS_FIELD) is True


@dataclass(frozen=True)
class GradescopeSubmission:
    """One Gradescope submission's metadata."""

    #: Each submitter's ``sid``, ``email`` and ``id``, lower-cased (empty ones left out).
    users: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    #: When it was submitted, time-zone aware.
    created_at: dt.datetime | None = None


def _parse_time(value: object) -> dt.datetime | None:
    """A timestamp as Gradescope writes it, as an aware datetime, or None."""
    if isinstance(value, dt.datetime):
        when = value
    elif isinstance(value, str) and len(value) < 64:
        try:  # Python 3.11 reads nanoseconds (cut to microseconds) and a spaced zone too
            when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _symbol(record: Mapping, key: str) -> object:
    """``record[":key"]`` (Gradescope's Ruby symbols) or ``record["key"]``."""
    return record.get(f":{key}", record.get(key))


def _submitters(people: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    users: list[str] = []
    names: list[str] = []
    for person in people if isinstance(people, list) else []:
        if not isinstance(person, dict):
            continue
        for key in ("sid", "email", "id"):
            value = _symbol(person, key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
                users.append(str(value).strip().casefold())
        name = _symbol(person, "name")
        if isinstance(name, str):
            names.append(name)
    return tuple(users), tuple(names)


def read_gradescope_export(folder: Path) -> dict[str, GradescopeSubmission]:
    """The ``submission_metadata.yml`` of a Gradescope export, by submission folder (empty if none).

    Parameters
    ----------
    folder : Path

    Returns
    -------
    dict
        Folder name -> :class:`GradescopeSubmission`.

    Raises
    ------
    ValueError
        If the file is not YAML or not a mapping of submissions.
    """
    path = Path(folder) / GRADESCOPE_EXPORT_METADATA
    if not path.is_file():
        return {}
    seen = path.stat()  # a run asks several times: a large export is parsed once while unchanged
    return dict(_parse_export(path.resolve(), seen.st_mtime_ns, seen.st_size, seen.st_ino))


@functools.lru_cache(maxsize=1)
def _parse_export(path: Path, *changed: int) -> dict[str, GradescopeSubmission]:
    import yaml

    try:
        data = yaml.safe_load(read_file(path, "Gradescope metadata", ValueError, 2**26))
    except (yaml.YAMLError, RecursionError) as err:  # RecursionError: nested too deeply
        raise ValueError(f"{path} is not YAML: {str(err)[:120]}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} must map submission folders to their metadata")
    found = {}
    for name, record in data.items():
        if not isinstance(record, dict):
            continue
        users, names = _submitters(_symbol(record, "submitters"))
        found[str(name)] = GradescopeSubmission(
            users, names, _parse_time(_symbol(record, "created_at"))
        )
    return found


def read_gradescope_metadata(data: object) -> GradescopeSubmission:
    """An autograder's ``/autograder/submission_metadata.json``, parsed: users, names, created_at.

    Parameters
    ----------
    data : dict
        The parsed JSON (anything else gives an empty record).

    Returns
    -------
    GradescopeSubmission
    """
    if not isinstance(data, dict):
        return GradescopeSubmission()
    users, names = _submitters(data.get("users"))
    return GradescopeSubmission(users, names, _parse_time(data.get("created_at")))
