"""The self-checker: reference answers pass, usual mistakes get the right hint, odd input never raises."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson_lib.coursework.check import (
    CLOSE,
    RIGHT,
    UNANSWERED,
    UNREADABLE,
    WRONG,
    CheckResult,
    check,
    check_all,
    page_contract,
)
from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, reference

STUDENTS = [None] + [f"s{i:03d}" for i in range(30)]
STATUSES = {RIGHT, CLOSE, WRONG, UNANSWERED, UNREADABLE}
NUMERIC = [q for q, p in PROBLEMS.items() if p.kind != "choice"]


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_every_variants_reference_answer_is_right(qid):
    """The checker accepts lesson_lib's own answer for the book and 30 students."""
    for student in STUDENTS:
        result = check(qid, reference(qid, student), student)
        assert result.status == RIGHT, (qid, student, result)
        assert result.score == 1.0


@pytest.mark.parametrize("qid", NUMERIC)
def test_reference_with_its_unit_as_a_string_is_right(qid):
    """'2.1875 MiB' works as well as 2.1875, and so does an upper-case letter unit."""
    problem = get_problem(qid)
    for student in STUDENTS[:5]:
        ref = reference(qid, student)
        assert check(qid, f"{ref} {problem.unit}", student).status == RIGHT
        assert check(qid, f"{ref:.12g}{problem.unit}", student).status == RIGHT


@pytest.mark.parametrize("qid", NUMERIC)
def test_every_known_mistake_is_wrong_with_a_hint(qid):
    """Each listed mistake is rejected with its own hint (or a unit hint), never the generic one."""
    problem = get_problem(qid)
    for student in STUDENTS:
        for m in mistakes(qid, student):
            result = check(qid, m.value, student)
            assert result.status == WRONG, (qid, student, m, result)
            assert result.message != f"Hint: {problem.hint}", (qid, student, m)


def test_gb_for_gib_hint():
    """Giving GiB where GB is asked (and the reverse) names the two unit systems."""
    gb = reference("q1")
    result = check("q1", gb * 1e9 / 2**30)
    assert result.status == WRONG
    assert "GiB" in result.message and "10^9" in result.message
    result = check("q2", reference("q2") * 2**30 / 1e9)
    assert result.status == WRONG and "2^30" in result.message


def test_payload_instead_of_wire_bytes_hint():
    """The payload alone is 'payload, not the bytes on the wire'."""
    payload = reference("q3") / 1.75
    result = check("q3", payload)
    assert result.status == WRONG
    assert "payload" in result.message and "2(N-1)/N" in result.message


def test_forgotten_ring_factor_in_crossover_hint():
    """alpha x B for N = 4 forgets to divide by 2(N-1)/N."""
    result = check("q7", reference("q7") * 1.5)
    assert result.status == WRONG
    assert "2(N-1)/N" in result.message


def test_ms_for_us_hints():
    """A time 1000x too large or small names the time units."""
    result = check("q5", reference("q5") * 1000)
    assert result.status == WRONG and "us" in result.message and "ms" in result.message
    result = check("q11", reference("q11") / 1000)
    assert result.status == WRONG and "ms" in result.message


def test_ideal_speedup_hint():
    """Answering 2 for doubling the GPUs gets the 'latency stays' hint."""
    result = check("q6", 2)
    assert result.status == WRONG and "latency" in result.message


def test_kv_heads_replicated_hint():
    """q10's trap: splitting 2 KV heads over 4 GPUs as if the cache shrank 4-fold."""
    trap = [m for m in mistakes("q10") if "replicated" in m.hint]
    assert trap
    result = check("q10", trap[0].value)
    assert result.status == WRONG and "replicated" in result.message


def test_wrong_choice_explains_itself():
    """A wrong letter says why that option is wrong; the letter is read leniently."""
    right = reference("q4")
    wrong = next(x for x in "abcd" if x != right)
    result = check("q4", wrong)
    assert result.status == WRONG and result.message
    assert check("q4", f"({right.upper()})").status == RIGHT
    assert check("q4", f" {right}. ").status == RIGHT


def test_close_answers():
    """2 % off a time, or one sequence off, is close (half a point)."""
    result = check("q5", reference("q5") * 1.02)
    assert result.status == CLOSE and result.score == 0.5
    assert check("q10", reference("q10") + 1).status == CLOSE
    # One fewer is what reading the '80 GB' label as 10^9 bytes gives: that hint wins.
    assert "as PyTorch counts it" in check("q10", reference("q10") - 1).message
    assert check("q10", reference("q10") + 0.5).status == CLOSE


def test_result_names_the_rule_that_gave_it():
    """70 GB for q1 (140 GB: 70 billion bf16 weights) is its first mistake; 140 is right."""
    assert check("q1", 70).rule == "mistake 1"
    assert check("q1", "140.0 GB").rule == "right"
    assert check("q1", 140).message == "The reference answer is 140 GB."
    assert check("q1", 140e9 / 2**30).rule == "in GiB"
    assert check("q1", 150).rule == "hint"
    assert check("q4", "c").rule == "choice c"
    assert check("q1", "lots").rule == check("q1", None).rule == ""


def test_converted_units_are_read_and_reported():
    """An answer in another unit of the same kind is converted, and the message says so."""
    ref = reference("q3")
    result = check("q3", f"{ref * 2**20 / 1e6:.6f} MB")
    assert result.status == RIGHT
    assert "read '" in result.message


@pytest.mark.parametrize("qid", list(PROBLEMS))
@pytest.mark.parametrize("answer", [None, ..., "", "   "])
def test_blank_answers_are_not_answered_yet(qid, answer):
    """None (the answer cells' starting value) reads as 'not answered yet', with what to write."""
    result = check(qid, answer)
    assert result.status == UNANSWERED
    assert "not answered yet" in str(result)
    assert f"answer_{qid}" in result.message


class _Hostile:
    def __repr__(self):
        raise RuntimeError("no repr")

    def __float__(self):
        raise RuntimeError("no float")

    def __len__(self):
        raise RuntimeError("no len")


ODD = [
    float("nan"),
    float("inf"),
    -float("inf"),
    np.nan,
    np.float32("nan"),
    "1.8 MiB",
    "1.8 parsecs",
    "1,5",
    "1e999",
    "nan",
    "abc",
    "b",
    [1.5],
    [],
    (1, 2),
    {"a": 1},
    set(),
    b"1.5",
    True,
    False,
    3 + 1j,
    10**400,
    np.array([1.0, 2.0]),
    np.array(2.0),
    object(),
    _Hostile(),
    "<script>alert(1)</script>",
]


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_odd_inputs_never_raise(qid):
    """Whatever a student types, check returns a result that says what it expected."""
    for answer in ODD:
        result = check(qid, answer)
        assert isinstance(result, CheckResult)
        assert result.status in STATUSES
        assert result.message
        if result.status == UNREADABLE:
            assert "expected" in result.message, (qid, answer, result)
        str(result)
        result._repr_html_()


def test_nan_and_lists_explain_what_was_expected():
    """NaN and a list are unreadable, and the message asks for one plain number in the unit."""
    result = check("q3", float("nan"))
    assert result.status == UNREADABLE and "MiB" in result.message
    result = check("q3", [2.1875])
    assert result.status == UNREADABLE and "list" in result.message
    result = check("q3", "1.8 parsecs")
    assert result.status == UNREADABLE and "unknown unit" in result.message


def test_html_output_is_escaped():
    """A student's string never lands in the page as HTML."""
    html = check("q1", "<script>alert(1)</script>")._repr_html_()
    assert "<script>" not in html


@given(st.one_of(st.text(max_size=30), st.floats(), st.integers(), st.none(), st.booleans()))
def test_arbitrary_answers_never_raise(answer):
    """Random strings, floats (NaN and inf included) and integers give a verdict, never an error."""
    for qid in ("q1", "q4", "q5", "q10"):
        result = check(qid, answer)
        assert result.status in STATUSES


def test_odd_problem_ids_and_student_ids():
    """Unknown ids list the real ones; 3 and 'Q3' mean q3; a bad student ID is explained."""
    assert check("q99", 1).status == UNREADABLE
    assert "q1, q2" in check("q99", 1).message
    assert check(None, 1).status == UNREADABLE
    assert check(3, reference("q3")).status == RIGHT
    assert check("Q3", reference("q3")).status == RIGHT
    result = check("q1", reference("q1"), student="no spaces allowed")
    assert result.status == UNREADABLE and "Student ID" in result.message


def test_student_variant_is_what_gets_checked():
    """One student's right answer is (almost always) wrong for another student."""
    mismatched = 0
    for qid in NUMERIC:
        a, b = reference(qid, "s001"), reference(qid, "s002")
        if not math.isclose(a, b, rel_tol=0.02):
            mismatched += 1
            assert check(qid, a, "s002").status != RIGHT
    assert mismatched >= 5


def test_check_all_reads_notebook_variables():
    """check_all picks answer_q... out of a namespace and totals the score."""
    namespace = {"answer_q1": reference("q1"), "answer_q2": reference("q2") * 1.02, "x": 1}
    report = check_all(namespace)
    assert report.results["q1"].status == RIGHT
    assert report.results["q3"].status == UNANSWERED
    assert report.score == 1.0 + report.results["q2"].score
    assert report.max_score == len(PROBLEMS)
    assert "score:" in str(report)
    assert report._repr_html_().count("<tr>") == len(PROBLEMS) + 2


def _relative_luminance(hex_colour):
    channels = [int(hex_colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_verdict_colours_are_readable_on_white():
    """Every verdict colour is text on white with at least WCAG AA's 4.5:1 contrast."""
    for verdict, (colour, _symbol) in page_contract()["look"].items():
        contrast = 1.05 / (_relative_luminance(colour) + 0.05)
        assert contrast >= 4.5, (verdict, colour, round(contrast, 2))


ODD_IDS = [10**5000, -(10**5000), 10**20, -3, 0, 2**63, "x" * 10**6, _Hostile(), 3.0, b"q1", None]


@pytest.mark.parametrize("odd", ODD_IDS, ids=lambda v: type(v).__name__)
def test_huge_and_hostile_ids_never_raise(odd):
    """check(10**5000, 1) and friends: a result naming the problem ids, never an exception."""
    result = check(odd, 1)
    assert result.status == UNREADABLE and "q1, q2" in result.message
    assert len(result.qid) <= 20
    result = check("q1", reference("q1"), student=odd)
    assert result.status in STATUSES and len(result.message) < 300
    if odd in (10**5000, "x" * 10**6):
        assert result.status == UNREADABLE and "Student ID" in result.message
    check(odd, odd, odd)


@given(
    st.one_of(st.integers(), st.text(max_size=40), st.none(), st.floats()),
    st.one_of(st.integers(), st.text(max_size=40), st.none(), st.floats(), st.binary(max_size=8)),
    st.one_of(st.integers(), st.text(max_size=70), st.none(), st.booleans()),
)
def test_check_never_raises_on_any_triple(qid, answer, student):
    """Any problem id, answer and student together: always a CheckResult with a known status."""
    result = check(qid, answer, student)
    assert isinstance(result, CheckResult) and result.status in STATUSES


LONG_ANSWERS = {
    "spaces": " " * 10**7,
    "one a spaces b": "1 a" + " " * 80_000 + "b",
    "letter spaces": "b" + " " * 10**6 + "x",
    "digits": "1" * 10**6,
    "unit run": "1" + "G" * 10**6,
}


def _profiled_events(call) -> int:
    """How many Python and C function calls ``call()`` makes (a bound in operations)."""
    import sys

    count = 0

    def hook(frame, event, arg):
        nonlocal count
        count += 1

    sys.setprofile(hook)
    try:
        call()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("name", list(LONG_ANSWERS))
@pytest.mark.parametrize("qid", ["q1", "q4", "q10"])
def test_a_long_answer_is_too_long_in_constant_work(qid, name):
    """Any answer longer than the cap is 'unreadable: too long' with a short message, and the
    work does not grow with its length: ten times longer, the same calls (give or take the
    digits of its length in the message), and a few milliseconds of this thread's CPU time
    (not the wall clock, which other processes share) for ten million characters."""
    import time

    from lesson_lib.coursework.answers import MAX_ANSWER_CHARS
    from lesson_lib.coursework.check import MAX_MESSAGE_CHARS

    text = LONG_ANSWERS[name]
    result = check(qid, text)
    assert result.status == UNREADABLE and "too long" in result.message
    assert len(result.message) <= MAX_MESSAGE_CHARS and len(result.given) <= 83
    tenth = text[: max(MAX_ANSWER_CHARS + 1, len(text) // 10)]
    assert (
        abs(
            _profiled_events(lambda: check(qid, text)) - _profiled_events(lambda: check(qid, tenth))
        )
        <= 20
    )
    started = time.thread_time()
    check(qid, text)
    assert time.thread_time() - started < 0.05


def test_answers_up_to_the_cap_are_read_in_one_pass():
    """The longest answers read (200 characters) of the shapes that made the old patterns
    quadratic all get a verdict with a short message."""
    from lesson_lib.coursework.answers import MAX_ANSWER_CHARS
    from lesson_lib.coursework.check import MAX_MESSAGE_CHARS

    n = MAX_ANSWER_CHARS
    for qid in ("q1", "q4", "q10"):
        for text in ("1 a" + " " * (n - 4) + "b", "b" + " " * (n - 2) + "x", "1" * n):
            result = check(qid, text)
            assert result.status in STATUSES and len(result.message) <= MAX_MESSAGE_CHARS


class _Tripwire:
    """Every hook of this object records that it ran, then raises SystemExit."""

    def __init__(self):
        object.__setattr__(self, "calls", [])

    def _hit(self, name):
        self.calls.append(name)
        if not self.calls[1:]:  # once: then harmless, so a failing test can be reported
            raise SystemExit(name)
        return "<tripwire>" if name in ("__repr__", "__str__", "__format__") else 0

    def __repr__(self):
        return self._hit("__repr__")

    def __str__(self):
        return self._hit("__str__")

    def __format__(self, spec):
        return self._hit("__format__")

    def __float__(self):
        return self._hit("__float__")

    def __len__(self):
        return self._hit("__len__")

    def __eq__(self, other):
        return self._hit("__eq__")

    def __hash__(self):
        return self._hit("__hash__")


def test_no_hook_of_a_hostile_id_answer_or_student_runs():
    """A problem id, answer or student whose repr would hang (or exit): never called."""
    trap = _Tripwire()
    for args in ((trap, 1), ("q1", trap), ("q1", 140, trap), (trap, trap, trap)):
        result = check(*args)
        assert result.status == UNREADABLE, args
    assert trap.calls == []
    assert check(trap, 1).qid == "<_Tripwire>"


def test_an_answer_whose_conversion_raises_systemexit_is_unreadable():
    """A numbers.Real whose __float__ raises SystemExit (or another BaseException): a verdict."""
    import numbers

    class Exits:
        def __float__(self):
            raise SystemExit(0)

    class Odd(BaseException):
        pass

    class RaisesOdd:
        def __float__(self):
            raise Odd

    numbers.Real.register(Exits)
    numbers.Real.register(RaisesOdd)
    for answer in (Exits(), RaisesOdd()):
        result = check("q1", answer)
        assert result.status == UNREADABLE and "object of type" in result.message


def test_keyboard_interrupt_still_interrupts():
    """Ctrl-C while an answer is read stops the cell, as it should."""
    import numbers

    class Slow:
        def __float__(self):
            raise KeyboardInterrupt

    numbers.Real.register(Slow)
    with pytest.raises(KeyboardInterrupt):
        check("q1", Slow())


@pytest.mark.parametrize(
    "answer",
    [
        140,
        140.0,
        "140 GB",
        "1.4e11 B",
        np.float32(140),
        np.int64(140),
        "b",
        None,
        "  ",
        [140],
        True,
        float("nan"),
        10**400,
        " " * 10**6,
        "<script>",
        3j,
    ],
    ids=repr,
)
@pytest.mark.parametrize("qid", ["q1", "q4", "q10"])
def test_self_check_and_grader_read_an_answer_alike(qid, answer):
    """check() in the notebook and on the reading the grader gets (through JSON) agree."""
    import json

    from lesson_lib.coursework.answers import Reading, read_answer

    grader = Reading.from_json(json.loads(json.dumps(read_answer(answer).to_json())))
    assert check(qid, grader) == check(qid, answer)


def test_fractions_and_decimals_get_the_floats_verdict():
    """Fraction(140) and Decimal('140') for q1 are right, as 140 is; in the grader too."""
    import decimal
    import json
    from fractions import Fraction

    from lesson_lib.coursework.answers import Reading, read_answer

    ref = reference("q1")
    for answer in (Fraction(ref), decimal.Decimal(str(ref)), Fraction(int(ref * 2), 2)):
        assert check("q1", answer).status == RIGHT
        sent = Reading.from_json(json.loads(json.dumps(read_answer(answer).to_json())))
        assert check("q1", sent).status == RIGHT


@given(st.text(max_size=200))
def test_every_message_respects_its_cap(text):
    """Any text up to the cap, on every kind of problem: message within MAX_MESSAGE_CHARS,
    no control character in the part that quotes the answer."""
    from lesson_lib.coursework.check import MAX_MESSAGE_CHARS

    for qid in ("q1", "q4", "q10"):
        result = check(qid, text)
        assert len(result.message) <= MAX_MESSAGE_CHARS and len(result.given) <= 83
        assert "\n" not in result.given and "\x1b" not in result.message


def test_the_page_contract_ships_the_cap_and_a_too_long_verdict():
    """max_chars is the reading's cap; each problem has an unreadable 'too long' verdict."""
    from lesson_lib.coursework.answers import MAX_ANSWER_CHARS

    contract = page_contract()
    assert contract["max_chars"] == MAX_ANSWER_CHARS == 200
    for entry in contract["problems"].values():
        assert entry["too_long"]["status"] == UNREADABLE
        assert "200 characters" in entry["too_long"]["message"]


# ------------------------------------------------- mistake ids, points, units


def test_verdicts_carry_stable_mistake_ids():
    """q1 (book, 140.0 GB): 70 is the parameter count; 140e9 / 2**30 = 130.39 is GiB."""
    assert check("q1", 70).mistake == "q01.params-as-gb"
    assert check("q1", 130.39).mistake == "q01.unit-gib"
    assert check("q1", 140).mistake == check("q1", 150).mistake == ""


def test_points_follow_difficulty_and_the_close_credit():
    """q1 is one star (1 point), q5 two (2), q16 three (3); close earns the close credit.

    q5's book answer is 7.22985 ms (pinned): 7.4 ms is 2.4 % off, outside
    its 1 % but inside its 5 % close band.
    """
    assert check("q1", 140).points == 1.0
    assert check("q5", 7.22985).points == 2.0
    assert check("q16", reference("q16")).points == 3.0
    assert check("q5", 7.4).status == CLOSE
    assert check("q5", 7.4).points == 1.0  # half of 2
    assert check("q5", 7.4, close_credit=0.25).points == 0.5
    assert check("q5", 7.4, close_credit=0.25).score == 0.25
    assert check("q5", 9.0).points == 0.0


@pytest.mark.parametrize("bad", [-0.5, 2, float("inf"), "half"])
def test_a_close_credit_outside_0_to_1_is_the_instructors_error(bad):
    with pytest.raises((ValueError, TypeError), match="close_credit"):
        check("q5", 7.4, close_credit=bad)


def test_report_sums_points():
    """q1 right (1 of 1) and q5 close (1 of 2): 2 of 3 points."""
    report = check_all({"q1": 140, "q5": 7.4})
    one_five = {q: report.results[q] for q in ("q1", "q5")}
    assert sum(r.points for r in one_five.values()) == 2.0
    assert report.max_points == sum(get_problem(q).max_points for q in PROBLEMS)


def test_the_right_number_with_a_wrong_unit_is_told_so():
    """q5 (book): 7.23 is the answer in ms; written '7.23 us' it is 7.23e-6 s.

    That value is the answer's number taken in ms when the answer is in s
    (0.00723 ms), so the bare-number rule would say "your number is the
    answer in s"; the verdict says the number is the answer in ms and us was
    written after it.
    """
    for text in ("7.23 us", "7.23 \u00b5s", "7.23 \u03bcs", "7.23us"):
        result = check("q5", text)
        assert (result.status, result.rule) == (WRONG, "written in us"), text
        assert "answer in ms, but you wrote us" in result.message
        assert result.mistake == "q05.unit-written"
    result = check("q5", "7229.85 ns")
    assert result.rule == "written in ns" and "answer in us" in result.message
    assert check("q5", "7229.85 us").status == RIGHT


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # q5 (book): 7.22985 ms = 0.00722985 s = 7229.85 us = 7,229,850 ns
        ("q5", "7.22985 ms"),
        ("q5", "0.00722985 s"),
        ("q5", "7229.85 us"),
        ("q5", "7229.85 \u00b5s"),
        ("q5", "7229.85 \u03bcs"),
        ("q5", "7229850 ns"),
        ("q5", "7.22985 MS"),
        # q1 (book): 140 GB = 1.4e11 B; / 2**30 = 130.385 GiB; / 2**20 = 133,514.4 MiB;
        # / 2**10 = 136,718,750 KiB; 140,000 MB; 140,000,000 KB; 0.14 TB
        ("q1", "140 GB"),
        ("q1", "1.4e11 B"),
        ("q1", "140000000 KB"),
        ("q1", "140000000 kB"),
        ("q1", "140000 MB"),
        ("q1", "0.14 TB"),
        ("q1", "130.385 GiB"),
        ("q1", "133514.4 MiB"),
        ("q1", "136718750 KiB"),
        ("q1", "1.4e11 bytes"),
    ],
)
def test_every_unit_is_read_and_converted(qid, text):
    assert check(qid, text).status == RIGHT, check(qid, text)


def test_coinciding_mistakes_get_one_verdict_naming_both():
    """q17 at k = 2 experts: one all-to-all instead of two, or k = 1, both halve the bytes."""
    from lesson_lib.coursework.check_rules import _separated

    right = {"value": 1.0, "tolerance": 0.01}
    a = {"value": 0.5, "tolerance": 0.005, "message": "A.", "mistake": "q17.one-alltoall"}
    b = {"value": 0.5002, "tolerance": 0.005, "message": "B.", "mistake": "q17.k-one"}
    c = {"value": 0.995, "tolerance": 0.00995, "message": "C.", "mistake": "q17.near"}
    (merged,) = _separated(right, [a, b, c])
    assert merged["mistake"] == "q17.one-alltoall+q17.k-one"
    assert merged["message"].startswith("A. Another mistake gives the same number here: B.")
    assert a["message"] == "A."  # the inputs are left as they were
