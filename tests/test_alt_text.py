"""Figure alt text agrees with the page: every number it quotes, the page shows.

Alt text lives in cell metadata and cannot be glued, so it is the one place a
number could go stale when lesson_lib changes. This test catches that: each
number-with-unit in an image's alt text must appear, with its unit, in the
visible text of the same built page (glued prose, tables, widget messages).
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


def test_alt_numbers_appear_on_the_page(built_book):
    """No alt text quotes a number the page itself does not show."""
    stale = []
    for page in sorted(built_book.html_dir.glob("book/*.html")):
        source = page.read_text()
        text = visible_text(source)
        for alt in re.findall(r'<img alt="([^"]*)"', source):
            for number, unit in quantities(alt):
                word = unit.split("/")[0]
                if not re.search(rf"(?<![\w.]){re.escape(number)}\s?{re.escape(word)}", text):
                    stale.append(f"{page.name}: {number} {unit}")
    assert stale == []
