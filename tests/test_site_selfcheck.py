"""The static page's self-check: the contract check.py gives it, and the JSON the site embeds.

The expected numbers come from the problem statements of the book's version
(70 billion bf16 weights for q1; a ring all-reduce of a 1.25 MiB payload on
N = 8 GPUs for q3), worked out by hand below.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import pytest
from build_site import ROOT
from lesson_site.assets import add_selfcheck_data, selfcheck_json

from lesson_lib.coursework import check
from lesson_lib.coursework.check import page_contract
from lesson_lib.coursework.problems import PROBLEMS, get_problem, reference

CONTRACT = page_contract()
ENTRIES = CONTRACT["problems"]
NUMERIC = [q for q, p in PROBLEMS.items() if p.kind != "choice"]
CHOICE = [q for q, p in PROBLEMS.items() if p.kind == "choice"]
GB, GiB, MiB, MB = 1e9, 2.0**30, 2.0**20, 1e6


def page_verdict(qid: str, number: float, unit: str | None = None) -> dict[str, Any]:
    """The verdict the contract gives ``number`` (in ``unit``, else the problem's), as documented.

    Parameters
    ----------
    qid : str
        A numeric problem.
    number : float
        The number the reader typed.
    unit : str, optional
        The unit typed after it.

    Returns
    -------
    dict
        The first rule the number, in SI units, is within tolerance of (a wrong one only if nearer
        its value than the reference); else the fallback.
    """
    entry = ENTRIES[qid]
    value = number * entry["units"][unit or entry["unit"]]
    for rule in entry["rules"]:
        off = abs(value - rule["value"])
        if off <= rule["tolerance"] and (
            rule["status"] != "wrong" or off < abs(value - entry["reference"])
        ):
            return rule
    return entry["otherwise"]


def every_verdict(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """Every verdict an entry holds."""
    verdicts = [entry["unanswered"], entry["unreadable"]]
    verdicts += list(entry["choices"].values()) if "choices" in entry else entry["rules"]
    return verdicts + ([entry["otherwise"]] if "otherwise" in entry else [])


def test_every_problem_once_and_the_look_of_each_status():
    """One entry per problem of the set; every status a verdict can have has a colour and symbol."""
    assert list(ENTRIES) == list(PROBLEMS)
    assert NUMERIC and CHOICE
    statuses = {v["status"] for e in ENTRIES.values() for v in every_verdict(e)}
    assert statuses == {"right", "close", "wrong", "not answered yet", "unreadable"}
    for status in statuses:
        colour, symbol = CONTRACT["look"][status]
        assert re.fullmatch(r"#[0-9A-F]{6}", colour) and symbol


def test_q1_right_answer_and_its_units():
    """70 billion weights x 2 bytes = 140 GB = 140e9 bytes; right to 1 decimal (140.0 +- 0.05)."""
    entry = ENTRIES["q1"]
    assert entry["unit"] == "GB" and entry["reference"] == pytest.approx(140e9)
    assert entry["units"]["GB"] == GB and entry["units"]["GiB"] == GiB
    assert entry["units"]["B"] == 1 and "ms" not in entry["units"]
    assert entry["spellings"]["gb"] == "GB" and entry["spellings"]["bytes"] == "B"
    # Asked to 1 decimal: every number that rounds to 140.0, half a unit (0.05 GB) either side.
    assert page_verdict("q1", 140.04)["name"] == "right"
    assert page_verdict("q1", 140.04e9, "B")["name"] == "right"
    assert page_verdict("q1", 140e9 / GiB, "GiB")["name"] == "right"
    assert page_verdict("q1", 140.06)["name"] == "close"  # rounds to 140.1: within q1's 2 % close
    assert page_verdict("q1", 143.5)["name"] == "hint"  # 2.5 % off
    assert page_verdict("q1", 140)["message"].startswith("The reference answer is 140 GB")


def test_q1_mistakes_give_their_hints():
    """70 (the parameters in billions) and 130.39 (140 GB in GiB, typed as GB) get their hints."""
    mistake = page_verdict("q1", 70)
    assert (mistake["status"], mistake["name"]) == ("wrong", "mistake 1")
    assert "parameters in billions" in mistake["message"] and "2 bytes" in mistake["message"]
    twin = page_verdict("q1", 140e9 / GiB)
    assert (twin["status"], twin["name"]) == ("wrong", "in GiB")
    assert "1 GiB = 2^30 bytes" in twin["message"]
    assert page_verdict("q1", 140e3)["name"] == "in MB"


def test_q3_decimals_and_the_payload_mistake():
    """Payload 1.25 MiB x 2(8-1)/8 = 2.1875 MiB, a tie at 3 decimals: 2.187 and 2.188 are both
    right, so is every number rounding to either (2.1865 to 2.1885), a band of 0.001 either side."""
    entry = ENTRIES["q3"]
    assert entry["reference"] == pytest.approx(2.1875 * MiB)
    assert entry["rules"][0]["tolerance"] == pytest.approx(0.001 * MiB)
    assert page_verdict("q3", 2.187)["name"] == page_verdict("q3", 2.188)["name"] == "right"
    assert page_verdict("q3", 2.1875 * MiB / MB, "MB")["name"] == "right"
    assert page_verdict("q3", 2.189)["name"] == "close"
    payload = page_verdict("q3", 1.25)
    assert payload["name"] == "mistake 1" and "payload" in payload["message"]
    assert page_verdict("q3", 2.5)["name"] == "mistake 2"  # 2 x payload: "not 2"
    assert "2(N-1)/N" in page_verdict("q3", 2.5)["message"]


def test_q10_count_rules():
    """A count is right exactly; one more is off by one; a fraction above rounds down."""
    ref = reference("q10")
    assert ENTRIES["q10"]["units"] == {"sequences": 1.0}
    assert ENTRIES["q10"]["spellings"]["seqs"] == "sequences"
    assert page_verdict("q10", ref)["status"] == "right"
    assert page_verdict("q10", ref + 1)["name"] == "off by one"
    assert page_verdict("q10", ref + 0.5)["name"] == "round down"
    assert page_verdict("q10", ref + 0.5)["status"] == "close"
    assert page_verdict("q10", ref + 1.5)["name"] == "hint"
    # One fewer is what reading the '80 GB' label as 10^9 bytes gives: that hint wins.
    assert "as PyTorch counts it" in page_verdict("q10", ref - 1)["message"]


def test_q21_a_number_nearer_the_answer_than_a_mistake_is_close_as_check_says():
    """86.694 ms; leaving out the state gives 85.924 (0.9 % lower). 86.35 is 1 unit of the third
    figure below 86.7 (close), within 1 % of the mistake but nearer the answer: not that mistake."""
    verdict = page_verdict("q21", 86.35)
    assert (verdict["status"], verdict["mistake"]) == ("close", "")
    assert check("q21", 86.35).rule == verdict["name"]
    assert page_verdict("q21", 85.95)["mistake"] == "q21.state-forgotten"


@pytest.mark.parametrize("qid", CHOICE)
def test_choices_are_the_options_verdicts(qid):
    """Each letter of the options has a verdict; only the bank's right letter is right."""
    entry = ENTRIES[qid]
    options = get_problem(qid).choices(dict(get_problem(qid).defaults))
    assert entry["letters"] == "abcdefgh"[: len(options)] == "".join(entry["choices"])
    right = [letter for letter, v in entry["choices"].items() if v["status"] == "right"]
    assert right == [reference(qid)]
    for letter, option in zip(entry["letters"], options, strict=True):
        message = entry["choices"][letter]["message"]
        assert entry["choices"][letter]["name"] == f"choice {letter}"
        assert not message[0].islower() and not message.startswith(("Right:", "No:"))
        assert message[1:] in option.why


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_page_messages_say_what_the_box_reads(qid):
    """Blank: how to write it; anything else: what the box reads, and use check() in a notebook."""
    entry = ENTRIES[qid]
    assert entry["unanswered"]["status"] == "not answered yet"
    assert entry["expected"] in entry["unanswered"]["message"]
    unreadable = entry["unreadable"]
    assert unreadable["status"] == "unreadable"
    assert f'check("{qid}", answer) in a notebook' in unreadable["message"]
    letters = entry.get("letters", "")
    # the letters in words, as the page speaks: "a, b, c or d"
    in_words = ", ".join(letters[:-1]) + " or " + letters[-1] if letters else ""
    listed = entry["units"] if "units" in entry else [in_words]
    assert all(name in unreadable["message"] for name in listed)


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_the_box_speaks_of_typing_not_of_python(qid):
    """The page's own words never ask for a string or a variable: it is a text box."""
    entry = ENTRIES[qid]
    for verdict in (entry["unanswered"], entry["too_long"]):
        assert "string" not in verdict["message"] and "answer_" not in verdict["message"]
    assert "string" not in entry["expected"] and "'" not in entry["expected"]


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_every_message_is_written_out(qid):
    """No template field is left in any message, and none is empty."""
    for verdict in every_verdict(ENTRIES[qid]):
        assert verdict["message"] and not re.search(r"[{}]", verdict["message"]), verdict


@pytest.mark.parametrize("qid", NUMERIC)
def test_check_reads_every_spelling_as_its_unit(qid):
    """The reference in each shipped spelling, A-Z upper-cased or not, is right for check()."""
    entry = ENTRIES[qid]
    for spelling, unit in entry["spellings"].items():
        number = entry["reference"] / entry["units"][unit]
        for written in (spelling, re.sub("[a-z]+", lambda m: m[0].upper(), spelling)):
            assert check(qid, f"{number!r} {written}").status == "right", written


def test_only_the_books_version_ships():
    """No student parameter; a student's own answers differ from the shipped ones."""
    assert list(inspect.signature(page_contract).parameters) == []
    assert "student" not in json.dumps(CONTRACT).lower()
    shipped = {
        q: ENTRIES[q]["reference"] / ENTRIES[q]["units"][ENTRIES[q]["unit"]] for q in NUMERIC
    }
    assert shipped == pytest.approx({q: reference(q) for q in NUMERIC})
    assert any(shipped[q] != pytest.approx(reference(q, "s002")) for q in NUMERIC)


def test_json_is_safe_in_a_script_element_and_round_trips():
    """No <, > or & in the text; it parses back to the contract."""
    text = selfcheck_json()
    assert not set("<>&") & set(text)
    assert text.isascii()
    assert json.loads(text) == json.loads(json.dumps(CONTRACT))


def test_site_extension_inlines_the_data_only_where_a_box_is():
    """A page with a self-check box gets the JSON in its body; other pages do not."""

    context = {"body": '<p>x</p><div class="lesson-selfcheck" data-qid="q1"></div>'}
    add_selfcheck_data(None, "book/problems", "page.html", context, None)
    match = re.search(
        r'<script type="application/json" id="lesson-selfcheck-data">(.*?)</script>',
        context["body"],
        flags=re.S,
    )
    assert match and json.loads(match.group(1)) == json.loads(json.dumps(CONTRACT))
    plain = {"body": '<p class="lesson-selfcheckers">x</p>'}
    add_selfcheck_data(None, "book/sizing", "page.html", plain, None)
    assert plain == {"body": '<p class="lesson-selfcheckers">x</p>'}


def test_problem_page_has_one_box_per_problem():
    """book/problems.md marks every problem of the set once, in the set's order."""
    text = (ROOT / "book" / "problems.md").read_text()
    marked = re.findall(r'<div class="lesson-selfcheck" data-qid="(q\d+)"></div>', text)
    assert marked == list(PROBLEMS)


def test_the_notebooks_check_output_stays_off_the_static_page():
    """Each check cell's output ("not answered yet ... run this cell again") is for a notebook.

    On the website the box under the cell checks the answer; the cell's own
    output, made when the book is built with no answer, would tell a reader
    to run a cell they cannot run. The cells keep their source.
    """
    import re
    from pathlib import Path

    source = (Path(__file__).parents[1] / "book" / "problems.md").read_text(encoding="utf-8")
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", source, flags=re.S)
    checking = [c for c in cells if re.search(r"^check(_all)?\(", c, flags=re.M)]
    assert len(checking) == len(PROBLEMS) + 1  # one per problem, and check_all
    assert all(c.startswith(":tags: [remove-output]\n") for c in checking), checking
