"""Pinned answers of the problem bank: ids, variants and answers survive refactors.

A snapshot, not a derivation: the literal tables below were computed by the
problem bank (``lesson_lib/coursework/problems/``) for the book's version
(no ID) and four student IDs. ``REFERENCES`` holds each
reference answer; ``FINGERPRINTS`` a hash of everything else a student or the
checker sees (parameters, statement, solution, mistakes with hints, choices,
title, tolerances). A change of the lesson's model that is meant to move them
regenerates both tables with ``python tests/test_coursework_problem_pins.py``
(review the diff: only the intended problems may change).
"""

from __future__ import annotations

import hashlib
import json

import pytest
from numpy.testing import assert_allclose

from lesson_lib.coursework.problems import (
    PROBLEMS,
    get_problem,
    mistakes,
    params,
    reference,
    solution_text,
    statement,
)

STUDENTS = [None, "s001", "s042", "s1234567", "u77"]


def fingerprint(qid: str, student: str | None) -> str:
    """Hash of what a student and the checker see of one variant, answer aside."""
    problem = get_problem(qid)
    p = params(qid, student)
    choices = problem.choices(p) if problem.choices else []
    blob = json.dumps(
        [
            p,
            statement(qid, student),
            solution_text(qid, student),
            [(round(m.value, 9), m.hint) for m in mistakes(qid, student)],
            [(c.text, c.why, c.correct) for c in choices],
            problem.title,
            problem.chapter,
            problem.difficulty,
            problem.kind,
            problem.unit,
            problem.decimals,
            problem.rtol,
            problem.close_rtol,
            problem.hint,
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


REFERENCES = {
    ("q1", None): 140.0,
    ("q1", "s001"): 68.0,
    ("q1", "s042"): 16.0,
    ("q1", "s1234567"): 68.0,
    ("q1", "u77"): 68.0,
    ("q2", None): 40.0,
    ("q2", "s001"): 24.0,
    ("q2", "s042"): 32.0,
    ("q2", "s1234567"): 50.0,
    ("q2", "u77"): 12.0,
    ("q3", None): 2.1875,
    ("q3", "s001"): 1.75,
    ("q3", "s042"): 3.333333333333333,
    ("q3", "s1234567"): 2.4000000000000004,
    ("q3", "u77"): 2.0,
    ("q4", None): "c",
    ("q4", "s001"): "b",
    ("q4", "s042"): "d",
    ("q4", "s1234567"): "a",
    ("q4", "u77"): "a",
    ("q5", None): 7.2298507462686565,
    ("q5", "s001"): 5.949850746268656,
    ("q5", "s042"): 13.881785188818046,
    ("q5", "s1234567"): 6.012499999999999,
    ("q5", "u77"): 4.669850746268657,
    ("q6", None): 1.3863766456783058,
    ("q6", "s001"): 1.4227733934611049,
    ("q6", "s042"): 1.775199140045754,
    ("q6", "s1234567"): 1.440428030797338,
    ("q6", "u77"): 1.3545540497951467,
    ("q7", None): 2.133333333333333,
    ("q7", "s001"): 1.28,
    ("q7", "s042"): 0.9999999999999999,
    ("q7", "s1234567"): 6.0,
    ("q7", "u77"): 22.499999999999996,
    ("q8", None): 251.65823999999998,
    ("q8", "s001"): 671.08864,
    ("q8", "s042"): 4.473924266666667,
    ("q8", "s1234567"): 13.4217728,
    ("q8", "u77"): 251.65823999999998,
    ("q9", None): "b",
    ("q9", "s001"): "c",
    ("q9", "s042"): "b",
    ("q9", "s1234567"): "a",
    ("q9", "u77"): "c",
    ("q10", None): 16,
    ("q10", "s001"): 16,
    ("q10", "s042"): 26,
    ("q10", "s1234567"): 3,
    ("q10", "u77"): 6,
    ("q11", None): 41.48320895522388,
    ("q11", "s001"): 39.48320895522389,
    ("q11", "s042"): 36.97265625,
    ("q11", "s1234567"): 41.48320895522388,
    ("q11", "u77"): 66.7257233938205,
    ("q12", None): "e",
    ("q12", "s001"): "b",
    ("q12", "s042"): "e",
    ("q12", "s1234567"): "d",
    ("q12", "u77"): "b",
    ("q13", None): 22.305533333333333,
    ("q13", "s001"): 19.380533333333336,
    ("q13", "s042"): 7.465866666666668,
    ("q13", "s1234567"): 4.965866666666668,
    ("q13", "u77"): 12.465866666666665,
    ("q14", None): 292.96875,
    ("q14", "s001"): 195.31249999999997,
    ("q14", "s042"): 502.23214285714283,
    ("q14", "s1234567"): 48.82812499999999,
    ("q14", "u77"): 878.90625,
    ("q15", None): 1013.6041253882353,
    ("q15", "s001"): 1999.4974079231843,
    ("q15", "s042"): 1977.0717342436367,
    ("q15", "s1234567"): 2942.3386435482284,
    ("q15", "u77"): 1002.0801308979486,
    ("q16", None): 1.8181024870315603,
    ("q16", "s001"): 1.5496921723834651,
    ("q16", "s042"): 1.4486719310839913,
    ("q16", "s1234567"): 1.758938610299078,
    ("q16", "u77"): 1.6773028296207104,
    ("q17", None): 11.1015625,
    ("q17", "s001"): 11.1015625,
    ("q17", "s042"): 6.34375,
    ("q17", "s1234567"): 8.8125,
    ("q17", "u77"): 0.75,
    ("q18", None): 1.6799999999999997,
    ("q18", "s001"): 2.1679999999999997,
    ("q18", "s042"): 2.77,
    ("q18", "s1234567"): 1.84,
    ("q18", "u77"): 1.7799999999999996,
    ("q19", None): 5.527565435887987,
    ("q19", "s001"): 5.964001601413677,
    ("q19", "s042"): 5.964001601413677,
    ("q19", "s1234567"): 5.250139277793211,
    ("q19", "u77"): 5.894097675844874,
    ("q20", None): 13.841299520000002,
    ("q20", "s001"): 11.55147168,
    ("q20", "s042"): 4.2487952,
    ("q20", "s1234567"): 6.93314976,
    ("q20", "u77"): 6.93314976,
    ("q21", None): 86.69406623999998,
    ("q21", "s001"): 43.359533119999995,
    ("q21", "s042"): 11.53213856,
    ("q21", "s1234567"): 43.359533119999995,
    ("q21", "u77"): 43.74439328,
    ("q22", None): 36,
    ("q22", "s001"): 271,
    ("q22", "s042"): 18,
    ("q22", "s1234567"): 71,
    ("q22", "u77"): 36,
}
FINGERPRINTS = {
    ("q1", None): "97d5ff5044cd95d2",
    ("q1", "s001"): "b93e78becfac05f4",
    ("q1", "s042"): "f9478b0660640353",
    ("q1", "s1234567"): "b93e78becfac05f4",
    ("q1", "u77"): "b93e78becfac05f4",
    ("q2", None): "9568f6c896ddc485",
    ("q2", "s001"): "b8b2573f13285d52",
    ("q2", "s042"): "a97fbc86b876f230",
    ("q2", "s1234567"): "c7e0943f172bc314",
    ("q2", "u77"): "50a6ed3a1a0f660e",
    ("q3", None): "216d561efb472aaa",
    ("q3", "s001"): "2d31ad8b3fce3997",
    ("q3", "s042"): "e0303f0742e49312",
    ("q3", "s1234567"): "50a14f31cb436fc4",
    ("q3", "u77"): "c160605110d1d6c4",
    ("q4", None): "9320d752526edfa3",
    ("q4", "s001"): "f83bc231c28f135e",
    ("q4", "s042"): "86730a6ce822e97d",
    ("q4", "s1234567"): "ff31cc518a00c87f",
    ("q4", "u77"): "ff31cc518a00c87f",
    ("q5", None): "5d28ef67ab07c17b",
    ("q5", "s001"): "c5de3eb626576c9a",
    ("q5", "s042"): "3734a0c56086d609",
    ("q5", "s1234567"): "b30192e77c14039f",
    ("q5", "u77"): "683f157a41616f27",
    ("q6", None): "6ae46402aefac3a4",
    ("q6", "s001"): "3343c472063b4511",
    ("q6", "s042"): "2d082afa5a15be41",
    ("q6", "s1234567"): "8d019ac9c5834676",
    ("q6", "u77"): "5db26219cc4e5384",
    ("q7", None): "04c5433f0a98ebdf",
    ("q7", "s001"): "07032a2b29f54a38",
    ("q7", "s042"): "584f369c3ea632fb",
    ("q7", "s1234567"): "e1dd61df46229b3e",
    ("q7", "u77"): "e94c6268fe894cf8",
    ("q8", None): "7c6774d787e4f28d",
    ("q8", "s001"): "5cd5c29878239cac",
    ("q8", "s042"): "f0a0ab9c1bef272e",
    ("q8", "s1234567"): "276f4ea19b3013ed",
    ("q8", "u77"): "9c0ad63d8196da0e",
    ("q9", None): "aef252ad6ae5a447",
    ("q9", "s001"): "5c7910aeffd0bc32",
    ("q9", "s042"): "3c338b03f2e86bc4",
    ("q9", "s1234567"): "ca699b5a6c63cbc5",
    ("q9", "u77"): "041ef91dabfa074d",
    ("q10", None): "13e99bc3367a087b",
    ("q10", "s001"): "2894b7c04c4394d6",
    ("q10", "s042"): "80a2c8d3f6fcf889",
    ("q10", "s1234567"): "84a200afe6abbf81",
    ("q10", "u77"): "ea387270733b1a8a",
    ("q11", None): "633994457c68690a",
    ("q11", "s001"): "658eeb60e0defd8a",
    ("q11", "s042"): "9c391841da9f57c7",
    ("q11", "s1234567"): "633994457c68690a",
    ("q11", "u77"): "d4f085da6c29bb35",
    ("q12", None): "9f3a31d1fc121ef9",
    ("q12", "s001"): "cc5639c77e849677",
    ("q12", "s042"): "4114236b8ce6cd58",
    ("q12", "s1234567"): "d050e2c40e382983",
    ("q12", "u77"): "b3bb41d35130342b",
    ("q13", None): "eecd524a2646463e",
    ("q13", "s001"): "de5ff31326bf65d2",
    ("q13", "s042"): "19234a298677817d",
    ("q13", "s1234567"): "0d4ef78f0730fd15",
    ("q13", "u77"): "80503970f0787db5",
    ("q14", None): "de476dd40b966d58",
    ("q14", "s001"): "9c0b0343f981833b",
    ("q14", "s042"): "b1837c173a17f922",
    ("q14", "s1234567"): "302b397d5990ecbb",
    ("q14", "u77"): "c61f2de8aef75d19",
    ("q15", None): "8eb67c28bb112ac6",
    ("q15", "s001"): "77cc19111071abe8",
    ("q15", "s042"): "28438e233d069f27",
    ("q15", "s1234567"): "ddfff4d3f7fb2b7a",
    ("q15", "u77"): "be119930fe7eac5a",
    ("q16", None): "fc1c51bbfea67595",
    ("q16", "s001"): "a1c5fc4fe833b5fd",
    ("q16", "s042"): "b1283186adca3c9b",
    ("q16", "s1234567"): "2b3a829265071f60",
    ("q16", "u77"): "d0b0720b3632ff66",
    ("q17", None): "b86545e0a113940f",
    ("q17", "s001"): "b86545e0a113940f",
    ("q17", "s042"): "3f78ea18f4c8d905",
    ("q17", "s1234567"): "b6efceb217d74623",
    ("q17", "u77"): "53ca5ba671777a9d",
    ("q18", None): "0dccf519056ec8d7",
    ("q18", "s001"): "b03dd5c5b2f9064b",
    ("q18", "s042"): "1a085d738bbd1c3f",
    ("q18", "s1234567"): "f31d1c5fbefd45da",
    ("q18", "u77"): "185ad26dd7a56ea0",
    ("q19", None): "a827f14a65c1a2a5",
    ("q19", "s001"): "34b6db1bd195a717",
    ("q19", "s042"): "34b6db1bd195a717",
    ("q19", "s1234567"): "c2015d7408a2b46e",
    ("q19", "u77"): "30b36f75debb2939",
    ("q20", None): "8055775991a9f384",
    ("q20", "s001"): "e86b64fec28b2156",
    ("q20", "s042"): "4d29c00e328bf1a8",
    ("q20", "s1234567"): "27a5e43089eb49e7",
    ("q20", "u77"): "27a5e43089eb49e7",
    ("q21", None): "985db86c03999040",
    ("q21", "s001"): "fbb9680620768b62",
    ("q21", "s042"): "041bcdd2758bc065",
    ("q21", "s1234567"): "fbb9680620768b62",
    ("q21", "u77"): "33df2f63c740ee66",
    ("q22", None): "3f089245895a8ceb",
    ("q22", "s001"): "e88cd37f6f190e39",
    ("q22", "s042"): "5d1b1f63b259292b",
    ("q22", "s1234567"): "066942465d351424",
    ("q22", "u77"): "d54d4485b4731966",
}


def test_the_ids_are_the_pinned_ones():
    """The ids increase from q1, and every problem is pinned."""
    numbers = [int(qid[1:]) for qid in PROBLEMS]
    assert numbers[0] == 1 and numbers == sorted(set(numbers))
    assert {q for q, _ in REFERENCES} == set(PROBLEMS)


@pytest.mark.parametrize(("qid", "student"), list(REFERENCES))
def test_reference_answer_is_pinned(qid, student):
    """The variant's reference answer is the pinned one."""
    expected = REFERENCES[qid, student]
    got = reference(qid, student)
    if isinstance(expected, str):
        assert got == expected
    else:
        assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(("qid", "student"), list(FINGERPRINTS))
def test_statement_solution_and_mistakes_are_pinned(qid, student):
    """Parameters, texts, mistakes and tolerances hash to the pinned value."""
    assert fingerprint(qid, student) == FINGERPRINTS[qid, student]


def _regenerate() -> str:  # pragma: no cover - run by hand after a deliberate change
    lines = ["REFERENCES = {"]
    lines += [f"    ({q!r}, {s!r}): {reference(q, s)!r}," for q in PROBLEMS for s in STUDENTS]
    lines += ["}", "FINGERPRINTS = {"]
    lines += [f"    ({q!r}, {s!r}): {fingerprint(q, s)!r}," for q in PROBLEMS for s in STUDENTS]
    return "\n".join([*lines, "}"])


if __name__ == "__main__":  # pragma: no cover
    print(_regenerate())
