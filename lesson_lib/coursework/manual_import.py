"""Merge a TA's filled-in reasoning files into a grades CSV already written, without grading again::

    python -m lesson_lib.coursework.manual_import DIR --out _build/grades.csv

as ``--manual-import DIR`` does at the end of a run (:mod:`~lesson_lib.coursework.manual_grading`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from lesson_lib.coursework.graded import problem_points
from lesson_lib.coursework.grades_csv import SCORES_HEADER, write_rows
from lesson_lib.coursework.manual_grading import import_into


def merge(grades: Path, folder: Path) -> tuple[int, Path | None]:
    """Merge ``folder``'s filled-in files into the grader's CSV ``grades``, atomically.

    Parameters
    ----------
    grades, folder : Path

    Returns
    -------
    (int, Path or None)
        Points cells filled, and where the previous grades file was kept.
    """
    return import_into(grades, folder, SCORES_HEADER, problem_points(), write_rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional

    Returns
    -------
    int
        0 merged, 2 a file could not be merged (nothing written).
    """
    parser = argparse.ArgumentParser(prog="python -m lesson_lib.coursework.manual_import")
    parser.add_argument("folder", type=Path, help="the filled-in files of --manual-export")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="grades CSV")
    args = parser.parse_args(argv)
    try:
        filled, kept = merge(args.out, args.folder)
    except (OSError, ValueError) as err:
        print(f"error: {err}; nothing written", file=sys.stderr)
        return 2
    print(
        f"merged {filled} points cell(s) into {args.out}"
        + (f" (the previous one is kept as {kept})" if kept else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
