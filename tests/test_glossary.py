"""Every technical term the chapters use has a glossary entry."""

import re
from pathlib import Path

BOOK = Path(__file__).resolve().parents[1] / "book"

#: Terms a reader new to interconnects must be able to look up (lower case).
TERMS = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "alpha-beta model",
    "bus bandwidth",
    "fabric",
    "hop",
    "infiniband",
    "kv cache",
    "nccl",
    "node",
    "nvlink",
    "nvlink domain",
    "pcie",
    "roce",
    "round trip",
    "one-shot all-reduce",
    "two-shot all-reduce",
    "cuda graph",
    "chunked prefill",
    "micro-batch",
    "sequence parallelism",
)


def glossary_entries() -> set[str]:
    """Defined terms: the unindented lines of the glossary directive."""
    text = (BOOK / "glossary.md").read_text()
    block = text[text.index("```{glossary}") : text.rindex("```")]
    return {line.strip().lower() for line in block.splitlines()[1:] if line and line[0] != " "}


def test_every_listed_term_used_in_a_chapter_is_defined():
    """A term of the list that appears in any chapter has an entry (names may add a suffix)."""
    entries = glossary_entries()
    chapters = " ".join(p.read_text().lower() for p in BOOK.glob("*.md") if p.name != "glossary.md")
    missing = [
        term
        for term in TERMS
        if re.search(rf"\b{re.escape(term)}", chapters)
        and not any(entry == term or entry.startswith(term + " (") for entry in entries)
    ]
    assert missing == []


def test_the_check_sees_entries():
    """Not vacuous: the glossary has many entries and the list's terms are in use."""
    assert len(glossary_entries()) >= 30
    assert "fabric" in glossary_entries()
