"""The class report: how a class did on each problem, and which mistakes were common.

Read from the grader's details and grades CSVs (:mod:`~lesson_lib.coursework.report_rows`) and
written as the instructor guide's "Points, close credit and the class report" describes; from the
command line (``make report``)::

    python -m lesson_lib.coursework.class_report _build/grades-details.csv --out _build/report
"""

from __future__ import annotations

import argparse
import collections
import csv
import html
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from matplotlib.figure import Figure

from lesson_lib.coursework.check import (
    _LOOK,
    CLOSE,
    CLOSE_CREDIT,
    RIGHT,
    UNANSWERED,
    UNREADABLE,
    WRONG,
    credit,
)
from lesson_lib.coursework.copies import CSV_HEADER, Copies, find_copies
from lesson_lib.coursework.files import manifest_of, refuse_mixed_set
from lesson_lib.coursework.manual_grading import LATE_FACTOR_COLUMN, MANUAL_PARTS
from lesson_lib.coursework.problems import PROBLEMS, get_problem, params
from lesson_lib.coursework.report_rows import (
    NOT_IN_GRADES,
    TWO_COPIES,
    CountedRow,
    CountedRows,
    counted_rows,
    read_csv_with,
    read_grades,
    rows_of_details,
)
from lesson_lib.coursework.roster import read_roster
from lesson_lib.coursework.run_options import read_options, salt_fingerprint
from lesson_lib.coursework.status import Status
from lesson_lib.coursework.variants import SALT_FILE_ENV, read_salt_file, salt_file_in_use, salted
from lesson_lib.model._safe_io import printable
from lesson_lib.model._validate import require_int, require_number

#: The statuses counted, in the order the report shows them.
STATUSES: tuple[str, ...] = (RIGHT, CLOSE, WRONG, UNANSWERED, UNREADABLE)

#: The columns a details CSV must have (the grader writes more).
REQUIRED_COLUMNS: tuple[str, ...] = ("student", "problem", "status")

#: A problem is split by variant when the class drew at most this many of them.
MAX_VARIANT_GROUPS = 12

#: A problem is split by variant only when on average at least this many students met each of its
#: variants (groups of one student say nothing a row per student does not).
MIN_PER_VARIANT = 2


@dataclass(frozen=True)
class VariantSummary:
    """One variant of a problem, as the class met it."""

    #: The variant's parameters, e.g. ``"n=2, latency_us=5"``.
    label: str
    #: Students who drew it.
    students: int
    #: Their mean points.
    mean_points: float
    #: The named mistake most of them made ("" when none was named).
    top_mistake: str
    #: How many made it.
    top_count: int


@dataclass(frozen=True)
class ProblemSummary:
    """How the class did on one problem."""

    qid: str
    max_points: float
    #: Rows read for it.
    answers: int
    #: Mean points per answer.
    mean_points: float
    #: Status -> how many answers got it, in :data:`STATUSES` order.
    statuses: dict[str, int]
    #: Named mistakes with their counts, most common first.
    mistakes: list[tuple[str, int]]
    #: One per variant when the class drew from 2 to :data:`MAX_VARIANT_GROUPS` of them, each met
    #: by :data:`MIN_PER_VARIANT` students on average; else empty.
    variants: list[VariantSummary] = field(default_factory=list)


@dataclass(frozen=True)
class ClassReport:
    """The class report (see :func:`class_report`)."""

    #: In the set's order.
    problems: list[ProblemSummary]
    #: Student -> problem -> points, before the late penalty.
    points: dict[str, dict[str, float]]
    #: The close credit the points were computed with.
    close_credit: float
    #: Student -> the counted row (file, late factor, a TA's points).
    rows: dict[str, CountedRow] = field(default_factory=dict)
    #: Why -> how many notebooks were left out for it.
    left_out: dict[str, int] = field(default_factory=dict)
    #: Student -> the files of an ID counted more than once, none counted.
    two_copies: dict[str, list[str]] = field(default_factory=dict)
    #: Answers that fit another student's variant, and identical answer sets
    #: (:mod:`~lesson_lib.coursework.copies`).
    copies: Copies = field(default_factory=Copies)

    @property
    def max_points(self) -> float:
        """The points of the problems in the report."""
        return sum(p.max_points for p in self.problems)

    def _row(self, student: str) -> CountedRow:
        return self.rows.get(student) or CountedRow(student, "")

    def student_max(self, student: str) -> float:
        """The most points of one student: the problems', plus each part a TA graded."""
        row = self._row(student)
        return self.max_points + sum(MANUAL_PARTS[q].points for q in row.manual)

    def totals(self) -> dict[str, float]:
        """Every student's total: the points and a TA's, times the late factor, to 4 decimals."""
        out = {}
        for student, by_q in self.points.items():
            row = self._row(student)
            earned = sum(by_q.values()) + sum(row.manual.values())
            out[student] = round(earned * row.late_factor, 4)
        return out


def read_details(path: Path) -> list[dict[str, str]]:
    """The rows of a details CSV (a file without the ``mistake`` column reads as all blank).

    Parameters
    ----------
    path : Path

    Returns
    -------
    list of dict

    Raises
    ------
    ValueError
        If a column of :data:`REQUIRED_COLUMNS` is missing.
    """
    rows = read_csv_with(path, REQUIRED_COLUMNS, "details", "write it with the grader's --details")
    return [{**row, "mistake": row.get("mistake") or _wrong_letter(row)} for row in rows]


def _wrong_letter(row: dict[str, str]) -> str:
    """A wrong letter of a multiple-choice problem, counted as its mistake (each letter has its
    own explanation): ``"q4.letter-b"``; "" for any other row."""
    problem, letter = PROBLEMS.get(row.get("problem", "")), (row.get("answer") or "").strip("'\" ")
    if problem is None or problem.kind != "choice" or row.get("status") != "wrong":
        return ""
    return f"{problem.qid}.letter-{letter.lower()}" if re.fullmatch("[A-Za-z]", letter) else ""


def _variant_label(qid: str, student: str) -> str:
    """The student's parameters of ``qid``, as ``name=value`` pairs ("?" if the ID is not valid)."""
    try:
        p = params(qid, student)
    except (TypeError, ValueError):
        return "?"
    return ", ".join(f"{k}={v}" for k, v in sorted(p.items()))


def _variants(qid: str, rows: list[dict[str, str]], points: list[float]) -> list[VariantSummary]:
    groups: dict[str, list[int]] = collections.defaultdict(list)
    most = min(MAX_VARIANT_GROUPS, len(rows) // MIN_PER_VARIANT)
    for i, row in enumerate(rows):
        groups[_variant_label(qid, row["student"])].append(i)
        if len(groups) > most:  # not split: the other students' variants need not be drawn
            return []
    if len(groups) < 2:
        return []
    out = []
    for label, members in sorted(groups.items()):
        named = collections.Counter(rows[i]["mistake"] for i in members if rows[i]["mistake"])
        top, count = (named.most_common(1) or [("", 0)])[0]
        mean = sum(points[i] for i in members) / len(members)
        out.append(VariantSummary(label, len(members), mean, top, count))
    return out


def class_report(
    rows: Iterable[dict[str, str]],
    close_credit: float = CLOSE_CREDIT,
    grades: Iterable[dict[str, str]] | None = None,
    issued: Iterable[str] = (),
) -> ClassReport:
    """Summarise a class's answers, problem by problem.

    Parameters
    ----------
    rows : iterable of dict
        Rows of a details CSV (:func:`read_details`).
    close_credit : float, default :data:`~lesson_lib.coursework.check.CLOSE_CREDIT`
        The share of a problem's points a close answer earns, 0 to 1.
    grades : iterable of dict, optional
        Rows of the same run's grades CSV: only its counted rows count
        (:func:`~lesson_lib.coursework.report_rows.counted_rows`). Without it every notebook of the
        details counts, on time, except the files of an ID handed in twice.
    issued : iterable of str, optional
        Every ID the course issued (the roster's), whose variants the copy check tries too.

    Returns
    -------
    ClassReport
        Rows of another problem, or whose status is not a verdict, are skipped.

    Raises
    ------
    ValueError
        If ``close_credit`` is outside 0 to 1, or a grades row's numbers are out of range.
    """
    close_credit = require_number("close_credit", close_credit, minimum=0.0, maximum=1.0)
    rows = list(rows)
    if grades is None:
        chosen: CountedRows = rows_of_details(rows)
        graded = set(chosen.counted)
    else:
        grades = list(grades)
        chosen = counted_rows(grades)
        graded = {(g["student"], g["file"]) for g in grades}
    left_out = collections.Counter(chosen.left_out)
    # a notebook in the details the grades CSV does not list: another run's, most likely
    strays = {(r["student"], r.get("file", "")) for r in rows} - graded
    if strays:
        left_out[NOT_IN_GRADES] += len(strays)
    by_problem: dict[str, list[dict[str, str]]] = collections.defaultdict(list)
    handed: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for row in rows:
        if (row["student"], row.get("file", "")) not in chosen.counted:
            continue
        if row.get("problem") in PROBLEMS and row.get("status") in STATUSES:
            by_problem[row["problem"]].append(row)
            if row["status"] != UNANSWERED and row.get("answer"):
                handed[row["student"]][row["problem"]] = row["answer"]
    points: dict[str, dict[str, float]] = {r.student: {} for r in chosen.counted.values()}
    summaries = []
    for qid in PROBLEMS:
        answers = by_problem.get(qid)
        if not answers:
            continue
        top_points = get_problem(qid).max_points
        earned = [credit(r["status"], close_credit) * top_points for r in answers]
        for row, got in zip(answers, earned, strict=True):
            points[row["student"]][qid] = got
        statuses = collections.Counter(r["status"] for r in answers)
        named = collections.Counter(r["mistake"] for r in answers if r["mistake"])
        summaries.append(
            ProblemSummary(
                qid=qid,
                max_points=top_points,
                answers=len(answers),
                mean_points=sum(earned) / len(answers),
                statuses={s: statuses.get(s, 0) for s in STATUSES},
                mistakes=named.most_common(),
                variants=_variants(qid, answers, earned),
            )
        )
    return ClassReport(
        summaries,
        points,
        close_credit,
        rows={r.student: r for r in chosen.counted.values()},
        left_out=dict(left_out),
        two_copies=chosen.two_copies,
        copies=find_copies(handed, issued),
    )


def _render_markdown(report: ClassReport, top: int = 3) -> str:
    """The report as Markdown tables: problems (``top`` named mistakes each, 1 to 20), variants."""
    top = require_int("top", top, minimum=1, maximum=20)
    totals = report.totals()
    lines = [
        "# Class report",
        "",
        f"{_count(len(totals), 'student')} counted; close answers earn "
        f"{report.close_credit:g} of a problem's points; the set is worth "
        f"{report.max_points:g} points.",
    ]
    if totals:
        mean_total = sum(totals.values()) / len(totals)
        most = sorted({report.student_max(s) for s in totals})
        of = f"{most[0]:g}" if len(most) == 1 else f"{most[0]:g} to {most[-1]:g}"
        lines.append(
            f"Mean total: {mean_total:.2f} of {of}, after each student's late factor "
            "(the grades CSV's total); the means per problem below are before it."
        )
    if report.left_out:
        why = "; ".join(
            f"{_count(n, 'notebook')} {_reason(r)}" for r, n in sorted(report.left_out.items())
        )
        lines += ["", f"Left out: {why}."]
    for student, files in sorted(report.two_copies.items()):
        named = ", ".join(_markdown_text(f) for f in files)
        lines.append(
            f"{_markdown_text(student)} has {len(files)} counted copies ({named}), none counted "
            "here; grade with --keep latest or --keep best to count one."
        )
    lines += [
        "",
        "| problem | points | mean | " + " | ".join(STATUSES) + " | most common mistakes |",
        "|---|---|---|" + "---|" * len(STATUSES) + "---|",
    ]
    for p in report.problems:
        common = "; ".join(f"`{m}` ({n})" for m, n in p.mistakes[:top]) or "none named"
        counts = " | ".join(str(p.statuses[s]) for s in STATUSES)
        lines.append(f"| {p.qid} | {p.max_points:g} | {p.mean_points:.2f} | {counts} | {common} |")
    split = [p for p in report.problems if p.variants]
    if split:
        lines += ["", "## By variant", ""]
        lines += ["| problem | variant | students | mean | most common mistake |"]
        lines += ["|---|---|---|---|---|"]
        for p in split:
            for v in p.variants:
                common = f"`{v.top_mistake}` ({v.top_count})" if v.top_mistake else "none named"
                lines.append(
                    f"| {p.qid} | {v.label} | {v.students} | {v.mean_points:.2f} | {common} |"
                )
    return "\n".join([*lines, "", *_copies_markdown(report.copies)]) + "\n"


def _copies_markdown(copies: Copies) -> list[str]:
    """The section on possible copies: signs to look into, never a penalty."""
    lines = [
        "## Possible copies",
        "",
        "Signs to look into, not a penalty (also in copies.csv):",
        "",
    ]
    for f in copies.fits_other:
        who, other = _markdown_text(f.student), _markdown_text(f.other)
        lines.append(
            f"- {who}'s numbers fit {other}'s variant better than their own: {f.fits} of "
            f"{f.answered} numeric answers right for {other}'s, {f.own} for their own."
        )
    for group, answered in copies.identical:
        named = ", ".join(_markdown_text(s) for s in group)
        lines.append(f"- identical answers to {answered} problems: {named}.")
    if len(lines) == 4:
        lines.append("- none: no answers fit another variant better, no two answer sets the same.")
    return lines


def _markdown_text(text: str) -> str:
    """Text a student chose (an ID, a file name) as any Markdown viewer shows it: as itself, its
    HTML escaped and Markdown's punctuation backslash-escaped, so no tag or link comes of it."""
    return re.sub(r"([\\`*_\[\]()#!|])", r"\\\1", html.escape(printable(text, 200), quote=False))


def _count(n: int, noun: str) -> str:
    """``1 student``, ``2 students``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _reason(why: str) -> str:
    """A reason of ``left_out`` as the report says it."""
    if why == Status.NOT_COUNTED:
        return f"of status {why!r} (copies --keep did not pick)"
    if why in (TWO_COPIES, NOT_IN_GRADES):
        return why
    return f"of status {why!r} (nobody's answers)"


def plot(report: ClassReport, top: int = 10) -> Figure:
    """Two panels: each problem's answers by verdict, and the class's most common mistakes.

    Parameters
    ----------
    report : ClassReport
    top : int, default 10
        How many named mistakes the right panel shows (1 to 30).

    Returns
    -------
    matplotlib.figure.Figure
    """
    top = require_int("top", top, minimum=1, maximum=30)
    fig = Figure(figsize=(11.0, 5.0), layout="constrained")
    by_status, common = fig.subplots(1, 2, width_ratios=[3, 2])
    qids = [p.qid for p in report.problems]
    left = [0.0] * len(qids)
    for status in STATUSES:
        share = [p.statuses[status] / p.answers for p in report.problems]
        by_status.barh(qids, share, left=left, color=_LOOK[status][0], label=status)
        left = [a + b for a, b in zip(left, share, strict=True)]
    by_status.invert_yaxis()
    by_status.set_xlim(0, 1)
    by_status.set_xlabel("share of the class's answers")
    by_status.set_title("Answers by verdict")
    by_status.legend(loc="lower center", bbox_to_anchor=(0.5, 1.06), ncol=len(STATUSES))
    counts = collections.Counter()
    for p in report.problems:
        counts.update(dict(p.mistakes))
    named = counts.most_common(top)
    if named:
        common.barh([m for m, _ in named], [n for _, n in named], color=_LOOK[WRONG][0])
        common.invert_yaxis()
    else:
        common.text(0.5, 0.5, "no named mistakes", ha="center", va="center")
    common.set_xlabel("answers")
    common.set_title("Most common named mistakes")
    return fig


def _write_points(report: ClassReport, path: Path) -> None:
    """Every student's points per problem, a TA's, ``late factor``, ``total`` and ``max``, as CSV."""
    qids = [p.qid for p in report.problems]
    totals = report.totals()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        manual = [part.column for part in MANUAL_PARTS.values()]
        out.writerow(["student", "file", *qids, *manual, LATE_FACTOR_COLUMN, "total", "max"])
        for student, by_q in sorted(report.points.items()):
            row = report._row(student)
            given = ["" if q not in row.manual else f"{row.manual[q]:g}" for q in MANUAL_PARTS]
            out.writerow(
                [
                    student,
                    row.file,
                    *[f"{by_q.get(q, 0.0):g}" for q in qids],
                    *given,
                    f"{row.late_factor:g}",
                    f"{totals[student]:g}",
                    f"{report.student_max(student):g}",
                ]
            )


def _salt_for(grades: Path) -> str | None:
    """The course salt found as the grader finds it, checked against the one the grades record."""
    found = salt_file_in_use()
    salt = read_salt_file(found) if found is not None else None
    recorded = read_options(grades)
    if recorded is not None and recorded["salt"] != salt_fingerprint(salt):
        drawn = "a course salt" if recorded["salt"] else "the public variants"
        raise ValueError(
            f"{grades} was graded with {drawn}, not with {found or 'no salt file'}: set "
            f"{SALT_FILE_ENV} to the salt file it was graded with ('' for none)"
        )
    return salt


def _issued(grades: Path) -> list[str]:
    """The IDs of the roster the grades were graded with (none when it cannot be read)."""
    roster = (read_options(grades) or {}).get("roster")
    try:
        return list(read_roster(Path(roster)).by_student) if roster else []
    except (OSError, ValueError):
        return []


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the report, the plot and the points beside each other.

    Parameters
    ----------
    argv : sequence of str, optional

    Returns
    -------
    int
        0 on success, 2 when the details or the grades cannot be read.
    """
    parser = argparse.ArgumentParser(
        prog="python -m lesson_lib.coursework.class_report",
        description="Per-problem means, verdicts and common mistakes from the grader's details.",
    )
    parser.add_argument("details", type=Path, help="details CSV written by the grader")
    parser.add_argument(
        "--grades",
        type=Path,
        help="the same run's grades CSV (default: grades.csv beside the details)",
    )
    parser.add_argument("--out", type=Path, default=Path("report"), help="folder to write into")
    parser.add_argument(
        "--close-credit",
        type=float,
        default=CLOSE_CREDIT,
        help=f"share of a problem's points a close answer earns, 0 to 1 (default {CLOSE_CREDIT})",
    )
    parser.add_argument("--top", type=int, default=3, help="mistakes listed per problem")
    args = parser.parse_args(argv)
    try:
        grades = args.grades or args.details.with_name("grades.csv")
        if not grades.is_file():
            raise ValueError(
                f"no grades CSV at {grades}: give --grades the grader's --out file "
                "of the same run (the report counts only its counted rows)"
            )
        refuse_mixed_set(manifest_of(grades))
        with salted(_salt_for(grades)):  # the variants are split by the students' own numbers
            report = class_report(
                read_details(args.details), args.close_credit, read_grades(grades), _issued(grades)
            )
        args.out.mkdir(parents=True, exist_ok=True)  # a file there: FileExistsError, said below
        (args.out / "class_report.md").write_text(_render_markdown(report, args.top), "utf-8")
        plot(report).savefig(args.out / "class_report.png", dpi=120)
        with (args.out / "copies.csv").open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows([CSV_HEADER, *report.copies.rows()])
        _write_points(report, args.out / "class_points.csv")
    except (OSError, ValueError) as err:
        print(f"class_report: {err}", file=sys.stderr)
        return 2
    left = sum(report.left_out.values())
    flagged = len(report.copies.rows())
    print(
        f"class_report: {_count(len(report.points), 'student')} counted, "
        f"{_count(left, 'notebook')} left out, {_count(flagged, 'copy flag')} -> {args.out}"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
