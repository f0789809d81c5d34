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
    ("q23", None): 1333.3333333333333,
    ("q23", "s001"): 1739.4285714285716,
    ("q23", "s042"): 347.8857142857143,
    ("q23", "s1234567"): 384.0,
    ("q23", "u77"): 1739.4285714285716,
    ("q24", None): 1.6243554557551565,
    ("q24", "s001"): 8.680555555555555,
    ("q24", "s042"): 4.674145299145299,
    ("q24", "s1234567"): 2.170138888888889,
    ("q24", "u77"): 1.669337606837607,
    ("q25", None): 3.2949253731343284,
    ("q25", "s001"): 8.414925373134327,
    ("q25", "s042"): 3.2949253731343284,
    ("q25", "s1234567"): 6.510446297204512,
    ("q25", "u77"): 4.855223148602256,
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
    ("q5", None): "24c84e73005ba5b4",
    ("q5", "s001"): "33c6a85c658de698",
    ("q5", "s042"): "bb20e14715ec5db1",
    ("q5", "s1234567"): "f25bbf9395116de0",
    ("q5", "u77"): "8202a959111817b1",
    ("q6", None): "09d28b77245fedc7",
    ("q6", "s001"): "2f8b8ea3fc112439",
    ("q6", "s042"): "b04456421ddbc17c",
    ("q6", "s1234567"): "c0c9ece864fafe43",
    ("q6", "u77"): "70f1e49947b07c3d",
    ("q7", None): "0ba370ca14a1c779",
    ("q7", "s001"): "7aa74ec7366347a4",
    ("q7", "s042"): "597682c100e26b02",
    ("q7", "s1234567"): "dec80cead7125cc7",
    ("q7", "u77"): "f302e04d901512b1",
    ("q8", None): "ffcbede715ed2295",
    ("q8", "s001"): "330e25701869c931",
    ("q8", "s042"): "778156f953c31e5a",
    ("q8", "s1234567"): "a07ac73c052e5714",
    ("q8", "u77"): "bd6285abb6d69024",
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
    ("q11", None): "d127d5e10b1c6898",
    ("q11", "s001"): "d754cf2343da2579",
    ("q11", "s042"): "8102e462b481e085",
    ("q11", "s1234567"): "d127d5e10b1c6898",
    ("q11", "u77"): "c74b1e386d95406a",
    ("q12", None): "75c09d1e07b8121e",
    ("q12", "s001"): "ff3eacf1666c731a",
    ("q12", "s042"): "e352167de3116890",
    ("q12", "s1234567"): "e0ac9351c8fc5c02",
    ("q12", "u77"): "c1be92b3fdc6fece",
    ("q13", None): "d44e833ec213ea1e",
    ("q13", "s001"): "428c0f27a76cd919",
    ("q13", "s042"): "84f920dfc50f8966",
    ("q13", "s1234567"): "0f81e969169daca7",
    ("q13", "u77"): "e9cfdeab5e64aaad",
    ("q14", None): "a601d2bb518b3120",
    ("q14", "s001"): "12bf141654cd1abc",
    ("q14", "s042"): "0da1d4bead1a8673",
    ("q14", "s1234567"): "2da825a676411255",
    ("q14", "u77"): "3fa5462ad3231b28",
    ("q15", None): "1909b5e71879544a",
    ("q15", "s001"): "5f5938f8a7e9939b",
    ("q15", "s042"): "8065e465364d7ce6",
    ("q15", "s1234567"): "0f0a0087bbe2d8cb",
    ("q15", "u77"): "fccff910d9876f21",
    ("q16", None): "bf39d79e8c00ca78",
    ("q16", "s001"): "66fbc11d5fc1e74f",
    ("q16", "s042"): "2bf30f9357455b89",
    ("q16", "s1234567"): "acee4e3cb28f9aac",
    ("q16", "u77"): "acee4e3cb28f9aac",
    ("q17", None): "2b08565dafb30591",
    ("q17", "s001"): "2b08565dafb30591",
    ("q17", "s042"): "13da406053925a0b",
    ("q17", "s1234567"): "2afbbd43d8d6f3df",
    ("q17", "u77"): "f9f4bdea73a24e51",
    ("q18", None): "7844bc4341528c6a",
    ("q18", "s001"): "d156bcdcdf7d2eb7",
    ("q18", "s042"): "bc5b4c017c235310",
    ("q18", "s1234567"): "222d6ba33175991b",
    ("q18", "u77"): "a1721e80b6522be8",
    ("q19", None): "4feb3388192cd755",
    ("q19", "s001"): "3025a070101fcf30",
    ("q19", "s042"): "3025a070101fcf30",
    ("q19", "s1234567"): "ae8e8ae1fc1455bc",
    ("q19", "u77"): "87eeeeac47d232d8",
    ("q20", None): "90b45a038a2043e5",
    ("q20", "s001"): "2abe0739bfed95fb",
    ("q20", "s042"): "384a755f57049d7f",
    ("q20", "s1234567"): "4baa72f271b973a1",
    ("q20", "u77"): "4baa72f271b973a1",
    ("q21", None): "a8f29f67b8d1ee45",
    ("q21", "s001"): "2a8434e96cded575",
    ("q21", "s042"): "15a5966d2bef4ca9",
    ("q21", "s1234567"): "2a8434e96cded575",
    ("q21", "u77"): "8dfc6a83ef2c163b",
    ("q22", None): "33eca2a19bf7699b",
    ("q22", "s001"): "e7d5d987e30dd7a7",
    ("q22", "s042"): "64726260ede0e7ee",
    ("q22", "s1234567"): "8082653e3a3a2ed1",
    ("q22", "u77"): "0923c7fed8915794",
    ("q23", None): "8072deead72ad1a6",
    ("q23", "s001"): "fbb3ff2c0b8a70db",
    ("q23", "s042"): "902f85637b325539",
    ("q23", "s1234567"): "3861423eb8ebf300",
    ("q23", "u77"): "fbb3ff2c0b8a70db",
    ("q24", None): "83d835679bd8482e",
    ("q24", "s001"): "8cd3b45b6c6e666c",
    ("q24", "s042"): "d846fc07e7f0e5b7",
    ("q24", "s1234567"): "b410fb04d5c6f7e6",
    ("q24", "u77"): "771cf5ca0e86b199",
    ("q25", None): "594ffe83fef78649",
    ("q25", "s001"): "d616339bd02d030c",
    ("q25", "s042"): "594ffe83fef78649",
    ("q25", "s1234567"): "aa67c62c5d24aa33",
    ("q25", "u77"): "91d1db702daf6d8a",
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
