"""Pinned answers of the problem bank: ids, variants and answers survive refactors.

A snapshot, not a derivation: the literal tables below were computed by the
problem bank (``lesson_lib/coursework/problems/``) for the book's version
(no ID) and four student IDs. ``REFERENCES`` holds each
reference answer; ``FINGERPRINTS`` a hash of everything else a student or the
checker sees (parameters, statement, solution, mistakes with their ids and hints, choices,
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
            [(m.slug, round(m.value, 9), m.hint) for m in mistakes(qid, student)],
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
    ("q1", "s001"): 96.6,
    ("q1", "s042"): 18.0,
    ("q1", "s1234567"): 98.8,
    ("q1", "u77"): 107.2,
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
    ("q5", "s042"): 14.265785188818047,
    ("q5", "s1234567"): 6.012499999999999,
    ("q5", "u77"): 5.053850746268656,
    ("q6", None): 1.3863766456783058,
    ("q6", "s001"): 1.4227733934611049,
    ("q6", "s042"): 1.775199140045754,
    ("q6", "s1234567"): 1.440428030797338,
    ("q6", "u77"): 1.3545540497951467,
    ("q7", None): 2.034505208333333,
    ("q7", "s001"): 1.220703125,
    ("q7", "s042"): 0.9536743164062499,
    ("q7", "s1234567"): 5.7220458984375,
    ("q7", "u77"): 21.45767211914062,
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
    ("q16", "s001"): 1.5786441724102456,
    ("q16", "s042"): 1.5234993020009306,
    ("q16", "s1234567"): 1.8181024870315603,
    ("q16", "u77"): 1.8181024870315603,
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
    ("q19", "s001"): 5.893769153879697,
    ("q19", "s042"): 5.893769153879697,
    ("q19", "s1234567"): 5.262428452557673,
    ("q19", "u77"): 5.896044197438277,
    ("q20", None): 13.841299520000002,
    ("q20", "s001"): 8.86711712,
    ("q20", "s042"): 2.90661792,
    ("q20", "s1234567"): 4.2487952,
    ("q20", "u77"): 4.2487952,
    ("q21", None): 86.69406623999998,
    ("q21", "s001"): 43.359533119999995,
    ("q21", "s042"): 11.53213856,
    ("q21", "s1234567"): 43.359533119999995,
    ("q21", "u77"): 43.74439328,
    ("q22", None): 36,
    ("q22", "s001"): 509,
    ("q22", "s042"): 18,
    ("q22", "s1234567"): 94,
    ("q22", "u77"): 47,
}
FINGERPRINTS = {
    ("q1", None): "11f28f261daf2220",
    ("q1", "s001"): "7f443e32591888f7",
    ("q1", "s042"): "ce8aada5f6a7a6af",
    ("q1", "s1234567"): "49c29c56fb01cbf3",
    ("q1", "u77"): "e6dde6779d3ef983",
    ("q2", None): "ebca6381d3579e37",
    ("q2", "s001"): "ed97ebd137c8f193",
    ("q2", "s042"): "3f4924821a6ab8ff",
    ("q2", "s1234567"): "8f3585dd4a4feac6",
    ("q2", "u77"): "faaf161cbf021b32",
    ("q3", None): "54970a9464d7f1cd",
    ("q3", "s001"): "07f8dab277f4513e",
    ("q3", "s042"): "282c6550e90cdd24",
    ("q3", "s1234567"): "6106644629df323d",
    ("q3", "u77"): "8173439d0839cc44",
    ("q4", None): "9b224cca417be0c0",
    ("q4", "s001"): "fd49c90ff09c78ce",
    ("q4", "s042"): "9c57648edf454980",
    ("q4", "s1234567"): "9f06ebd4d4f53333",
    ("q4", "u77"): "9f06ebd4d4f53333",
    ("q5", None): "37450fddd748aa1d",
    ("q5", "s001"): "02856c3840145c8b",
    ("q5", "s042"): "5ad74c0d7d9327ae",
    ("q5", "s1234567"): "f18bf7126bcd843d",
    ("q5", "u77"): "606a475fd5ac05ad",
    ("q6", None): "5a148cd733a813e4",
    ("q6", "s001"): "e23a12ee886b4e82",
    ("q6", "s042"): "42dbd59da60a78a9",
    ("q6", "s1234567"): "f0d9f0da3bae3e06",
    ("q6", "u77"): "60fdac9b9ab0d23d",
    ("q7", None): "bcf9fa54e663637b",
    ("q7", "s001"): "c4d8b6ca3c54d1c6",
    ("q7", "s042"): "69459b211e9c0d83",
    ("q7", "s1234567"): "88688e0ecd5e8032",
    ("q7", "u77"): "518b04272e9ff890",
    ("q8", None): "ef3ea765c31e592a",
    ("q8", "s001"): "bc5e001579dcaaaf",
    ("q8", "s042"): "2485eb276a73a257",
    ("q8", "s1234567"): "7faec18d1c243f6c",
    ("q8", "u77"): "3eeb896c4333d98d",
    ("q9", None): "0ee2f50ddd3810a0",
    ("q9", "s001"): "4c65fb92cec8a4b1",
    ("q9", "s042"): "beac5e7d5a7d60e6",
    ("q9", "s1234567"): "c7c7858022ada78f",
    ("q9", "u77"): "7194bb35a6bfaabb",
    ("q10", None): "ca66fb455b3a7a93",
    ("q10", "s001"): "abcde97118355b01",
    ("q10", "s042"): "b6a5181ac5a980e0",
    ("q10", "s1234567"): "bc13bee21ca3b0c2",
    ("q10", "u77"): "848045fb418daa0f",
    ("q11", None): "2028c012592d732d",
    ("q11", "s001"): "00fa4ec86ee0fe02",
    ("q11", "s042"): "0f8dce165163eaf6",
    ("q11", "s1234567"): "2028c012592d732d",
    ("q11", "u77"): "9857353ce581a222",
    ("q12", None): "75c09d1e07b8121e",
    ("q12", "s001"): "ff3eacf1666c731a",
    ("q12", "s042"): "e352167de3116890",
    ("q12", "s1234567"): "e0ac9351c8fc5c02",
    ("q12", "u77"): "c1be92b3fdc6fece",
    ("q13", None): "10d3301c18f2d45e",
    ("q13", "s001"): "f1e78f82694b35bd",
    ("q13", "s042"): "b817f2d5353e00fb",
    ("q13", "s1234567"): "7c544679fb1238aa",
    ("q13", "u77"): "2d7c19107ef4a4e8",
    ("q14", None): "e015b725d5212d71",
    ("q14", "s001"): "30d737ff29258694",
    ("q14", "s042"): "05018276bb9440b8",
    ("q14", "s1234567"): "f2fa7a34944932cf",
    ("q14", "u77"): "8cf3992a7bd230bf",
    ("q15", None): "b10f7b9f4d3bf28f",
    ("q15", "s001"): "348de27514e60e50",
    ("q15", "s042"): "cf643e92009fc68a",
    ("q15", "s1234567"): "48da77a29a3fcfe1",
    ("q15", "u77"): "ba829ff6143a88db",
    ("q16", None): "b5bde9b0f6ea1df6",
    ("q16", "s001"): "748c8fe9a7db0c52",
    ("q16", "s042"): "32e748df59d828f9",
    ("q16", "s1234567"): "4aedb007c0de3b2c",
    ("q16", "u77"): "4aedb007c0de3b2c",
    ("q17", None): "2b08565dafb30591",
    ("q17", "s001"): "2b08565dafb30591",
    ("q17", "s042"): "13da406053925a0b",
    ("q17", "s1234567"): "2afbbd43d8d6f3df",
    ("q17", "u77"): "f9f4bdea73a24e51",
    ("q18", None): "d9d81927712d327d",
    ("q18", "s001"): "dfcd52ed65806abd",
    ("q18", "s042"): "3e542beb8f510aa7",
    ("q18", "s1234567"): "63a09c7038c00ad6",
    ("q18", "u77"): "85bdd0d84811d562",
    ("q19", None): "b665f83c05b12ff1",
    ("q19", "s001"): "261724d434357598",
    ("q19", "s042"): "261724d434357598",
    ("q19", "s1234567"): "cdf4562e91528d93",
    ("q19", "u77"): "b93a88025df19422",
    ("q20", None): "26841d126baef77a",
    ("q20", "s001"): "6439b1f188191745",
    ("q20", "s042"): "7bdf8e598981dd00",
    ("q20", "s1234567"): "ad5d012d995acf06",
    ("q20", "u77"): "ad5d012d995acf06",
    ("q21", None): "cb61429b5aaf0898",
    ("q21", "s001"): "6aefde110b554952",
    ("q21", "s042"): "945b89919c3b7ca7",
    ("q21", "s1234567"): "6aefde110b554952",
    ("q21", "u77"): "19a093c487daea7f",
    ("q22", None): "33eca2a19bf7699b",
    ("q22", "s001"): "e7d5d987e30dd7a7",
    ("q22", "s042"): "64726260ede0e7ee",
    ("q22", "s1234567"): "8082653e3a3a2ed1",
    ("q22", "u77"): "0923c7fed8915794",
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
