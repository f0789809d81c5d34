"""A figure and the text beside it never show one quantity in two different units.

A reader can take a figure's "17.18 GB" of KV cache and the table's "16 GiB"
beside it for two different numbers. This test reads every figure the book
shows (``BOOK_FIGURES``, built as its chapter builds it), finds each
number-with-unit it draws, and compares it with the numbers the built page
prints in the figure's own section: when the same quantity appears there in
another unit of its family (GB and GiB, ms and us, GB/s and MiB/s), the
figure must also show it in the text's unit, or the text in the figure's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from figure_texts import shown_texts
from test_figures_text_size import _CELL, BOOK_FIGURES

from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS

pytestmark = pytest.mark.slow

BOOK = Path(__file__).resolve().parents[1] / "book"

#: unit -> (family, factor to the family's base unit), from lesson_lib's own unit tables.
UNITS: dict[str, tuple[str, float]] = {
    **{f"{unit}/s": ("rate", factor) for unit, factor in BYTE_UNITS.items() if unit != "B"},
    **{unit: ("bytes", factor) for unit, factor in BYTE_UNITS.items() if unit != "B"},
    "us": ("time", TIME_UNITS["us"]),
    "µs": ("time", TIME_UNITS["us"]),
    "ms": ("time", TIME_UNITS["ms"]),
}
QUANTITY = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?("
    + "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
    + r")(?![\w/])"
)


def quantities(text: str) -> set[tuple[str, str]]:
    """(number as printed, unit) pairs in a text."""
    return set(QUANTITY.findall(text))


def _value(number: str, unit: str) -> tuple[str, float, float]:
    """Family, value in the family's base unit, and half the printed precision."""
    family, factor = UNITS[unit]
    decimals = len(number.split(".")[1]) if "." in number else 0
    return family, float(number.replace(",", "")) * factor, 0.5 * 10**-decimals * factor


def unit_clashes(figure_text: str, page_text: str) -> list[str]:
    """Quantities the figure prints in one unit and the page in another, and not both ways."""
    shown_by_page = quantities(page_text)
    shown_by_figure = quantities(figure_text)
    clashes = []
    for number, unit in sorted(shown_by_figure):
        family, value, slack = _value(number, unit)
        for other_number, other_unit in sorted(shown_by_page):
            other_family, other_value, other_slack = _value(other_number, other_unit)
            if other_family != family or other_unit == unit:
                continue
            gap = abs(value - other_value)
            # Equal within the printed precision, and close (an axis tick of "1 TB/s"
            # is not the "900 GB/s" of the text).
            same = gap <= slack + other_slack and gap <= 0.015 * max(value, other_value)
            bridged = (number, unit) in shown_by_page or (
                other_number,
                other_unit,
            ) in shown_by_figure
            if same and not bridged:
                clashes.append(f"figure {number} {unit} vs text {other_number} {other_unit}")
    return clashes


def test_clash_is_found_and_a_bridge_clears_it():
    """16 GiB in the text and 17.18 GB in the figure clash, unless one side shows both."""
    assert unit_clashes("KV cache 17.18 GB", "one sequence takes 16 GiB") == [
        "figure 17.18 GB vs text 16 GiB"
    ]
    assert unit_clashes("KV cache 17.18 GB = 16 GiB", "one sequence takes 16 GiB") == []
    assert unit_clashes("KV cache 17.18 GB", "16 GiB (17.18 GB)") == []
    # Different quantities in different units do not clash, nor the same unit.
    assert unit_clashes("weights 54 GB", "one sequence takes 16 GiB") == []
    assert unit_clashes("1,280 us", "1.28 ms per token") == ["figure 1,280 us vs text 1.28 ms"]
    assert unit_clashes("9.34 ms", "9.34 ms per token") == []
    assert unit_clashes("axis tick 1 TB/s", "a link of 900 GB/s") == []


def _figure_name(chapter: str, call: str) -> str:
    """The ``name:`` of the code cell in ``book/<chapter>.md`` that makes ``call``."""
    source = (BOOK / f"{chapter}.md").read_text(encoding="utf-8")
    for cell in _CELL.findall(source):
        if call in " ".join(cell.split()):
            name = re.search(r"^\s+name:\s*(\S+)", cell, flags=re.M)
            assert name, f"{chapter}: the cell making {call} has no figure name"
            return name.group(1)
    raise AssertionError(f"{chapter}: no cell makes {call}")


@pytest.mark.parametrize("key", sorted(BOOK_FIGURES), ids=lambda key: f"{key[0]}:{key[1][:40]}")
def test_figure_units_agree_with_their_section(built_book, key):
    """Each quantity a figure draws is in the unit its section's text uses for it."""
    chapter, call = key
    name = _figure_name(chapter, call)
    soup = BeautifulSoup(
        (built_book.html_dir / "book" / f"{chapter}.html").read_text(encoding="utf-8"),
        "html.parser",
    )
    figure = soup.find(id=name)
    assert figure is not None, f"{chapter}.html has no element {name}"
    section = figure.find_parent("section")
    for hidden in section.select("script, style"):
        hidden.decompose()
    _, texts = shown_texts(BOOK_FIGURES[key]())
    figure_text = "  ".join(t.text for t in texts)
    assert unit_clashes(figure_text, section.get_text(" ")) == []
