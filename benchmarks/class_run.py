"""A class run with one handed-out notebook: every graded answer compared with what it should get.

In a temporary folder: a roster of ``--students`` issued IDs and a course salt; the class notebook
(``python -m lesson_lib.coursework.student_edition --class-notebook``), handed out once; one
submission per student made from that one file, the student's ID typed into ``STUDENT`` and
answers for that student's own variant typed in, each written at the precision its problem
states (its decimals, its significant figures, or for "within N %" the fewest figures that are
sure to be within it: three). The class is a mix of scenarios:

- **right**: every answer right at the stated precision;
- **edge**: right, but each "within N %" answer 0.9 N % off (a slip the statement allows);
- **mistake**: right but for one or two problems holding one of the problem's named mistakes
  (:func:`~lesson_lib.coursework.problems.mistakes`), also written at the stated precision;
- **between**: right but for one or two problems whose answer lies 0.3, 0.45, 0.55 or 0.7 of
  the way from the reference to a named mistake's value, written at the stated precision;
- **blank**: right but for one to three problems left unanswered;
- **copy**: another student's answers, with one's own ID typed;
- some right ones **renamed** as a platform renames them (a Canvas download name ending
  ``Problems FINAL.ipynb``, and a bare ``Problems FINAL.ipynb``).

The folder is graded for real (``python -m lesson_lib.coursework.grade``, sandboxed, ``--jobs``,
``--roster``, ``--salt-file``) and timed; then every row of the details CSV is compared with what
its scenario expects, worked out from the statements' words rather than from the grader's rules:

- a right answer (within the stated decimals' or figures' half unit of the reference, within
  the stated percentage, a count exactly, the letter) gets ``right`` and full points;
- a mistake's value, or a "between" answer, gets that mistake named when it is outside the
  right answer's precision, nearer the mistake's value than the reference, and within 1 % of
  the mistake's value; otherwise that mistake may not be named;
- a blank answer gets ``not answered yet``;
- for every row, a copy's included, a named mistake must be one the answer is nearer to than to
  the reference, outside the right answer's precision.

Every submission must be graded as the ID typed, status ``ran``. The executed notebooks the
grader keeps show what each check cell told the student: it must never say right where the
grader does not, or name a mistake where the grader says right. Finally the class report runs
(``python -m lesson_lib.coursework.class_report``) and each copy must be flagged in
``copies.csv`` (fitting its source's variant, and an identical pair with it), nobody else.
Prints the grading's wall time and time per notebook, the mismatches (expected none) and the
copy flags; exits 1 on any mismatch. Run from the repository's root (needs bubblewrap)::

    .venv/bin/python benchmarks/class_run.py                  # 150 students, --jobs 2
    .venv/bin/python benchmarks/class_run.py --students 10 --keep
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lesson_lib.coursework.check_messages import RIGHT, UNANSWERED, WRONG  # noqa: E402
from lesson_lib.coursework.own_check import NOT_MATCHED  # noqa: E402
from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, reference  # noqa: E402
from lesson_lib.coursework.problems.bank import mistake_id  # noqa: E402
from lesson_lib.coursework.variants import SALT_FILE_ENV, read_salt_file, salted  # noqa: E402

#: The class size the run is stated for.
CLASS_SIZE = 150
#: A named mistake is looked for within this share of its value (the grader's match window).
MATCH_RTOL = 0.01
#: The share of a "within N %" tolerance an edge answer is off by.
EDGE_SHARE = 0.9
#: Mistake ids the rules give themselves (the answer in another unit, a count one off).
RULE_SLUGS = ("unit-", "off-by-one", "round-down")
#: How far from the reference towards a mistake's value a "between" answer lies.
BETWEEN_SHARES = (0.3, 0.45, 0.55, 0.7)
#: The order the counts are printed in.
COUNTS_ORDER = [
    "submissions graded",
    "renamed files graded as the typed ID",
    "right answers at the stated precision",
    "named-mistake answers",
    "  of which right at the stated precision",
    "  of which the mistake must be named",
    "  of which no mistake may be named",
    "blank answers",
    "copied answers",
    "named mistakes checked against the rule",
    "rule names (another unit, a count one off) not checked",
]
_FIRST = ("Ana", "Ben", "Chen", "Dara", "Eli", "Femi", "Gia", "Hugo", "Ines", "Jon", "Kofi", "Lea")
_LAST = ("Abe", "Brandt", "Costa", "Diaz", "Eze", "Fox", "Gupta", "Holm", "Ito", "Jung", "Kahn")
_LAST2 = ("Lund", "Moss", "Nagy", "Ortiz")


@dataclass
class Student:
    """One submission: whose it is, what was typed, and what each answer should get."""

    sid: str
    name: str
    user: str
    scenario: str = "right"
    #: The file's name in the submissions folder.
    file: str = ""
    #: Problem id -> the value typed (None: left blank).
    typed: dict[str, object] = field(default_factory=dict)
    #: Problem id -> the mistake injected (its id and value).
    injected: dict[str, tuple[str, float]] = field(default_factory=dict)
    #: For a copy: whose answers.
    source: str = ""


def names(count: int) -> list[str]:
    """``count`` distinct "First Last" names, as a roster holds them."""
    lasts = [a + b for a in _LAST for b in ("", *_LAST2)]
    return [f"{_FIRST[i % len(_FIRST)]} {lasts[i // len(_FIRST)]}" for i in range(count)]


def stated(qid: str, value: float) -> float | int:
    """``value`` written at the precision problem ``qid`` states: its decimals or significant
    figures; for "within N %" the fewest figures whose half unit is at most N % (1 % to 3 %: 3)."""
    problem = get_problem(qid)
    if problem.kind == "count":
        return int(value)
    if problem.decimals is not None:
        return round(value, problem.decimals)
    figures = problem.sig_figs
    if figures is None:
        figures = next(k for k in range(1, 12) if 0.5 * 10 ** (1 - k) <= problem.rtol)
    return float(f"{value:.{figures}g}")


def right_by_statement(qid: str, ref: float, typed: object) -> bool:
    """Whether ``typed`` is right as the statement words the precision (not the grader's band):
    within half a unit of the last place asked for, within the percentage, or exactly."""
    problem = get_problem(qid)
    if problem.kind != "number":
        return typed == ref
    value = float(typed)
    if problem.decimals is not None:
        half = 0.5 * 10.0**-problem.decimals
    elif problem.sig_figs is not None:
        rounded = float(f"{ref:.{problem.sig_figs}g}")
        half = 0.5 * 10.0 ** (math.floor(math.log10(abs(rounded))) - problem.sig_figs + 1)
    else:
        half = problem.rtol * abs(ref)
    return abs(value - ref) <= half * (1 + 1e-9)


def _numeric(qid: str) -> bool:
    return get_problem(qid).kind != "choice"


def plan_class(ids: list[str], people: list[str], seed: int) -> list[Student]:
    """Each student's scenario and typed answers (draw inside the course salt)."""
    rng = random.Random(seed)
    students = [
        Student(sid, name, str(10_000 + i))
        for i, (sid, name) in enumerate(zip(ids, people, strict=True))
    ]
    n = len(students)
    counts = {
        "copy": max(1, round(n * 0.02)),
        "mistake": max(2, round(n * 0.2)),
        "blank": max(1, round(n * 0.07)),
        "edge": max(1, round(n * 0.07)),
        "between": max(1, round(n * 0.07)),
    }
    order = list(range(n))
    rng.shuffle(order)
    at = 0
    for scenario, count in counts.items():
        for index in order[at : at + count]:
            students[index].scenario = scenario
        at += count
    refs = {s.sid: {q: reference(q, s.sid) for q in PROBLEMS} for s in students}
    for student in students:
        student.typed = {
            q: stated(q, float(r)) if _numeric(q) else r for q, r in refs[student.sid].items()
        }
    honest = [s for s in students if s.scenario == "right"]
    for student in students:
        sid, typed = student.sid, student.typed
        if student.scenario == "edge":
            for qid in PROBLEMS:
                problem = get_problem(qid)
                if (
                    problem.kind == "number"
                    and problem.decimals is None
                    and problem.sig_figs is None
                ):
                    sign = rng.choice((-1, 1))
                    slipped = float(refs[sid][qid]) * (1 + sign * EDGE_SHARE * problem.rtol)
                    typed[qid] = float(f"{slipped:.4g}")
        elif student.scenario == "mistake":
            chosen = [q for q in PROBLEMS if mistakes(q, sid)]
            for qid in rng.sample(chosen, rng.choice((1, 2))):
                wrong = rng.choice(mistakes(qid, sid))
                typed[qid] = stated(qid, wrong.value)
                student.injected[qid] = (mistake_id(qid, wrong.slug), wrong.value)
        elif student.scenario == "between":
            chosen = [q for q in PROBLEMS if mistakes(q, sid)]
            for qid in rng.sample(chosen, rng.choice((1, 2))):
                wrong = rng.choice(mistakes(qid, sid))
                share = rng.choice(BETWEEN_SHARES)
                ref = float(refs[sid][qid])
                typed[qid] = stated(qid, ref + share * (wrong.value - ref))
                student.injected[qid] = (mistake_id(qid, wrong.slug), wrong.value)
        elif student.scenario == "blank":
            for qid in rng.sample(list(PROBLEMS), rng.choice((1, 2, 3))):
                typed[qid] = None
        elif student.scenario == "copy":
            source = rng.choice(honest)
            student.source = source.sid
            student.typed = dict(source.typed)
    renamed = rng.sample(honest, min(len(honest), 4 if n >= 20 else 2))
    for student in students:
        student.file = f"{student.sid}.ipynb"
    for i, student in enumerate(renamed):
        last, first = student.name.split()[1].lower(), student.name.split()[0].lower()
        canvas = f"{last}{first}_{student.user}_{70_000 + i}_Problems FINAL.ipynb"
        student.scenario += "+renamed"
        student.file = ("Problems FINAL.ipynb", "Problems FINAL (1).ipynb", canvas, canvas)[i]
    return students


def write_submission(handout: nbformat.NotebookNode, student: Student, folder: Path) -> None:
    """Type the ID and the answers into a copy of the handed-out notebook, as the student would."""
    nb = nbformat.reads(nbformat.writes(handout), as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("coursework")
        if meta == "student-id":
            assert 'STUDENT = ""' in cell.source, cell.source
            cell.source = cell.source.replace('STUDENT = ""', f"STUDENT = {student.sid!r}", 1)
        elif meta == "answer":
            qid = cell.source.split("=")[0].strip()[len("answer_") :]
            cell.source = f"answer_{qid} = {student.typed.get(qid)!r}"
        elif meta == "reasoning":  # the part a person reads
            cell.source = 'why_q12 = "the fewest GPUs that hold the model and its cache"'
    nbformat.write(nb, folder / student.file)


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    run = subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, cwd=ROOT, env=env
    )
    if run.returncode != 0:
        sys.exit(f"{' '.join(args[:1])} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    return run


def _mistake_values(qid: str, sid: str) -> dict[str, float]:
    return {mistake_id(qid, m.slug): m.value for m in mistakes(qid, sid)}


def compare(
    students: list[Student], details: list[dict], grades: list[dict]
) -> tuple[list, Counter]:
    """Mismatches (student, problem, scenario, typed, expected, got) and counts of what was checked."""
    mismatches, counts = [], Counter()
    by_file = {s.file: s for s in students}
    rows_of = {s.sid: [] for s in students}
    for row in grades:
        student = by_file.get(row["file"])
        if student is None:
            mismatches.append((row["student"], "", "", row["file"], "no such file", row["status"]))
            continue
        counts["submissions graded"] += 1
        if row["student"] != student.sid or row["status"] != "ran":
            got = f"{row['student']}, {row['status']}: {row['notes'][:80]}"
            mismatches.append(
                (student.sid, "", student.scenario, student.file, "ran as typed ID", got)
            )
        if "renamed" in student.scenario and row["student"] == student.sid:
            counts["renamed files graded as the typed ID"] += 1
    for row in details:
        if row["student"] in rows_of:
            rows_of[row["student"]].append(row)
    for student in students:
        sid = student.sid
        if len(rows_of[sid]) != len(PROBLEMS):
            mismatches.append(
                (sid, "", student.scenario, "", f"{len(PROBLEMS)} rows", len(rows_of[sid]))
            )
        for row in rows_of[sid]:
            qid, status, mistake = row["problem"], row["status"], row["mistake"]
            typed = student.typed[qid]
            ref = reference(qid, sid)
            full = float(row["points"]) == float(row["max"])
            expect = ""
            values = _mistake_values(qid, sid)
            for named in filter(None, mistake.split("+")):
                value = values.get(named)
                if value is None and named.split(".", 1)[1].startswith(RULE_SLUGS):
                    counts["rule names (another unit, a count one off) not checked"] += 1
                elif value is None:
                    expect = f"no {named} (not among the problem's mistakes)"
                else:
                    counts["named mistakes checked against the rule"] += 1
                    ok = (
                        typed is not None
                        and not right_by_statement(qid, ref, typed)
                        and abs(float(typed) - value) < abs(float(typed) - float(ref))
                    )
                    if not ok:
                        expect = f"no {named} (rule fails)"
            if student.scenario.startswith("copy"):
                counts["copied answers"] += 1
            elif typed is None:
                counts["blank answers"] += 1
                if status != UNANSWERED or float(row["points"]) != 0:
                    expect = UNANSWERED
            elif qid in student.injected:
                counts["named-mistake answers"] += 1  # or between
                wanted, value = student.injected[qid]
                if right_by_statement(qid, ref, typed):
                    counts["  of which right at the stated precision"] += 1
                    if status != RIGHT or not full:
                        expect = RIGHT
                elif abs(float(typed) - value) < abs(float(typed) - float(ref)) and abs(
                    float(typed) - value
                ) <= MATCH_RTOL * abs(value):
                    counts["  of which the mistake must be named"] += 1
                    if status != WRONG or wanted not in mistake.split("+"):
                        expect = f"wrong, {wanted}"
                else:
                    counts["  of which no mistake may be named"] += 1
                    if wanted in mistake.split("+"):
                        expect = f"not {wanted}"
            else:
                counts["right answers at the stated precision"] += 1
                if not right_by_statement(qid, ref, typed):
                    expect = "(the benchmark typed a wrong 'right' answer)"
                elif status != RIGHT or not full:
                    expect = f"{RIGHT}, full points"
            if expect:
                got = f"{status} {row['points']}/{row['max']} {mistake}".strip()
                mismatches.append((sid, qid, student.scenario, repr(typed), expect, got))
    return mismatches, counts


def self_checks(
    students: list[Student], feedback: Path, details: list[dict]
) -> tuple[list, Counter]:
    """What each executed notebook's own check cells said beside the grader's verdict:
    (contradictions, counts of (grader, self-check) pairs). A contradiction is a self-check
    saying right where the grader does not, naming a mistake where the grader says right, or
    not saying right for an answer typed at the stated precision the grader graded right (an
    answer at the edge of a "within N %" may say "not matched": the self-check's stated limit)."""
    graded = {(row["student"], row["problem"]): row for row in details}
    contradictions, counts = [], Counter()
    for student in students:
        if student.scenario.startswith("copy"):
            continue
        nb = nbformat.read(feedback / f"{student.sid}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code" or not cell.source.startswith("check("):
                continue
            qid = cell.source.split('"')[1]
            text = cell.outputs[0]["data"]["text/plain"] if cell.outputs else ""
            said = text[len(qid) + 2 :].split(".")[0]
            status = graded[(student.sid, qid)]["status"]
            counts[(status, said)] += 1
            edge = student.scenario.startswith("edge") and said == NOT_MATCHED
            numeric_right = status == RIGHT and _numeric(qid) and not edge
            if ((said == RIGHT) != (status == RIGHT) and (said == RIGHT or numeric_right)) or (
                said == WRONG and status == RIGHT
            ):
                row = (student.sid, qid, student.scenario, repr(student.typed[qid]), status, said)
                contradictions.append(row)
    return contradictions, counts


def check_copies(students: list[Student], rows: list[dict]) -> tuple[list[str], list[str]]:
    """(lines saying how each copy was flagged, flags nobody expected)."""
    said, unexpected = [], []
    copies = {s.sid: s.source for s in students if s.scenario.startswith("copy")}
    for sid, source in sorted(copies.items()):
        fits = [r for r in rows if r["kind"] == "fits another variant" and r["student"] == sid]
        pair = [
            r
            for r in rows
            if r["kind"] == "identical answers" and {r["student"], r["other"]} == {sid, source}
        ]
        fit = f"fits {fits[0]['other']}'s variant ({fits[0]['right_other']} right against "
        fit = fit + f"{fits[0]['right_own']} own)" if fits else "NOT flagged as fitting another"
        ok = bool(fits) and fits[0]["other"] == source and bool(pair)
        said.append(
            f"{sid} copied {source}: {fit}; identical pair: {'yes' if pair else 'NO'}"
            + ("" if ok else "  <- MISMATCH")
        )
    for row in rows:
        if row["student"] not in copies and row["other"] not in copies:
            unexpected.append(", ".join(row.values()))
    return said, unexpected


def _read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main(argv: list[str] | None = None) -> int:
    """Make the class, grade it, compare, report the copies; 1 on any mismatch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=CLASS_SIZE)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="class-run-"))
    try:
        return _class_run(work, args)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _class_run(work: Path, args: argparse.Namespace) -> int:
    ids = [f"s{i:03d}" for i in range(1, args.students + 1)]
    people = names(len(ids))
    roster, salt_file = work / "roster.csv", work / "course" / "salt"
    salt_file.parent.mkdir()
    with roster.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["lms_user_id", "name", "section", "student_id", "email"])
        for i, (sid, name) in enumerate(zip(ids, people, strict=True)):
            email = name.lower().replace(" ", ".") + "@example.edu"
            out.writerow([str(10_000 + i), name, f"A{i % 3 + 1}", sid, email])
    made = time.monotonic()
    _run(
        [
            "lesson_lib.coursework.student_edition",
            *("--out", str(work / "handout"), "--ids-file", str(roster)),
            *("--salt-file", str(salt_file), "--class-notebook", "--pages", "problems"),
        ]
    )
    (notebook,) = (work / "handout").glob("*.ipynb")
    handout = nbformat.read(notebook, as_version=4)
    with salted(read_salt_file(salt_file)):
        students = plan_class(ids, people, args.seed)
    folder = work / "submissions"
    folder.mkdir()
    for student in students:
        write_submission(handout, student, folder)
    scenarios = Counter(s.scenario for s in students)
    print(
        f"{len(students)} submissions from one handed-out notebook ({notebook.name}), made in "
        f"{time.monotonic() - made:.1f} s: "
        + ", ".join(f"{count} {name}" for name, count in sorted(scenarios.items()))
    )
    out = work / "out"
    out.mkdir()
    load = os.getloadavg()[0]
    started = time.monotonic()
    _run(
        [
            "lesson_lib.coursework.grade",
            str(folder),
            *("--out", str(out / "grades.csv"), "--details", str(out / "details.csv")),
            *("--salt-file", str(salt_file), "--roster", str(roster), "--jobs", str(args.jobs)),
        ]
    )
    wall = time.monotonic() - started
    print(
        f"graded (sandboxed, --jobs {args.jobs}): {wall:.1f} s wall, "
        f"{wall / len(students):.2f} s per notebook; load average {load:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after"
    )
    with salted(read_salt_file(salt_file)):
        mismatches, counts = compare(
            students, _read_csv(out / "details.csv"), _read_csv(out / "grades.csv")
        )
    for name in sorted(counts, key=COUNTS_ORDER.index):
        print(f"  {name}: {counts[name]}")
    print(f"mismatches: {len(mismatches)} (expected 0)")
    if mismatches:
        print("| student | problem | scenario | typed | expected | got |")
        print("|---|---|---|---|---|---|")
        for row in mismatches:
            print("| " + " | ".join(str(cell) for cell in row) + " |")
    contradictions, said = self_checks(students, out / "feedback", _read_csv(out / "details.csv"))
    print("the executed notebooks' own check cells beside the grader (copies left out):")
    for (status, check), count in sorted(said.items()):
        print(f"  grader {status!r}, self-check {check!r}: {count}")
    print(f"  contradictions: {len(contradictions)} (expected 0)")
    for row in contradictions:
        print("    " + " | ".join(str(cell) for cell in row))
    env = {**os.environ, SALT_FILE_ENV: str(salt_file)}
    report = _run(
        [
            "lesson_lib.coursework.class_report",
            str(out / "details.csv"),
            *("--grades", str(out / "grades.csv"), "--out", str(out / "report")),
        ],
        env=env,
    )
    print(report.stdout.strip())
    said, unexpected = check_copies(students, _read_csv(out / "report" / "copies.csv"))
    for line in said:
        print(f"  {line}")
    print(f"  flags on students who did not copy: {len(unexpected)} (expected 0)")
    for line in unexpected:
        print(f"    {line}")
    copy_ok = all("MISMATCH" not in line for line in said) and not unexpected
    if "Possible copies" not in (out / "report" / "class_report.md").read_text():
        print("  the class report has no 'Possible copies' section")
        copy_ok = False
    return 0 if not mismatches and not contradictions and copy_ok else 1


if __name__ == "__main__":
    sys.exit(main())
