"""The Problem set page's self-check in a real browser, with the network off.

The built page is loaded once. For every problem, answers derived from the
problem bank (the right answer, with and without a unit, a close one, each
known mistake, the answer in every other unit of its kind, and garbage) are
typed into the page's box and checked with the Check button or Enter; the
page's status and message must equal ``check(qid, text)``'s for the book's
version. Then the keyboard path, axe-core in light and dark mode, and the
console are checked on the same page.
"""

from __future__ import annotations

import importlib
import math
import random
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, params, reference
from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS

pytestmark = pytest.mark.slow

check_module = importlib.import_module("lesson_lib.coursework.check")
check = check_module.check

PAGE = "book/problems.html"
ACTION_TIMEOUT_MS = 180_000

#: Answers no problem can read, or reads only in part, tried on every problem.
#: Among them: quotes (repr picks its quote), Python-only white space (\x1c, \x85),
#: an Arabic-Indic digit and a long s (casefolds to "s").
GARBAGE = [
    "abc",
    "",
    "\x1c\x85",
    "1,5",
    "1e999",
    "-0",
    "12 furlongs",
    "it's",
    "'it\"s'",
    "\u0663",
    "7 \u017f",
]

#: Status -> (colour, symbol) of check()'s notebook look.
LOOK = check_module._LOOK


def other_units(unit: str) -> dict[str, float]:
    """Up to three other units of ``unit``'s kind with their sizes: its twin, the base, neighbours.

    Parameters
    ----------
    unit : str
        The unit a problem asks for.

    Returns
    -------
    dict of str to float
        E.g. MB, B and KiB for MiB; s and us for ms; empty for ratios and counts.
    """
    table = next((t for t in (BYTE_UNITS, TIME_UNITS) if unit in t), {})
    if not table:
        return {}
    names = list(table)
    at = names.index(unit)
    candidates = [check_module._TWINS.get(unit), names[0], *names[max(at - 1, 0) : at + 2]]
    chosen = [n for n in dict.fromkeys(candidates) if n and n != unit][:3]
    return {name: table[name] for name in chosen}


def rounding_tie(qid: str) -> float | None:
    """A right answer whose exact value lies halfway between two 6-digit roundings, if any.

    check() prints the answer with ``.6g``, which rounds such a tie to even;
    a plain JavaScript ``toPrecision`` would round it up.

    Parameters
    ----------
    qid : str
        A numeric problem.

    Returns
    -------
    float or None
        A binary fraction near the reference with exactly seven significant
        decimal digits, the last a 5, that check() calls right.
    """
    ref = reference(qid)
    for k in range(30):
        for value in (math.floor(ref * 2**k) / 2**k, math.ceil(ref * 2**k) / 2**k):
            digits = Decimal(value).as_tuple().digits
            if len(digits) == 7 and digits[-1] == 5 and check(qid, repr(value)).status == "right":
                return value
    return None


def answers(qid: str) -> tuple[list[str], list[str]]:
    """Answers to try on ``qid``, all derived from the problem bank's book version.

    Parameters
    ----------
    qid : str
        Problem id.

    Returns
    -------
    typed : list of str
        Typed with the keyboard: the right answer with and without its unit,
        a close one, every known mistake, the answer in another unit (read
        and converted) and its bare number (a unit mix-up), garbage, blank;
        for multiple choice every letter.
    more : list of str
        Submitted through the same form: other spellings, units and mix-ups,
        a rounding tie, and more garbage.
    """
    problem = get_problem(qid)
    ref = reference(qid)
    if problem.kind == "choice":
        letters = "abcd"[: len(problem.choices(params(qid)))]
        typed = [*letters, "abc", ""]
        return typed, [ref.upper(), f"({ref})", f" {ref}. ", "z", "ab", *GARBAGE]
    unit = problem.unit
    typed = [repr(ref), f"{ref} {unit}"]
    more = [f"{ref:,.6f}"]
    if problem.kind == "count":
        typed += [str(ref + 0.5), str(ref + 1)]
        more += [str(ref - 1), f"{ref} {unit[:3]}"]
    else:
        typed += [repr(ref * (1 + 0.75 * problem.close_rtol))]
    tie = rounding_tie(qid) if problem.kind == "number" else None
    more += [repr(tie)] if tie is not None else []
    typed += [repr(m.value) for m in mistakes(qid)]
    sizes = other_units(unit)
    asked = {**BYTE_UNITS, **TIME_UNITS}.get(unit)
    for i, (other, size) in enumerate(sizes.items()):
        value = ref * asked / size
        (typed if i == 0 else more).extend([f"{value!r} {other}", f"{value:.6g}"])
    more += ["3 x"] if sizes else ["3 GB"]
    if unit == "x":
        more += [f"{ref:.4f} times", f"{ref:.4f}\u00d7"]
    return [*typed, "abc", ""], more + GARBAGE


def test_answers_reach_a_rounding_tie():
    """Some problem's answers include a .6g rounding tie (so the page's rounding is tested)."""
    assert [q for q, p in PROBLEMS.items() if p.kind == "number" and rounding_tie(q)]


def normalise(text: str) -> str:
    """Runs of spaces, tabs and newlines as one space, as a browser shows them."""
    return re.sub(r"[ \t\n\r\f]+", " ", text).strip()


@pytest.fixture(scope="module")
def problem_page(browser: Any, site: str) -> Iterator[dict[str, Any]]:
    """The Problem set page, loaded once, with its console errors and failed requests."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    record: dict[str, Any] = {"page": page, "errors": [], "failed": []}
    page.on("console", lambda msg: msg.type == "error" and record["errors"].append(msg.text))
    page.on("pageerror", lambda exc: record["errors"].append(f"uncaught: {exc}"))
    page.on("requestfailed", lambda r: record["failed"].append(f"{r.failure} {r.url}"))
    page.on(
        "response",
        lambda r: r.status >= 400 and record["failed"].append(f"{r.status} {r.url}"),
    )
    try:
        page.goto(f"{site}{PAGE}", wait_until="load")
        page.wait_for_function(
            "n => document.querySelectorAll('div.lesson-selfcheck.lesson-selfcheck-ready')"
            ".length === n",
            arg=len(PROBLEMS),
        )
        yield record
    finally:
        context.close()


#: What a box shows: how many checks it ran, and its verdict.
READ_BOX = """function readBox(box) {
  const verdict = box.querySelector('.lesson-selfcheck-verdict');
  const status = verdict.querySelector('.lesson-selfcheck-status');
  const message = verdict.querySelector('.lesson-selfcheck-message');
  return {checks: Number(box.getAttribute('data-checks') || 0),
          text: box.querySelector('input').value,
          status: verdict.getAttribute('data-status'),
          statusText: status ? status.textContent : null,
          statusColor: status ? getComputedStyle(status).color : null,
          messageText: message ? message.textContent : null,
          messageShown: message ? message.innerText : null};
}"""

READ = f"box => {{ {READ_BOX}; return readBox(box); }}"

#: Submit each text through a box's form, as its Check button does, and read the verdict.
SUBMIT_ALL = f"""([qid, texts]) => {{
  {READ_BOX};
  const box = document.querySelector(`div.lesson-selfcheck[data-qid="${{qid}}"]`);
  return texts.map(text => {{
    box.querySelector('input').value = text;
    box.querySelector('form').requestSubmit();
    return readBox(box);
  }});
}}"""


def rgb(hex_colour: str) -> str:
    """``#007A5A`` as the browser's computed ``rgb(0, 122, 90)``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def mismatch(qid: str, got: dict[str, Any]) -> dict[str, Any] | None:
    """How the box's verdict differs from check()'s for the text it holds, or None.

    Parameters
    ----------
    qid : str
        Problem id.
    got : dict
        What :data:`READ_BOX` read.

    Returns
    -------
    dict or None
        The text, what the page showed and what check() says, when they differ.
    """
    want = check(qid, got["text"])  # the text as the box holds it (it drops line breaks)
    colour, symbol = LOOK[want.status]
    expected = {
        "status": want.status,
        "statusText": f"{symbol} {qid}: {want.status}.",
        "statusColor": rgb(colour),
        "messageText": want.message,
        "messageShown": normalise(want.message),
    }
    shown = {key: got[key] for key in expected}
    shown["messageShown"] = normalise(shown["messageShown"] or "")
    return None if shown == expected else {"text": got["text"], "page": shown, "check": expected}


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_page_verdict_equals_check(problem_page, qid):
    """Each answer typed into the page gets check()'s status, look and message."""
    page = problem_page["page"]
    box = page.locator(f'div.lesson-selfcheck[data-qid="{qid}"]')
    field = box.get_by_role("textbox")
    button = box.get_by_role("button", name="Check")
    typed, more = answers(qid)
    before = box.evaluate(READ)["checks"]
    seen = []
    for i, text in enumerate(typed):
        field.fill(text)
        if i % 4:
            page.keyboard.press("Enter")  # the box keeps the focus fill() gave it
        else:
            button.click()
        got = box.evaluate(READ)
        assert got["checks"] == before + i + 1, f"{qid}: {text!r} was not checked"
        assert got["text"] == text
        seen.append(got)
    seen += page.evaluate(SUBMIT_ALL, [qid, more])
    assert [got["text"] for got in seen] == typed + more
    assert [m for m in (mismatch(qid, got) for got in seen) if m] == []
    # The derived answers reach every verdict the problem can give.
    statuses = {got["status"] for got in seen}
    wanted = {"right", "wrong", "unreadable", "not answered yet"}
    if get_problem(qid).kind != "choice":
        wanted.add("close")
    assert statuses >= wanted


#: Characters for random answers: number syntax, unit letters, quotes, and the
#: Unicode that Python and JavaScript read differently unless told how.
ODD_CHARACTERS = [
    *"0123456789.,_eE+-() :x/'\"\\abcdABCDsSmMkKgGtTbBiIuUnN",
    *"\u00d7\u00b5\u03bc\u0663\u00a0\u2003\x1c\x85\t\u017f\u212a\u00df\u0131\ufeff",
    *"\u200b\u00e9\x7f\x01\u2028\u0130\u03a3",
    "\U0001d7ce",
    "\U0001f600",
]


def random_answers(qid: str, count: int, seed: int) -> list[str]:
    """Random answers to ``qid``: odd strings, and the bank's numbers in random formats and units.

    Parameters
    ----------
    qid : str
        Problem id.
    count : int
        How many.
    seed : int
        Seed of the generator (the same answers every run).

    Returns
    -------
    list of str
        The answers.
    """
    rng = random.Random(f"{seed}-{qid}")
    ref = reference(qid)
    spellings = [*check_module._UNIT_ALIASES]
    spellings += [s for names in check_module._COUNTING_UNITS.values() for s in names]
    values = [ref] if isinstance(ref, str) else [ref, *(m.value for m in mistakes(qid))]
    out = []
    for _ in range(count):
        if rng.random() < 0.3:
            out.append("".join(rng.choice(ODD_CHARACTERS) for _ in range(rng.randint(0, 10))))
        elif isinstance(ref, str):
            out.append(
                rng.choice(["", " ", "("])
                + rng.choice("abcdeABCDE")
                + rng.choice(["", ")", ".", ": "])
            )
        else:
            value = rng.choice(values) * rng.choice(
                [1, 1, rng.uniform(0.9, 1.1), 10 ** rng.randint(-9, 9)]
            )
            number = rng.choice(
                ["{!r}", "{:.3g}", "{:,.4f}", "{:.6e}", "{:_.2f}", "{:.12g}"]
            ).format(value)
            unit = rng.choice([*spellings, "", "", rng.choice(spellings).upper()])
            out.append(rng.choice(["", " ", "\u00a0"]) + number + rng.choice(["", " "]) + unit)
    return out


def test_page_agrees_with_check_on_random_answers(problem_page):
    """Hundreds of random answers, submitted through each box's form, get check()'s verdict."""
    page = problem_page["page"]
    mismatches = []
    for qid in PROBLEMS:
        for got in page.evaluate(SUBMIT_ALL, [qid, random_answers(qid, 40, 0)]):
            mismatches.append(mismatch(qid, got))
    assert [m for m in mismatches if m] == []


def test_keyboard_only(problem_page):
    """The box is labelled; Tab reaches the input and then Check, and Enter or Space check."""
    page = problem_page["page"]
    qid = next(iter(PROBLEMS))
    box = page.locator(f'div.lesson-selfcheck[data-qid="{qid}"]')
    field = box.get_by_role("textbox")
    label = field.evaluate("el => Array.from(el.labels).map(l => l.textContent).join(' ')")
    assert qid in label
    assert field.evaluate("el => el.getAttribute('aria-describedby')")
    verdict = box.locator(".lesson-selfcheck-verdict")
    assert verdict.get_attribute("role") == "status"
    assert verdict.get_attribute("aria-live") == "polite"
    before = box.evaluate(READ)["checks"]
    field.fill("")
    field.focus()
    text = repr(reference(qid))
    page.keyboard.type(text)
    page.keyboard.press("Tab")
    assert box.evaluate("b => document.activeElement === b.querySelector('button')")
    page.keyboard.press("Space")
    got = box.evaluate(READ)
    assert got["checks"] == before + 1
    assert (got["status"], got["messageText"]) == (
        check(qid, text).status,
        check(qid, text).message,
    )
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    assert box.evaluate(READ)["checks"] == before + 2


AXE = """async (context) => {
  const r = await axe.run(context === 'article' ? document.querySelector('article.bd-article')
                                                 : {include: [[context]]},
                          {resultTypes: ['violations']});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                 nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


def test_no_accessibility_violations_light_and_dark(problem_page, axe_js):
    """With verdicts showing, axe-core finds nothing in the article, in light and dark mode."""
    page = problem_page["page"]
    for qid in PROBLEMS:  # every box shows a verdict (already so after the test above)
        box = page.locator(f'div.lesson-selfcheck[data-qid="{qid}"]')
        if box.locator(".lesson-selfcheck-verdict[data-status]").count() == 0:
            box.get_by_role("textbox").fill("abc")
            box.get_by_role("textbox").press("Enter")
    shown = page.locator(".lesson-selfcheck-verdict[data-status]").count()
    assert shown == len(PROBLEMS)
    page.add_script_tag(path=str(axe_js))
    found = {}
    for theme in ("light", "dark"):
        page.evaluate(f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}")
        assert page.evaluate("() => document.documentElement.dataset.theme") == theme
        found[theme] = page.evaluate(AXE, "article") + page.evaluate(AXE, ".lesson-selfcheck")
    assert found == {"light": [], "dark": []}


def test_no_console_errors_or_failed_requests(problem_page):
    """Everything above ran without a console error, an uncaught exception or a failed request."""
    assert problem_page["errors"] == []
    assert problem_page["failed"] == []
