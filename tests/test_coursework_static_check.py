"""The static site's self-check data: the book's version of every problem, as check() sees it."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
import sys

import pytest
from build_site import ROOT
from hypothesis import given
from hypothesis import strategies as st
from lesson_site.assets import add_selfcheck_data

from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, reference
from lesson_lib.coursework.static_check import (
    SUPPORTED_CONVERSIONS,
    SUPPORTED_SPECS,
    js_pattern,
    selfcheck_data,
    selfcheck_json,
    template_fields,
)

# The package exports the function check(), which hides the module of the same name.
check_module = importlib.import_module("lesson_lib.coursework.check")
check = check_module.check

DATA = selfcheck_data()
NUMERIC = [q for q, p in PROBLEMS.items() if p.kind != "choice"]
CHOICE = [q for q, p in PROBLEMS.items() if p.kind == "choice"]


def test_every_problem_once_with_its_kind_and_unit():
    """One entry per problem of the set, in the problem bank's terms."""
    assert set(DATA["problems"]) == set(PROBLEMS)
    for qid, entry in DATA["problems"].items():
        problem = get_problem(qid)
        assert entry["kind"] == problem.kind
        assert entry["unit"] == problem.unit
        assert entry["expected"] == (
            problem.answer_format()
            if problem.kind != "choice"
            else check_module._choice_expected(entry["letters"])
        )
        assert entry["unanswered"] == check(qid, None).message


def test_both_kinds_are_present():
    """The set has numeric and multiple-choice problems, so both branches are tested."""
    assert NUMERIC and CHOICE


@pytest.mark.parametrize("qid", NUMERIC)
def test_numbers_are_the_book_answers(qid):
    """Reference, mistakes, unit mix-ups and tolerances equal the bank's, for no student ID."""
    entry = DATA["problems"][qid]
    problem = get_problem(qid)
    ref = reference(qid)
    assert entry["reference"] == ref
    assert entry["mistakes"] == [[m.value, m.hint] for m in mistakes(qid)]
    assert entry["mixups"] == [[v, h] for v, h in check_module._unit_mixups(problem, ref)]
    assert entry["rtol"] == problem.rtol
    assert entry["close_rtol"] == problem.close_rtol
    assert entry["hint"] == problem.hint
    assert entry["counting"] == list(check_module._COUNTING_UNITS.get(problem.unit, ()))
    if problem.decimals is None:
        assert entry["abs_tol"] is None
    else:
        # Half a unit in the last decimal asked for, a hair wider.
        half = 0.5 * 10.0 ** (-problem.decimals)
        assert half <= entry["abs_tol"] <= half * 1.001


@pytest.mark.parametrize("qid", CHOICE)
def test_choices_are_check_verdicts(qid):
    """Each letter's verdict is check()'s; exactly the reference letter is right."""
    entry = DATA["problems"][qid]
    count = len(get_problem(qid).choices(dict(get_problem(qid).defaults)))
    assert entry["letters"] == "abcdefgh"[:count]
    for letter, (status, message) in entry["verdicts"].items():
        result = check(qid, letter)
        assert (status, message) == (result.status, result.message)
    right = [letter for letter, (status, _) in entry["verdicts"].items() if status == "right"]
    assert right == [reference(qid)]


def test_no_student_data():
    """Only the book's version ships: no student parameter, and no student's numbers."""
    assert list(inspect.signature(selfcheck_data).parameters) == []
    assert "student" not in json.dumps(DATA).lower()
    students = [f"s{i:03d}" for i in range(1, 6)]
    differs = 0
    for qid in NUMERIC:
        shipped = DATA["problems"][qid]["reference"]
        for sid in students:
            theirs = reference(qid, sid)
            if theirs != reference(qid):
                differs += 1
                assert shipped != theirs
    assert differs > 0  # the variants do differ, so the assertion above can fail


def test_shared_tables_come_from_the_checker():
    """Statuses, look, templates, units and spellings are check.py's and units.py's own."""
    assert DATA["status"] == {
        "right": check_module.RIGHT,
        "close": check_module.CLOSE,
        "wrong": check_module.WRONG,
        "unanswered": check_module.UNANSWERED,
        "unreadable": check_module.UNREADABLE,
    }
    assert DATA["look"] == {k: list(v) for k, v in check_module._LOOK.items()}
    assert DATA["messages"] == check_module.MESSAGES
    assert DATA["aliases"] == check_module._UNIT_ALIASES
    assert DATA["known_units"] == check_module._KNOWN_UNITS
    assert DATA["decimals_rtol"] == check_module._DECIMALS_RTOL
    assert DATA["match_rtol"] == check_module._MATCH_RTOL
    from lesson_lib.coursework.problems import units_of

    assert {k: tuple(v) for k, v in DATA["units"].items()} == {
        k: units_of(k) for k in DATA["units"]
    }
    assert set(check_module._UNIT_ALIASES.values()) <= set(DATA["units"])


def test_templates_use_only_what_the_browser_fills():
    """Every field of every template is plain, !r or :.6g (selfcheck.js fills those)."""
    seen = set()
    for template in DATA["messages"].values():
        for _name, conversion, spec in template_fields(template):
            assert conversion in SUPPORTED_CONVERSIONS
            assert spec in SUPPORTED_SPECS
            seen.add((conversion, spec))
        assert "{{" not in template and "}}" not in template
    assert ("r", "") in seen and (None, ".6g") in seen


def test_json_is_safe_in_a_script_element_and_round_trips():
    """No <, > or & in the text; it parses back to the data."""
    text = selfcheck_json()
    assert not set("<>&") & set(text)
    assert text.isascii()
    assert json.loads(text) == json.loads(json.dumps(DATA))


def test_character_tables_are_pythons():
    """White space and digits are what re's \\s and \\d match; digit values are float()'s."""
    spaces = DATA["whitespace"]
    assert all(re.fullmatch(r"\s", c) for c in spaces)
    assert " " in spaces and "\x1c" in spaces and "\ufeff" not in spaces
    for zero in DATA["digit_zeros"]:
        for value in range(10):
            digit = chr(zero + value)
            assert re.fullmatch(r"\d", digit) and float(digit) == value
    assert ord("0") in DATA["digit_zeros"] and 0x0660 in DATA["digit_zeros"]
    every_digit = {chr(z + i) for z in DATA["digit_zeros"] for i in range(10)}
    sample = [chr(c) for c in range(0, sys.maxunicode + 1, 7)]
    assert [c for c in sample if re.fullmatch(r"\d", c) and c not in every_digit] == []
    assert [c for c in sample if re.fullmatch(r"\s", c) and c not in spaces] == []


_TRICKY = (
    "0123456789.,_eE+-() :x\u00d7\u00b5\u03bcsSmMkKgGtTbBiIuUnNQqabcdz"
    "\u0663\u0669\U0001d7ce\u00a0\u2003\u3000\x1c\x85\t\n\u017f\u212a\u00df\u0131"
)
_corpus = st.text(alphabet=_TRICKY, max_size=14)
_SPECIAL = [
    "1.875 MiB",
    " 2,133.3 ms ",
    "1,5",
    "1e999",
    "\u0663.\u0665 GB",
    "\U0001d7cf\U0001d7d0 us",
    "12 \u017f",
    "3 \u212aB",
    "\u00a01\u00a0",
    "(b)",
    "c.",
    " D ",
    "1.\n",
    "1\x1cGB",
    ".5e-3",
    "+7_000",
]


@pytest.mark.parametrize("name", ["_ANSWER", "_THOUSANDS", "_LETTER"])
@given(text=_corpus)
def test_js_patterns_match_what_python_matches(name, text):
    """Rewritten for JavaScript, each pattern still matches the same strings in Python."""
    original = getattr(check_module, name)
    rewritten = re.compile(js_pattern(original.pattern))
    for sample in [text, *_SPECIAL]:
        a, b = original.fullmatch(sample), rewritten.fullmatch(sample)
        assert (a is None) == (b is None), sample
        if a:
            assert a.groups() == b.groups()


def test_js_pattern_spells_out_python_classes():
    """\\d, \\s, \\S and . become explicit classes; an unknown escape is refused."""
    out = js_pattern(r"\s*(\d+)\S.")
    assert "\\d" not in out and "\\s" not in out and "\\S" not in out
    assert out.endswith("[^\\n]")
    with pytest.raises(ValueError):
        js_pattern(r"\w+")


_SPELLINGS = set(check_module._UNIT_ALIASES) | {
    s for names in check_module._COUNTING_UNITS.values() for s in names
}


@given(st.text(alphabet=_TRICKY + "/ per", max_size=10) | st.sampled_from(sorted(_SPELLINGS)))
def test_folds_find_the_same_spelling_as_casefold(text):
    """Folding with the shipped map finds a unit spelling exactly when str.casefold does."""
    folds = DATA["folds"]
    for sample in (text, text.upper(), text.title()):
        ours = "".join(folds.get(c, c) for c in sample)
        theirs = sample.casefold()
        assert (ours in _SPELLINGS) == (theirs in _SPELLINGS), sample
        if theirs in _SPELLINGS:
            assert ours == theirs


def test_site_extension_inlines_the_data_only_where_a_box_is():
    """A page with a self-check box gets the JSON in its body; other pages do not."""

    context = {"body": '<p>x</p><div class="lesson-selfcheck" data-qid="q1"></div>'}
    add_selfcheck_data(None, "book/problems", "page.html", context, None)
    match = re.search(
        r'<script type="application/json" id="lesson-selfcheck-data">(.*?)</script>',
        context["body"],
        flags=re.S,
    )
    assert match and json.loads(match.group(1)) == json.loads(json.dumps(DATA))
    plain = {"body": '<p class="lesson-selfcheckers">x</p>'}
    add_selfcheck_data(None, "book/sizing", "page.html", plain, None)
    assert plain == {"body": '<p class="lesson-selfcheckers">x</p>'}


def test_problem_page_has_one_box_per_problem():
    """book/problems.md marks every problem of the set once, in the set's order."""
    text = (ROOT / "book" / "problems.md").read_text()
    marked = re.findall(r'<div class="lesson-selfcheck" data-qid="(q\d+)"></div>', text)
    assert marked == list(PROBLEMS)
