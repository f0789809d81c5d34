"""Figure alt text agrees with the page: every number it quotes, the page shows.

Alt text lives in cell metadata and cannot be glued, so it is the one place a
number could go stale when lesson_lib changes. This test catches that: each
number-with-unit in an image's alt text must appear, with its unit, in the
visible text of the same section of the built page (glued prose, tables,
explorer messages beside the figure). A stale number that happens to appear
elsewhere on the page, describing something else, does not count.
"""

import html
import re

import pytest

pytestmark = pytest.mark.slow

QUANTITY = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(ms|us|µs|GB/s|GiB|GB|MiB|KiB|MB|x|tokens/s)(?![\w/])"
)


def visible_text(page_html: str) -> str:
    """The page's text without tags, scripts, styles or alt attributes."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page_html, flags=re.S)
    body = re.sub(r'alt="[^"]*"', " ", body)
    text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    return re.sub(r"\s+", " ", text)


def quantities(alt: str) -> list[tuple[str, str]]:
    """(number, unit) pairs quoted in an alt text."""
    return QUANTITY.findall(html.unescape(alt))


def test_quantity_pattern():
    """The pattern finds numbers with units and skips bare numbers and words."""
    assert quantities("9.34 ms, 1.76x, 450 GB/s, 1,024 KiB, 16 GPUs, 107 tokens/s") == [
        ("9.34", "ms"),
        ("1.76", "x"),
        ("450", "GB/s"),
        ("1,024", "KiB"),
        ("107", "tokens/s"),
    ]


def sections(page_html: str) -> list[tuple[str, list[str]]]:
    """(visible text, alt texts) of each innermost section of a page.

    A section is a ``<section>`` element without the text of the sections
    inside it; an image belongs to the innermost section around it.
    """
    out: list[tuple[str, list[str]]] = []
    stack: list[list[str]] = [[]]
    for token in re.split(r"(<section\b[^>]*>|</section>)", page_html):
        if token.startswith("<section"):
            stack.append([])
        elif token == "</section>":
            out.append(_section("".join(stack.pop())))
        else:
            stack[-1].append(token)
    out.append(_section("".join(stack[0])))
    return out


def _section(chunk: str) -> tuple[str, list[str]]:
    return visible_text(chunk), re.findall(r'<img alt="([^"]*)"', chunk)


#: Alt-text numbers that today's pages show only in another section than the
#: figure's (a figure summarising numbers the prose gave earlier). Each is still
#: required somewhere on its page; any other alt number must be in its own
#: section. Chapter authors: glue the number into the figure's section (or the
#: caption) and drop it from here.
ELSEWHERE_ON_PAGE: dict[str, set[str]] = {
    "latency.html": {"50 us", "10.14 us", "3 us", "43.47 us", "47.54 us", "9.34 ms", "5.31 ms"},
    "measured.html": {"50 us", "10.14 us", "3 us", "43.47 us", "47.54 us", "9.34 ms", "5.31 ms"},
    "prefill.html": {"5.31 ms", "50 us", "64 GB/s"},
    "sizing.html": {"30.93 GB", "80 GB", "84.93 GB", "79.1 GiB", "16 GiB", "17.18 GB"},
}


def shows(text: str, number: str, unit: str) -> bool:
    """Whether ``text`` shows ``number`` followed by ``unit`` (or its first word)."""
    word = unit.split("/")[0]
    return bool(re.search(rf"(?<![\w.]){re.escape(number)}\s?{re.escape(word)}", text))


def stale_numbers(page_html: str, elsewhere: set[str] = frozenset()) -> list[str]:
    """Numbers quoted by an alt text that the alt's own section does not show.

    Numbers in ``elsewhere`` may instead be shown anywhere on the page.
    """
    page_text = visible_text(page_html)
    stale = []
    for text, alts in sections(page_html):
        for alt in alts:
            for number, unit in quantities(alt):
                quoted = f"{number} {unit}"
                if shows(text, number, unit):
                    continue
                if quoted in elsewhere and shows(page_text, number, unit):
                    continue
                stale.append(quoted)
    return stale


def test_stale_number_elsewhere_on_the_page_is_caught():
    """A number shown only in another section does not vouch for an alt text."""
    page = (
        "<section><p>first: 9.34 ms</p></section>"
        '<section><p>second: 9.5 ms</p><img alt="a bar at 9.34 ms" src="x.png"/></section>'
    )
    assert stale_numbers(page) == ["9.34 ms"]
    assert stale_numbers(page.replace("second: 9.5 ms", "second: 9.34 ms")) == []
    assert stale_numbers(page, {"9.34 ms"}) == []
    assert stale_numbers(page.replace("first: 9.34 ms", "first: 1 ms"), {"9.34 ms"}) == ["9.34 ms"]


def test_alt_numbers_appear_in_their_section(built_book):
    """No alt text quotes a number its own section of the page does not show."""
    stale = []
    for page in sorted(built_book.html_dir.glob("book/*.html")):
        allowed = ELSEWHERE_ON_PAGE.get(page.name, set())
        stale += [f"{page.name}: {n}" for n in stale_numbers(page.read_text(), allowed)]
    assert stale == []
