"""A Gradescope autograder: the zip ``make gradescope`` builds, and the script it runs.

The zip (:func:`build_zip`, format: https://gradescope-autograders.readthedocs.io/en/latest/specs/)
holds ``setup.sh`` (bubblewrap, uv, a Python fitting :data:`PYTHON_REQUEST` and the pins),
``run_autograder``, ``config.json``, the ``lesson_lib`` source, optionally roster and course salt.
:func:`run` identifies the one submission and grades it as ``make grade`` does, one test per
problem; where a container refuses bubblewrap, as the instructor guide's "A Gradescope autograder"
says (unsandboxed as a spare user who cannot read the salt or roster, or not at all).

Command line::

    python -m lesson_lib.coursework.gradescope build --out _build/gradescope/autograder.zip
    python -m lesson_lib.coursework.gradescope run --root /autograder
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from lesson_lib.coursework.check import CLOSE_CREDIT
from lesson_lib.coursework.feedback import shown_message
from lesson_lib.coursework.files import write_atomically
from lesson_lib.coursework.graded import Submission
from lesson_lib.coursework.grading import grade_notebook
from lesson_lib.coursework.identity import identify
from lesson_lib.coursework.lms_names import id_in_file_stem, read_gradescope_metadata
from lesson_lib.coursework.problems import PROBLEMS
from lesson_lib.coursework.roster import REQUIRED_COLUMNS, read_roster, roster_file_in_use
from lesson_lib.coursework.sandbox import SandboxUnavailable, require_sandbox, spare_user_missing
from lesson_lib.coursework.submissions import find_submissions
from lesson_lib.coursework.time_limits import DEFAULT_TIMEOUT_S, MAX_TIMEOUT
from lesson_lib.coursework.variants import read_salt_file, salt_file_in_use, set_course_salt
from lesson_lib.model._safe_io import printable, read_file, require_output_file
from lesson_lib.model._validate import require_number

#: Gradescope's visibility settings for a test or the whole result.
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
#: The uv release ``setup.sh`` installs (the one the Makefile pins).
UV_VERSION = "0.13.9"
#: The Pythons ``setup.sh`` accepts: 3.11 at the lowest patch release every pin installs on
#: (soupsieve 4.1.3 requires 3.11.5, so Debian 12's 3.11.2 is refused as well).
PYTHON_REQUEST = ">=3.11.5,<3.12"
#: Root of the autograder inside Gradescope's container.
DEFAULT_ROOT = Path("/autograder")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu).
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv bubblewrap
python3 -m venv /autograder/bootstrap
/autograder/bootstrap/bin/pip install --quiet "uv=={uv}"
UV=/autograder/bootstrap/bin/uv
# The pins need Python {python}: uv takes an interpreter on PATH that fits, or downloads a
# CPython build into /autograder/python (Ubuntu's python3 is too old). --clear lets the
# script run again (over SSH, or in tools/try_gradescope_zip.py).
export UV_PYTHON_INSTALL_DIR=/autograder/python
"$UV" venv --clear --python "{python}" /autograder/venv
"$UV" pip install --python /autograder/venv/bin/python --compile-bytecode \\
  -r /autograder/source/lesson/requirements.txt
"$UV" pip install --python /autograder/venv/bin/python --compile-bytecode --no-deps \\
  /autograder/source/lesson
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission. LESSON_AUTOGRADER_ROOT (default /autograder)
# and LESSON_AUTOGRADER_PYTHON let it run locally against a fake root.
set -u
ROOT="${LESSON_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${LESSON_AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
cd "$ROOT"
exec "$PYTHON" -m lesson_lib.coursework.gradescope run --root "$ROOT" \\
  --config "$ROOT/source/config.json"
"""


_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache"}


def _package_files(root: Path) -> list[Path]:
    """The ``lesson_lib`` source files to ship, relative to ``root``, without caches."""
    files = (p.relative_to(root) for p in sorted((root / "lesson_lib").rglob("*")) if p.is_file())
    return [rel for rel in files if not _SKIP_DIRS & set(rel.parts) and rel.suffix != ".pyc"]


def _pinned_requirements(root: Path) -> str:
    """``requirements.txt`` without its editable line (``-e .``): the pins the zip installs."""
    lines = (root / "requirements.txt").read_text().splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith("-e")) + "\n"


def build_zip(
    out: Path,
    root: Path,
    *,
    visibility: str = "after_due_date",
    timeout: float = DEFAULT_TIMEOUT_S,
    roster: Path | None = None,
    require_sandbox_in_container: bool = False,
    close_credit: float = CLOSE_CREDIT,
    salt_file: Path | None = None,
) -> Path:
    """Write the autograder zip.

    Parameters
    ----------
    out : Path
        The zip to write (a new path or a regular file).
    root : Path
        The repository (``requirements.txt``, ``pyproject.toml``, ``lesson_lib/``).
    visibility : str, default "after_due_date"
        When students see each problem's result: one of :data:`VISIBILITIES`.
    timeout : float, default :data:`~lesson_lib.coursework.time_limits.DEFAULT_TIMEOUT_S`
        Seconds the notebook may run.
    roster : Path, optional
        A roster CSV to ship (checked here).
    require_sandbox_in_container : bool, default False
        True: where the sandbox cannot run, grade nothing.
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of a problem's points a close answer earns, 0 to 1.
    salt_file : Path, optional
        The course salt (checked here), shipped so the students' own variants are graded.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    ValueError
        If an option is out of range, or the roster is invalid.
    """
    close_credit = require_number("close_credit", close_credit, minimum=0.0, maximum=1.0)
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {VISIBILITIES}, got {visibility!r}")
    if not (isinstance(timeout, int | float) and 0 < timeout <= MAX_TIMEOUT):
        raise ValueError(f"timeout must be > 0 and <= {MAX_TIMEOUT:g} seconds, got {timeout!r}")
    # who is who, without names, sections or e-mails: the autograder needs no more
    shipped = (
        [[e.lms_user_id, "", "", e.student_id] for e in read_roster(roster).entries]
        if roster
        else []
    )
    salt = read_salt_file(salt_file) if salt_file is not None else None
    root, out = Path(root), require_output_file(out, "--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    config = {
        "visibility": visibility,
        "timeout": timeout,
        "require_sandbox": require_sandbox_in_container,
        "close_credit": close_credit,
    }

    def write(fh: IO) -> None:
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            setup = SETUP_SH.replace("{uv}", UV_VERSION).replace("{python}", PYTHON_REQUEST)
            for name, text in (("setup.sh", setup), ("run_autograder", RUN_AUTOGRADER)):
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = 0o755 << 16
                zf.writestr(info, text)
            zf.writestr("config.json", json.dumps(config, indent=2) + "\n")
            zf.writestr("lesson/requirements.txt", _pinned_requirements(root))
            zf.write(root / "pyproject.toml", "lesson/pyproject.toml")
            zf.write(root / "README.md", "lesson/README.md")  # pyproject's readme
            for rel in _package_files(root):
                zf.write(root / rel, f"lesson/{rel.as_posix()}")
            if roster is not None:
                text = io.StringIO()  # csv quotes a platform id holding a comma or a quote
                csv.writer(text, lineterminator="\n").writerows([REQUIRED_COLUMNS, *shipped])
                zf.writestr("roster.csv", text.getvalue())
            if salt is not None:
                zf.writestr("salt", salt + "\n")

    write_atomically(out, write, binary=True, mode=0o600)
    return out


def _tests(visibility: str, sub: Submission | None = None) -> list[dict]:
    """One Gradescope test per problem, scored from ``sub`` (none: every one 0)."""
    results = sub.results if sub is not None else {}
    return [
        {
            "name": f"{qid}: {problem.title}",
            "score": results[qid].points if qid in results else 0.0,
            "max_score": problem.max_points,
            "output": shown_message(results[qid]) if qid in results else "",
            "output_format": "text",  # Gradescope's default renders a student's HTML as markup
            "visibility": visibility,
        }
        for qid, problem in PROBLEMS.items()
    ]


def _results_json(sub: Submission, visibility: str, extra_output: Sequence[str] = ()) -> dict:
    """Gradescope's ``results.json`` for a graded submission, ``extra_output`` first in its output."""
    lines = [*extra_output, f"Graded as student ID {sub.student!r}: status {sub.status}."]
    lines += [printable(note, 300) for note in sub.notes]
    return {
        **_nothing_graded("\n".join(lines), visibility),
        "score": sub.total,
        "tests": _tests(visibility, sub),
        "extra_data": {"student_id": sub.student, "status": sub.status},
    }


def _problem_set_entries(folder: Path) -> list:
    entries = [e for e in find_submissions(folder) if not e.problem]
    named = [e for e in entries if id_in_file_stem(e.path.stem)[1]]
    return named or entries


def _read_json(path: Path) -> object:
    try:
        return json.loads(read_file(path, "JSON file", ValueError, 2**24))
    except (ValueError, RecursionError):  # nested too deeply
        return None


def _write_results(root: Path, results: dict) -> dict:
    """Write ``results`` as ``root/results/results.json``, for the grader only; return them."""
    (root / "results").mkdir(parents=True, exist_ok=True)
    write_atomically(
        root / "results" / "results.json", lambda fh: json.dump(results, fh, indent=2), mode=0o600
    )
    return results


def _nothing_graded(message: str, visibility: str) -> dict:
    return {
        "score": 0.0,
        "output": message,
        "output_format": "text",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": _tests(visibility),
    }


def run(root: Path = DEFAULT_ROOT, config: dict | None = None) -> dict:
    """Grade the one submission under ``root`` and write ``root/results/results.json``.

    Parameters
    ----------
    root : Path, default /autograder
        Autograder folder (``submission/``, ``submission_metadata.json``, ``source/``), or a fake.
    config : dict, optional
        ``visibility``, ``timeout``, ``require_sandbox``, ``close_credit`` (from :func:`build_zip`);
        defaults ``after_due_date``, :data:`~lesson_lib.coursework.time_limits.DEFAULT_TIMEOUT_S`,
        False, :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`.

    Returns
    -------
    dict
    """
    root = Path(root)
    config = config or {}
    visibility = config.get("visibility", "after_due_date")
    if visibility not in VISIBILITIES:
        visibility = "after_due_date"
    timeout = float(config.get("timeout", DEFAULT_TIMEOUT_S))
    close_credit = config.get("close_credit", CLOSE_CREDIT)
    if not (isinstance(close_credit, int | float) and 0 <= close_credit <= 1):
        close_credit = CLOSE_CREDIT
    found = _problem_set_entries(root / "submission") if (root / "submission").is_dir() else []
    if not found:
        message = (
            "No notebook found in the submission: upload your problem set, "
            "<your ID>_problems.ipynb (for example s001_problems.ipynb)."
        )
        return _write_results(root, _nothing_graded(message, visibility))
    entry, extra = found[0], []
    if len(found) > 1:
        others = ", ".join(printable(e.name, 60) for e in found[1:4])
        extra.append(f"Several notebooks were uploaded; graded {entry.name}, not {others}.")
    meta = read_gradescope_metadata(_read_json(root / "submission_metadata.json"))
    salt_path, roster_path = root / "source" / "salt", root / "source" / "roster.csv"
    for private in (salt_path, roster_path):
        with contextlib.suppress(OSError):  # the grader's alone: the notebook never runs as root
            private.chmod(0o600)
    set_course_salt(read_salt_file(salt_path) if salt_path.is_file() else None)
    roster = read_roster(roster_path) if roster_path.is_file() else None
    identity = identify(entry, roster=roster, submitters=meta)
    sandbox = True
    try:
        require_sandbox()
    except SandboxUnavailable as err:
        # never as the autograder's own user, who reads the course salt and the roster
        missing = "" if config.get("require_sandbox") else spare_user_missing(sys.executable)
        if missing is not None:
            message = f"Not graded: the grader's sandbox cannot run in this container ({err})"
            if missing:
                message += f"; running the notebook as a spare unprivileged user instead {missing}"
            return _write_results(root, _nothing_graded(message + ".", visibility))
        sandbox = False
        extra.append(
            "Graded without the grader's sandbox (it cannot run in this container), as a spare "
            "unprivileged user who cannot read the course salt or the roster."
        )
    with tempfile.TemporaryDirectory(prefix="lesson-gradescope-") as work:
        sub = grade_notebook(
            identity.student,
            entry.path,
            timeout,
            sandbox=sandbox,
            workdir=Path(work),
            entry=entry,
            identity=identity,
            close_credit=float(close_credit),
        )
    results = _results_json(sub, visibility, extra)
    _write_results(root, results)
    print(f"{printable(sub.student, 80)}: {sub.total:g} / {sub.max_points:g} points ({sub.status})")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional

    Returns
    -------
    int
        0 on success, 2 on a usage error.
    """
    parser = argparse.ArgumentParser(prog="python -m lesson_lib.coursework.gradescope")
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="write the autograder zip")
    build.add_argument("--out", type=Path, default=Path("_build/gradescope/autograder.zip"))
    build.add_argument("--root", type=Path, default=Path.cwd(), help="the repository")
    build.add_argument("--visibility", default="after_due_date", choices=VISIBILITIES)
    build.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds per notebook (default {DEFAULT_TIMEOUT_S:g}, as make grade's)",
    )
    shipped = build.add_mutually_exclusive_group()
    shipped.add_argument(
        "--roster",
        type=Path,
        help="roster CSV to ship with the autograder (default: the student edition's "
        "roster.csv beside the course salt in use, when it exists)",
    )
    shipped.add_argument("--no-roster", action="store_true", help="ship no roster")
    build.add_argument(
        "--salt-file",
        type=Path,
        help="the course salt the student edition was made with (default: as make grade "
        "finds it; without one the public variants are graded)",
    )
    build.add_argument(
        "--require-sandbox",
        action="store_true",
        help="grade nothing where the sandbox cannot run (default: grade without it as a "
        "spare unprivileged user, noted, or nothing where no such user can be had)",
    )
    build.add_argument(
        "--close-credit",
        type=float,
        default=CLOSE_CREDIT,
        help=f"share of a problem's points a close answer earns, 0 to 1 (default {CLOSE_CREDIT:g})",
    )
    grade = commands.add_parser("run", help="grade /autograder/submission (run_autograder)")
    grade.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    grade.add_argument("--config", type=Path, help="config.json written by build")
    args = parser.parse_args(argv)
    if args.command == "build":
        salt_file = salt_file_in_use(args.salt_file)
        # the same roster make grade would read: named, else the issued IDs beside the salt
        roster = roster_file_in_use(args.roster, salt_file, off=args.no_roster)
        try:
            out = build_zip(
                args.out,
                args.root,
                visibility=args.visibility,
                timeout=args.timeout,
                roster=roster,
                salt_file=salt_file,
                require_sandbox_in_container=args.require_sandbox,
                close_credit=args.close_credit,
            )
        except (OSError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        variants = f"the course salt in {salt_file}" if salt_file else "public (no course salt)"
        print(f"wrote {out} (variants: {variants}): upload it as the assignment's autograder")
        if roster is None:
            print("roster: none (any valid ID)")
        else:
            print(
                f"roster: {roster}, shipped as roster.csv with its platform user ids and student "
                "IDs only (no names, sections or e-mails); --no-roster ships none"
            )
        return 0
    config = _read_json(args.config) if args.config is not None else None
    run(args.root, config if isinstance(config, dict) else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
