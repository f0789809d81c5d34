"""Every technical term the chapters use has a glossary entry."""

import re
from pathlib import Path

import pytest

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
    "expert parallelism",
    "mixture of experts",
    "dp attention",
    "disaggregated serving",
    "context parallelism",
    "ring attention",
    "gpudirect rdma",
    "ttft",
    "tpot",
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


#: Pages read as prose, in the book's order (the glossary and API pages are reference).
PAGES = tuple(p.stem for p in sorted(BOOK.glob("*.md")) if p.stem not in ("glossary", "api"))


#: An opening or closing fence: backticks or colons, then an info string.
FENCE = re.compile(r"^(`{3,}|:{3,})\s*(.*?)\s*$")
#: Info strings of blocks that hold code, not prose (an empty one is a plain code block).
CODE_INFO = re.compile(r"^(\{code-cell\}.*|bash|python|text|console|ini|)$")


def without_code_blocks(text: str) -> str:
    """The text with every code block dropped and every directive's body kept.

    Fences are matched line by line, so a directive's closing fence is never
    taken for the start of a code block (which would hide the prose after it).
    """
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # (fence, inside code)
    for line in text.splitlines():
        match = FENCE.match(line)
        in_code = any(code for _, code in stack)
        if match:
            fence, info = match.groups()
            if (
                stack
                and not info
                and fence[0] == stack[-1][0][0]
                and len(fence) >= len(stack[-1][0])
            ):
                stack.pop()
                continue
            stack.append((fence, in_code or bool(CODE_INFO.match(info))))
            continue
        if not in_code:
            out.append(line)
    return "\n".join(out)


def prose_of(markdown: str) -> str:
    """The page's running text, lower case: no front matter, code, math, headings or links' targets."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    text = without_code_blocks(text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", text, flags=re.S)
    text = re.sub(r"\{(glue:text|glue|ref|numref|doc|eq)\}`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    lines = [
        line for line in text.splitlines() if not line.lstrip().startswith(("#", ":", "(", "|"))
    ]
    return "\n".join(lines).lower()


def unlinked_first_uses(markdown: str) -> list[str]:
    """Listed terms whose first use in the page's running text is not a glossary link."""
    text = prose_of(markdown)
    links = [(m.start(), m.end()) for m in re.finditer(r"\{term\}`[^`]*`", text)]
    unlinked = []
    for term in TERMS:
        first = re.search(rf"\b{re.escape(term)}", text)
        if first and not any(start <= first.start() < end for start, end in links):
            unlinked.append(term)
    return unlinked


@pytest.mark.parametrize("page", PAGES)
def test_first_use_of_a_term_on_each_page_links_the_glossary(page):
    """A student who opens any page meets each listed term first as a link to its definition."""
    assert unlinked_first_uses((BOOK / f"{page}.md").read_text()) == []


def test_first_use_check_sees_an_unlinked_term():
    """Not vacuous: a bare first use fails, a linked one passes, code and headings are ignored."""
    assert unlinked_first_uses("One NCCL call, then {term}`NCCL` again.") == ["nccl"]
    assert unlinked_first_uses("The {term}`fabric` is slow; the fabric is PCIe.") == ["pcie"]
    assert unlinked_first_uses("## The fabric\n\n```{code-cell} ipython3\nfabric = 1\n```\n") == []
    # A directive's closing fence does not hide the prose after it.
    after_directive = "```{exercise}\nA {term}`hop`.\n```\n\nThe fabric.\n\n```python\nx = 1\n```\n"
    assert unlinked_first_uses(after_directive) == ["fabric"]
