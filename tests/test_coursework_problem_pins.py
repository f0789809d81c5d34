"""Pinned answers of the problem bank: ids, variants and answers survive refactors.

The literal tables below were computed from the problem set before it was
split into one module per problem (``lesson_lib/coursework/problems/``), for
the book's version (no ID) and four student IDs. ``REFERENCES`` holds each
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
    ("q10", None): 15,
    ("q10", "s001"): 15,
    ("q10", "s042"): 23,
    ("q10", "s1234567"): 3,
    ("q10", "u77"): 6,
    ("q11", None): 41.48320895522388,
    ("q11", "s001"): 39.48320895522389,
    ("q11", "s042"): 36.97265625,
    ("q11", "s1234567"): 41.48320895522388,
    ("q11", "u77"): 66.7257233938205,
    ("q12", None): "d",
    ("q12", "s001"): "b",
    ("q12", "s042"): "b",
    ("q12", "s1234567"): "c",
    ("q12", "u77"): "b",
}
FINGERPRINTS = {
    ("q1", None): "71bf108c0d060c55",
    ("q1", "s001"): "5524ad067efcabc9",
    ("q1", "s042"): "9497097b8f5a8908",
    ("q1", "s1234567"): "5524ad067efcabc9",
    ("q1", "u77"): "5524ad067efcabc9",
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
    ("q4", None): "dcbb4501613d3cb7",
    ("q4", "s001"): "6b497ce1c9720545",
    ("q4", "s042"): "a25f238316756f99",
    ("q4", "s1234567"): "f7b0a8ab62390fa8",
    ("q4", "u77"): "f7b0a8ab62390fa8",
    ("q5", None): "23e0b553fcdb4c72",
    ("q5", "s001"): "8913245a1f6a4c0f",
    ("q5", "s042"): "b5295f6aed7638c2",
    ("q5", "s1234567"): "df91c2b214fb33c6",
    ("q5", "u77"): "a5bae0ce317a734c",
    ("q6", None): "cb2b9c834e195b16",
    ("q6", "s001"): "9361e64f529814c7",
    ("q6", "s042"): "c8cc98aa87a043a3",
    ("q6", "s1234567"): "3e967e28c89f616f",
    ("q6", "u77"): "d5647308215dbfd2",
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
    ("q10", None): "c8d4d8eee0cf2b70",
    ("q10", "s001"): "d40e6221f47d63a9",
    ("q10", "s042"): "ab48c1f167378813",
    ("q10", "s1234567"): "64c878d378099b94",
    ("q10", "u77"): "fafcb54e35538f36",
    ("q11", None): "a5ec7634310afa0f",
    ("q11", "s001"): "97bfc51a56dee954",
    ("q11", "s042"): "40c2fb83b9e7029b",
    ("q11", "s1234567"): "a5ec7634310afa0f",
    ("q11", "u77"): "1e47e418ccf938c0",
    ("q12", None): "5ae766f7d0db5f1b",
    ("q12", "s001"): "02e38d5cd4370823",
    ("q12", "s042"): "79de9b109a0a59e0",
    ("q12", "s1234567"): "6de6836195f8ead9",
    ("q12", "u77"): "79de9b109a0a59e0",
}


def test_the_ids_are_the_pinned_ones():
    """The twelve pinned problems come first, q1..q12, in order."""
    assert list(PROBLEMS)[:12] == [f"q{i}" for i in range(1, 13)]
    assert {q for q, _ in REFERENCES} == set(PROBLEMS)


@pytest.mark.parametrize(("qid", "student"), list(REFERENCES))
def test_reference_answer_is_pinned(qid, student):
    """The variant's reference answer is the one computed before the refactor."""
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
