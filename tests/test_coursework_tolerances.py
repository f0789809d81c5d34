"""Tolerances that match the words: an answer at the precision a statement asks for is right.

Each numeric problem's statement says the precision it expects ("to 2 decimal
places", "to 3 significant figures", "within 1 %", "a whole number"). Read from
the statement's own words, for 500 student IDs (their variants): the reference
rounded to that precision, and the values just inside the edges of the rounding
(the rounded value plus or minus 0.499 of a unit in its last place; for a
percentage, the reference times 1 plus or minus 0.999 of it) must get "right"
from check(), whatever named mistake lies near. An answer nearer the reference
than a mistake is never reported as that mistake.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

import pytest

from lesson_lib.coursework.check import check
from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, reference, statement
from lesson_lib.coursework.problems.bank import mistake_id

IDS = [f"s{i:04d}" for i in range(500)]
NUMERIC = [q for q, p in PROBLEMS.items() if p.kind != "choice"]
#: Just under half a unit in the last place, and just under a stated percentage.
EDGE, PERCENT_EDGE = 0.499, 0.999
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_PRECISION = re.compile(
    r"to (?P<decimals>\d+|one|two|three|four|five) decimal places?"
    r"|to (?P<figures>\d+|one|two|three|four|five) significant figures?"
    r"|within (?P<percent>\d+(?:\.\d+)?) ?%"
    r"|(?P<whole>a whole number)"
)


def stated_precision(text: str) -> tuple[str, float]:
    """The one precision a statement words: ``("decimals", 2)``, ``("figures", 3)``,
    ``("percent", 1.0)`` or ``("whole", 0)``."""
    found = {
        (kind, float(_WORDS.get(word, word)) if kind != "whole" else 0.0)
        for match in _PRECISION.finditer(text)
        for kind, word in match.groupdict().items()
        if word
    }
    assert len(found) == 1, f"the statement must state one precision, found {sorted(found)}"
    return found.pop()


def roundings(value: float, places: int) -> set[float]:
    """``value`` to ``places`` decimals (negative: to tens, hundreds ...), ties to even and up."""
    quantum = Decimal(1).scaleb(-places)
    return {
        float(Decimal(value).quantize(quantum, mode)) for mode in (ROUND_HALF_EVEN, ROUND_HALF_UP)
    }


def answers_at_precision(ref: float, kind: str, size: float) -> list[float]:
    """The reference rounded as stated (either way at a tie), and just inside its edges."""
    if kind == "whole":
        return [ref]
    if kind == "percent":
        # Within p %: p = 1 is met by 3 significant figures (at most 0.5 % off), and so on.
        figures = next(n for n in range(1, 9) if 0.5 * 10.0 ** (1 - n) <= size / 100)
        spread = PERCENT_EDGE * size / 100 * abs(ref)
        return [float(f"{ref:.{figures - 1}e}"), ref - spread, ref + spread]
    places = int(size)
    if kind == "figures":
        # Counted on the rounded value: 9.996 to 3 figures is 10.0, to 1 decimal.
        places = int(size) - 1 - int(f"{ref:.{int(size) - 1}e}".split("e")[1])
    unit = 10.0**-places
    return [a for r in roundings(ref, places) for a in (r, r - EDGE * unit, r + EDGE * unit)]


@pytest.mark.parametrize("qid", NUMERIC)
def test_an_answer_at_the_stated_precision_is_right(qid):
    """Over 500 variants: rounded as asked, or at the edge of that rounding, is right."""
    kind, size = stated_precision(statement(qid))
    failures = []
    for student in IDS:
        ref = float(reference(qid, student))
        for answer in answers_at_precision(ref, kind, size):
            verdict = check(qid, answer, student)
            if verdict.status != "right":
                failures.append((student, ref, answer, verdict.status, verdict.mistake))
    assert not failures, (
        f"{len(failures)} answers at the stated precision not right: {failures[:5]}"
    )


@pytest.mark.parametrize("qid", NUMERIC)
def test_an_answer_nearer_the_reference_is_never_taken_for_a_mistake(qid):
    """Over 50 variants: 45 % of the way from the reference to a mistake is not that mistake."""
    failures = []
    for student in IDS[:50]:
        ref = float(reference(qid, student))
        for m in mistakes(qid, student):
            verdict = check(qid, ref + 0.45 * (m.value - ref), student)
            if mistake_id(qid, m.slug) in verdict.mistake.split("+"):
                failures.append((student, ref, m.slug, m.value))
    assert not failures, f"{len(failures)} answers taken for a farther mistake: {failures[:5]}"


def test_q21_three_figures_beat_the_forgotten_state():
    """The instructor's case: 173 ms to three figures, 173.363 ms exact, is right.

    By hand: 173 is 0.363 ms (0.21 %) from the reference and 0.5 ms is half a unit
    in the last place of three figures, so 173 rounds right; the mistake of
    leaving out the state lies 0.9 % lower, nearer 173 than the reference is
    not enough: the right answer comes first.
    """
    student = next(s for s in IDS if round(reference("q21", s), 3) == 173.363)
    assert stated_precision(statement("q21", student)) == ("figures", 3.0)
    verdict = check("q21", 173, student)
    assert (verdict.status, verdict.mistake) == ("right", "")


def test_bands_by_hand():
    """173.363 to 3 figures is 173, right from 172.5 to 173.5; 9.996 is 10.0, whose last place is
    0.1 (9.95 to 10.05: every number that rounds to 10.0, and a little more below it). 2.1875 to 3
    decimals is a tie, 2.187 or 2.188 by the rounding rule: 2.1865 to 2.1885. Within 1 % of 7:
    6.93 to 7.07. A count exactly."""
    figures = get_problem("q21")
    assert figures.right_band(173.363) == pytest.approx((172.5, 173.5))
    assert figures.right_band(9.996) == pytest.approx((9.95, 10.05))
    assert get_problem("q3").right_band(2.1875) == pytest.approx((2.1865, 2.1885))
    assert get_problem("q5").right_band(7.0) == pytest.approx((6.93, 7.07))
    assert get_problem("q10").right_band(16) == (16, 16)
