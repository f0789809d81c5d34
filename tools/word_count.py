"""Count the words a reader reads on the built site, per chapter and per section.

Counts the visible prose of each page's article: paragraphs, lists, captions
and admonitions, with glued numbers as they print. Left out: code (inputs and
text outputs), tables, math, explorers, and the exercises and their solutions,
which the length targets (:data:`TARGETS`) leave out too. Run after ``make book``::

    .venv/bin/python tools/word_count.py            # chapters and the targets
    .venv/bin/python tools/word_count.py --sections # per-section counts too
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html" / "book"

#: The worked example, Overview to Summary, in reading order.
WORKED_EXAMPLE = (
    "overview",
    "sizing",
    "allreduce",
    "payloads",
    "latency",
    "algorithms",
    "prefill",
    "batching",
    "cluster",
    "summary",
)

#: Longest the latency chapter and the worked example may be, in words of prose.
TARGETS = {"latency": 1800, "worked example": 10000}

#: What is not prose a reader reads as text.
NOT_PROSE = (
    "pre",
    "table",
    "div.math",
    "span.math",
    "script",
    "style",
    "div.cell_input",
    "div.highlight",
    "div.lesson-explorer",
    "a.headerlink",
    "img",
    "div.exercise",
    "div.solution",
)


def _article(doc: str, html_dir: Path) -> BeautifulSoup:
    soup = BeautifulSoup((html_dir / f"{doc}.html").read_text(), "html.parser")
    article = soup.find("article", class_="bd-article")
    if article is None:
        raise ValueError(f"{doc}.html has no article element")
    for selector in NOT_PROSE:
        for element in article.select(selector):
            element.decompose()
    return article


def words(doc: str, html_dir: Path = HTML) -> int:
    """Words of visible prose on one built page.

    Parameters
    ----------
    doc : str
        Page name under ``book/`` without its suffix, e.g. ``"latency"``.
    html_dir : Path
        The built ``book/`` folder.

    Returns
    -------
    int
        Whitespace-separated words.
    """
    return len(_article(doc, html_dir).get_text(" ").split())


def section_words(doc: str, html_dir: Path = HTML) -> list[tuple[str, int]]:
    """Words of each section's own prose (its subsections counted apart).

    Parameters
    ----------
    doc : str
        Page name under ``book/`` without its suffix.
    html_dir : Path
        The built ``book/`` folder.

    Returns
    -------
    list of (str, int)
        Heading text and word count, in page order.
    """
    counts = []
    for section in _article(doc, html_dir).find_all("section"):
        heading = section.find(["h1", "h2", "h3", "h4"])
        own = BeautifulSoup(str(section), "html.parser")
        for sub in own.section.find_all("section"):
            sub.decompose()
        title = heading.get_text(" ").strip() if heading else "(untitled)"
        counts.append((title, len(own.get_text(" ").split())))
    return counts


def main(argv: list[str] | None = None) -> int:
    """Print the counts and whether the targets are met; 1 if one is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", action="store_true", help="per-section counts too")
    args = parser.parse_args(argv)
    total = 0
    for doc in WORKED_EXAMPLE:
        count = words(doc)
        total += count
        print(f"{doc:12s} {count:6,d}")
        if args.sections:
            for title, n in section_words(doc):
                print(f"    {n:5d}  {title}")
    print(f"{'worked example':12s} {total:6,d}")
    missed = []
    for name, count in (("latency", words("latency")), ("worked example", total)):
        verdict = "ok" if count <= TARGETS[name] else "over"
        print(f"target {name}: {count:,d} of at most {TARGETS[name]:,d} words: {verdict}")
        if count > TARGETS[name]:
            missed.append(name)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
