"""The options a grading run scored with, kept beside the grades so a regrade scores alike.

A full run writes the score-changing options (the roster read, ``--due``,
``--late-penalty-per-day``, ``--keep``, ``--close-credit``, 16 hex digits of the course salt's
SHA-256) and :func:`bank_fingerprint` to ``grades.options.json`` beside ``grades.csv``; a regrade
(``--student``) takes each option not given from there and refuses one that differs
(:func:`reconcile`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from lesson_lib.coursework.files import write_atomically
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.model._safe_io import printable, read_file, require_output_file

#: The options that change scores, as ``grades.options.json`` keys, with their flags.
FLAGS: dict[str, str] = {
    "roster": "--roster",
    "due": "--due",
    "late_penalty_per_day": "--late-penalty-per-day",
    "keep": "--keep",
    "close_credit": "--close-credit",
    "salt": "--salt-file",
}
#: The values an option takes when a full run was not given it.
DEFAULTS: dict[str, Any] = {
    "roster": "",
    "due": None,
    "late_penalty_per_day": 0.0,
    "keep": None,
    "close_credit": 0.5,
    "salt": None,
}


class OptionsDiffer(ValueError):
    """A regrade was given an option that differs from the run that wrote the grades."""


def _options_path(grades: Path) -> Path:
    """Where the options of the run that wrote ``grades`` are kept (``grades.options.json``)."""
    grades = Path(grades)
    return grades.with_name(f"{grades.stem}.options.json")


def salt_fingerprint(salt: str | None) -> str | None:
    """The first 16 hex digits of the salt's SHA-256 (None for the public variants).

    Parameters
    ----------
    salt : str or None

    Returns
    -------
    str or None
    """
    return None if salt is None else hashlib.sha256(salt.encode()).hexdigest()[:16]


def _scored(value: Any) -> str:
    return value if isinstance(value, str) else f"{float(value):.12g}"


def bank_fingerprint() -> str:
    """16 hex digits of a SHA-256 over what scores each problem: its kind, unit, points and
    tolerances, and its answer and named mistakes for the book's numbers and three fixed draws.

    Returns
    -------
    str
    """
    rows = []
    for qid, problem in PROBLEMS.items():
        draws = [problem.defaults] + [problem.sample(np.random.default_rng(k)) for k in range(3)]
        rule = [problem.kind, problem.unit, problem.max_points, problem.decimals, problem.sig_figs]
        rows.append([qid, *rule, problem.rtol, problem.close_rtol])
        for drawn in draws:
            mistakes = [[m.slug, _scored(m.value)] for m in problem.mistakes(drawn)]
            rows.append([_scored(problem.reference(drawn)), mistakes])
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def record_options(grades: Path, options: Mapping[str, Any]) -> Path:
    """Write the options of a full run beside its grades file, atomically; return the options file.

    Parameters
    ----------
    grades : Path
    options : mapping
        Each of :data:`FLAGS`' keys -> its value (JSON-serialisable).

    Returns
    -------
    Path
    """
    target = require_output_file(_options_path(grades))
    kept = {key: options.get(key, DEFAULTS[key]) for key in FLAGS}
    kept["problems"] = bank_fingerprint()

    def write(fh: IO) -> None:
        json.dump(kept, fh, indent=1, sort_keys=True)
        fh.write("\n")

    write_atomically(target, write)
    return target


def read_options(grades: Path) -> dict[str, Any] | None:
    """The options kept beside ``grades`` (:data:`FLAGS` key -> value, and ``"problems"``); None if
    none or unreadable, a ValueError naming the file and the option if one has a value of another
    type.

    Parameters
    ----------
    grades : Path

    Returns
    -------
    dict or None
    """
    path = _options_path(grades)
    try:
        found = json.loads(read_file(path, "options", ValueError, 2**20))
    except (ValueError, RecursionError):
        return None
    if not isinstance(found, dict):
        return None
    options = {key: found.get(key, DEFAULTS[key]) for key in FLAGS}
    options["problems"] = found.get("problems")
    for key, value in options.items():
        kinds = (
            (float, int) if key in ("late_penalty_per_day", "close_credit") else (str, type(None))
        )
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise ValueError(f"{path}: {key} is {printable(value)}, not {kinds[0].__name__}")
    return options


def reconcile(recorded: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """The options a regrade scores with: each one given, else the one recorded.

    Parameters
    ----------
    recorded : mapping
        :func:`read_options` of the grades file.
    given : mapping
        Each :data:`FLAGS` key -> the value given, or None (for the salt: its fingerprint).

    Returns
    -------
    dict

    Raises
    ------
    OptionsDiffer
        If an option given, or the bank's :func:`bank_fingerprint`, differs from the recorded one.
    """
    bank = bank_fingerprint()
    if recorded.get("problems") != bank:
        raise OptionsDiffer(
            f"the grades were written with problem bank {_shown(recorded.get('problems'))} and "
            f"this lesson_lib scores with bank {bank} (an answer, tolerance, mistake or points "
            "differ): grade the whole class again, so that one bank scores every row"
        )
    used: dict[str, Any] = {}
    for key, flag in FLAGS.items():
        kept, now = recorded.get(key, DEFAULTS[key]), given.get(key)
        if (now is not None or key == "salt") and now != kept:
            what = "another course salt" if key == "salt" else f"{flag} {_shown(now)}"
            raise OptionsDiffer(
                f"the grades were written with {flag} {_shown(kept)} and this regrade has "
                f"{what}: give the same options, or grade the whole class again"
            )
        used[key] = kept if now is None else now
    return used


def describe(options: Mapping[str, Any]) -> str:
    """The options as flags, for the regrade's first line (``--due ... --keep latest``).

    Parameters
    ----------
    options : mapping

    Returns
    -------
    str
    """
    parts = []
    for key, flag in FLAGS.items():
        value = options.get(key)
        if key == "salt":
            parts.append("the course salt" if value else "public variants")
        elif key == "roster" and not value:
            parts.append("no roster")
        elif value is not None:
            parts.append(f"{flag} {_shown(value)}")
    return ", ".join(parts)


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    return printable(f"{value:g}" if isinstance(value, float) else value, 200)
