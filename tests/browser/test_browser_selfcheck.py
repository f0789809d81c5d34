"""The Problem set page's self-check in a real browser, with the network off.

The built page is loaded once. For every problem, answers derived from the
problem bank (the right answer with and without a unit and in every other
unit, a close one, each known mistake, the answer in another unit typed as
a bare number) are typed into the page's box and checked with the Check
button or Enter: the page's verdict (status, and which rule: right, close,
which mistake) must be ``check(qid, text)``'s for the book's version, and
its message the one ``page_contract()`` holds for that verdict. Text the
page does not read (garbage, Python-only spellings) must get the message
saying to use ``check()`` in a notebook, never a verdict of its own. Then
the keyboard path, axe-core in light and dark mode, and the console are
checked on the same page.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from lesson_lib.coursework import check
from lesson_lib.coursework.check import page_contract
from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, reference

pytestmark = pytest.mark.slow

PAGE = "book/problems.html"
ACTION_TIMEOUT_MS = 180_000
CONTRACT = page_contract()

#: Answers outside what the page reads, tried on every problem. Python reads
#: some of them (an Arabic-Indic digit, a long s that case-folds to "s",
#: white space only Python strips, underscores in a number, a decimal comma).
GARBAGE = [
    "abc",
    "1,5",
    "1e999",
    "1_000",
    "12 furlongs",
    "it's",
    "<b>1</b>",
    "\u0663",
    "7 \u017f",
    "\u00a01\u00a0",
    "\x1c\x85",
    "1.5.3",
    "nan",
    "zz",
]


def spelling_in_capitals(spelling: str) -> str:
    """``spelling`` with a-z upper-cased, e.g. ``"GIB"`` (the page folds only A-Z)."""
    return re.sub("[a-z]+", lambda m: m[0].upper(), spelling)


def answers(qid: str) -> tuple[list[str], list[str]]:
    """Answers the page reads, derived from the problem bank's book version.

    Parameters
    ----------
    qid : str
        Problem id.

    Returns
    -------
    typed : list of str
        Typed with the keyboard: the right answer with and without its unit,
        a close one, every known mistake, blank; for multiple choice every
        letter.
    more : list of str
        Submitted through the same form: the answer in every other unit
        (converted: right) and its bare number (a unit mix-up), other
        spellings of the unit, thousands separators, a number nearer the
        answer than each mistake; other spellings of a letter.
    """
    problem = get_problem(qid)
    ref = reference(qid)
    if problem.kind == "choice":
        return [*CONTRACT["problems"][qid]["letters"], ""], [ref.upper(), f"({ref})", f" {ref}. "]
    unit = problem.unit
    entry = CONTRACT["problems"][qid]
    typed = [repr(ref), f"{ref} {unit}", *(repr(m.value) for m in mistakes(qid)), ""]
    if problem.kind == "count":
        typed += [str(ref + 0.5), str(ref + 1), f"{ref} {unit[:3]}"]
    else:
        typed += [repr(ref * (1 + 0.75 * problem.close_rtol))]
    more = [f"{ref:,.6f}", f"-{ref}", f"\t{ref}{unit}\t"]
    size = entry["units"][unit]
    for other, other_size in entry["units"].items():
        value = ref * size / other_size
        more += [f"{value!r} {other}", f"{value:.6g}", f"{value:.6e}{other}"]
    more += [
        f"{ref * size / entry['units'][u]!r} {spelling_in_capitals(s)}"
        for s, u in entry["spellings"].items()
    ]
    # The right number with another unit written after it ("7.23 us" for 7.23 ms).
    more += [f"{ref!r} {other}" for other in entry["units"] if other != unit]
    # Nearer the answer than a mistake (q21's forgotten state, under 1 % away): never that mistake.
    more += [repr(ref + 0.45 * (m.value - ref)) for m in mistakes(qid)]
    return typed, more


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
          rule: verdict.getAttribute('data-rule'),
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


def shipped_message(qid: str, status: str, rule: str, message_text: str = "") -> str | None:
    """The message ``page_contract()`` holds for this problem's verdict, or None if it has none.

    The page's two unreadable verdicts share status and rule: ``message_text``
    (what the page showed) says whether it was the one for a long answer.
    """
    entry = CONTRACT["problems"][qid]
    verdicts = [entry["unanswered"], entry["unreadable"], *entry.get("rules", [])]
    if message_text == entry["too_long"]["message"]:
        verdicts.insert(0, entry["too_long"])
    verdicts += [
        *entry.get("choices", {}).values(),
        *([entry["otherwise"]] if "otherwise" in entry else []),
    ]
    found = [v["message"] for v in verdicts if (v["status"], v["name"]) == (status, rule)]
    if not found and rule.startswith("written in ") and "unit_written" in entry:
        # The one verdict the page fills in: the unit written, and the unit whose
        # answer the number is; any unit of the problem's may be the latter.
        written = rule.removeprefix("written in ")
        template = entry["unit_written"]["message"]
        found = [
            template.format(other=other, written=written)
            for other in entry["units"]
            if template.format(other=other, written=written) == message_text
        ]
    return found[0] if found else None


def shown_wrongly(qid: str, got: dict[str, Any]) -> dict[str, Any] | None:
    """How the box fails to show its verdict as the contract writes it, or None.

    Parameters
    ----------
    qid : str
        Problem id.
    got : dict
        What :data:`READ_BOX` read.

    Returns
    -------
    dict or None
        What the page showed, when its look or message is not the contract's.
    """
    colour, symbol = CONTRACT["look"][got["status"]]
    message = shipped_message(qid, got["status"], got["rule"], got["messageText"] or "")
    ok = (
        message is not None
        and got["statusText"] == f"{symbol} {qid}: {got['status']}."
        and got["statusColor"] == rgb(colour)
        and got["messageText"] == message
        and normalise(got["messageShown"] or "") == normalise(message)
    )
    return None if ok else got


def disagreement(qid: str, got: dict[str, Any], *, reads: bool) -> dict[str, Any] | None:
    """How the box's verdict differs from what it must be for the text it holds, or None.

    Parameters
    ----------
    qid : str
        Problem id.
    got : dict
        What :data:`READ_BOX` read.
    reads : bool
        True for text the page reads: its verdict must be check()'s. False
        for text it does not: it must say to use check() in a notebook.

    Returns
    -------
    dict or None
        The text, the page's verdict and check()'s, when the page is wrong.
    """
    want = check(qid, got["text"])  # the text as the box holds it (it drops line breaks)
    notebook = CONTRACT["problems"][qid]["unreadable"]
    page = (got["status"], got["rule"])
    expected = (want.status, want.rule) if reads else (notebook["status"], notebook["name"])
    if page == expected and not shown_wrongly(qid, got):
        return None
    return {"text": got["text"], "page": page, "check": (want.status, want.rule), "shown": got}


def submit(page: Any, qid: str, texts: list[str]) -> list[dict[str, Any]]:
    """Submit ``texts`` one by one through the box of ``qid`` and read each verdict."""
    return page.evaluate(SUBMIT_ALL, [qid, texts])


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_page_verdict_is_checks(problem_page, qid):
    """Each answer the page reads gets check()'s verdict and the contract's message for it."""
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
    seen += submit(page, qid, more)
    assert [got["text"] for got in seen] == typed + more
    assert [d for d in (disagreement(qid, got, reads=True) for got in seen) if d] == []
    # The derived answers reach every verdict the problem can give, each mistake's
    # included (q7's third, its answer in KB, is taken for the unit mix-up first).
    rules = {got["rule"] for got in seen}
    wanted = {"right", "hint"} if get_problem(qid).kind != "choice" else set()
    wanted |= {"close"} if get_problem(qid).kind == "number" else set()
    wanted |= {check(qid, m.value).rule for m in mistakes(qid)}
    assert rules >= wanted | {""}
    assert not mistakes(qid) or any(rule.startswith("mistake") for rule in rules)
    statuses = {got["status"] for got in seen}
    assert statuses >= {"right", "wrong", "not answered yet"}


@pytest.mark.parametrize("qid", list(PROBLEMS))
def test_page_sends_what_it_cannot_read_to_the_notebook(problem_page, qid):
    """Garbage, and spellings only Python reads, get 'use check() in a notebook', never a verdict."""
    entry = CONTRACT["problems"][qid]
    elsewhere = [f"5 {unit}" for unit in ("ms", "GB", "x") if unit not in entry.get("units", {})]
    texts = GARBAGE + elsewhere + (["5", "z"] if entry["kind"] == "choice" else ["b", "GB"])
    seen = submit(problem_page["page"], qid, texts)
    assert [d for d in (disagreement(qid, got, reads=False) for got in seen) if d] == []
    # Python reads some of them: the page must not guess what check() says.
    assert any(check(qid, t).status != "unreadable" for t in texts)


#: Characters for random answers: number syntax, unit letters, quotes, and
#: Unicode that Python reads and the page does not.
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
    entry = CONTRACT["problems"][qid]
    spellings = sorted({s for e in CONTRACT["problems"].values() for s in e.get("spellings", {})})
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
            own = list(entry["spellings"])
            unit = rng.choice([*own, *own, *spellings, "", "", rng.choice(spellings).upper()])
            out.append(rng.choice(["", " ", "\u00a0"]) + number + rng.choice(["", " "]) + unit)
    return out


def test_page_agrees_with_check_on_random_answers(problem_page):
    """Hundreds of random answers: check()'s verdict, or 'use check()', never another verdict."""
    page = problem_page["page"]
    disagreements, verdicts, total = [], 0, 0
    for qid in PROBLEMS:
        notebook = CONTRACT["problems"][qid]["unreadable"]["message"]
        for got in submit(page, qid, random_answers(qid, 40, 0)):
            total += 1
            sent_on = got["messageText"] == notebook
            verdicts += not sent_on
            disagreements.append(disagreement(qid, got, reads=not sent_on))
    assert [d for d in disagreements if d] == []
    # About a third are a number in one of the problem's units, which the page reads.
    assert verdicts >= total // 4


#: Answers longer than the contract's max_chars, of the shapes that made the page's old
#: patterns quadratic; and 150 emoji (300 UTF-16 units, but 150 characters for Python).
LONG = {
    "spaces": " " * 10**6,
    "one a spaces b": "1 a" + " " * 80_000 + "b",
    "letter spaces": "b" + " " * 10**5 + "x",
}


@pytest.mark.parametrize("qid", ["q1", "q4", "q10"])
def test_a_long_answer_is_too_long_at_once(problem_page, qid):
    """The page says 'too long' to a long answer, as check() does, within 1.5 s of the
    page's own clock on a busy machine (its earlier patterns took about 6 s for the
    80,000 spaces, and longer than any test waits for the million); a text check() reads
    (150 characters that are 300 UTF-16 units) is read, not called long."""
    timed = f"""([qid, texts]) => {{
      {READ_BOX};
      const box = document.querySelector(`div.lesson-selfcheck[data-qid="${{qid}}"]`);
      return texts.map(text => {{
        box.querySelector('input').value = text;
        const started = performance.now();
        box.querySelector('form').requestSubmit();
        return [performance.now() - started, readBox(box)];
      }});
    }}"""
    too_long = CONTRACT["problems"][qid]["too_long"]
    for ms, got in problem_page["page"].evaluate(timed, [qid, list(LONG.values())]):
        assert ms < 1500, ms
        assert (got["status"], got["messageText"]) == ("unreadable", too_long["message"])
        assert check(qid, got["text"]).status == "unreadable"
        assert "too long" in check(qid, got["text"]).message
    emoji = "\U0001f600" * 150
    (got,) = submit(problem_page["page"], qid, [emoji])
    assert got["messageText"] == CONTRACT["problems"][qid]["unreadable"]["message"]
    assert "too long" not in check(qid, emoji).message


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
    assert (got["status"], got["rule"]) == ("right", check(qid, text).rule)
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
    for qid in PROBLEMS:  # every box shows a verdict (already so after the tests above)
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
