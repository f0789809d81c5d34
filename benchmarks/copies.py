"""Copy detection's time for a class: ``--students`` IDs, each handing in its own right answers,
one in ten another student's, checked by ``lesson_lib.coursework.copies.find_copies`` against
every student's variant, salted as a course is. Prints the seconds and what was flagged.

Goal: a class of 150 (150 x 150 variants, every numeric problem) in a few seconds. Run from the
repository's root::

    .venv/bin/python benchmarks/copies.py                  # 150 students
    .venv/bin/python benchmarks/copies.py --students 500
"""

from __future__ import annotations

import argparse
import time

from lesson_lib.coursework.copies import find_copies
from lesson_lib.coursework.problems import PROBLEMS, reference
from lesson_lib.coursework.variants import salted

#: Seconds the class of 150 may take.
GOAL_S = 5.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=150)
    args = parser.parse_args(argv)
    ids = [f"s{i:03d}" for i in range(1, args.students + 1)]
    with salted("0f" * 32):
        # one in ten hands in the answers of the student before
        answers = {
            sid: {q: repr(reference(q, ids[i - 1] if i % 10 == 9 else sid)) for q in PROBLEMS}
            for i, sid in enumerate(ids)
        }
        started = time.perf_counter()
        found = find_copies(answers)
        seconds = time.perf_counter() - started
    print(
        f"{args.students} students x {args.students} variants x {len(PROBLEMS)} problems: "
        f"{seconds:.2f} s (goal for 150: {GOAL_S:g} s); {len(found.fits_other)} fit another "
        f"variant, {len(found.identical)} identical set(s) (expected {args.students // 10} each)"
    )
    return 0 if args.students > 150 or seconds <= GOAL_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
