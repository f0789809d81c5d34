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
    "kernel fusion",
    "dual-batch overlap",
    "nvfp4",
    "quantized all-reduce",
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
    # Everyday words of the field, each defined where first used and in the glossary.
    "rank",
    "hbm",
    "collective",
    "hidden vector",
    "payload",
    "kernel launch",
    "kernel",
    "nvswitch",
    "gated deltanet",
    "linear attention",
    "super-block",
    "roofline",
    "ffn",
    "bf16",
    "specimen",
    "h100 sxm",
    "link",
    "all-to-all",
    "disaggregation",
    "hand-off",
    "deepep",
    "nvl72",
    "sequence mixer",
    "prefill",
    "decode",
    "tensor parallelism",
    "pipeline parallelism",
    "data parallelism",
    "latency-bound",
    "bandwidth-bound",
    "ring all-reduce",
    "nic",
    "decode context parallelism",
    "multi-head latent attention",
    "aiconfigurator",
    "gated attention",
    "oneccl",
    "symmetric memory",
    "eager execution",
    "rotary position embedding",
    # Names of engines, libraries, formats and hardware a student meets in passing.
    "vllm",
    "sglang",
    "tensorrt-llm",
    "serving engine",
    "cuda",
    "ndr",
    "pcie gen5 x16",
    "grouped-query attention",
    "fp8",
    "mxfp4",
    "rdma",
    "megatron-lm",
    "deepseek-v3",
    "bubble",
    "mpi",
    "mpich",
    "p50",
    "p99",
    "percentile",
    "causal attention",
    "kv connector",
    "value head",
    "short convolution",
    "output head",
    "sliding-window attention",
    "h200",
    "tray",
    "critical path",
    "log-sum-exp",
    "eplb",
    "flashinfer",
    "mnnvl",
    "gemm",
    "rmsnorm",
    "collective matmul",
    "flop",
    "embedding table",
    "speculative decoding",
    "replica",
    "point-to-point",
    "query head",
)


def term_pattern(term: str) -> re.Pattern[str]:
    """The term as a word, with a plural ending allowed and a space matching a hyphen or a line break.

    "hop" finds "hops" but not "Hopper"; "linear attention" finds
    "linear-attention state".
    """
    words = r"[\s-]+".join(re.escape(word) for word in re.split(r"[ -]", term))
    return re.compile(rf"\b{words}(?:e?s)?\b")


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
        if term_pattern(term).search(chapters)
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


#: A target label line, "(latency)=".
LABEL = re.compile(r"^\([\w-]+\)=\s*$")


def prose_of(markdown: str) -> str:
    """The page's running text, lower case: no front matter, code, math, headings or links' targets."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    text = without_code_blocks(text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", text, flags=re.S)
    text = re.sub(r"\{(glue:text|glue|ref|numref|doc|eq)\}`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    # Inline code is not prose; a role's backticks ({term}`...`) are kept.
    text = re.sub(r"(\{[^}\s]+\})?`[^`\n]*`", lambda m: m[0] if m[1] else " ", text)
    lines = [
        line
        for line in text.splitlines()
        if not line.lstrip().startswith(("#", ":", "|")) and not LABEL.match(line)
    ]
    return "\n".join(lines).lower()


def unlinked_first_uses(markdown: str) -> list[str]:
    """Listed terms whose first use in the page's running text is not a glossary link."""
    text = prose_of(markdown)
    links = [(m.start(), m.end()) for m in re.finditer(r"\{term\}`[^`]*`", text)]
    unlinked = []
    for term in TERMS:
        first = term_pattern(term).search(text)
        if first and not any(start <= first.start() < end for start, end in links):
            unlinked.append(term)
    return unlinked


#: Words a page uses in another sense than the glossary's: the instructor page's
#: kernel is Jupyter's and its link a file system's.
OTHER_SENSES: dict[str, tuple[str, ...]] = {"instructor": ("kernel", "link")}


@pytest.mark.parametrize("page", PAGES)
def test_first_use_of_a_term_on_each_page_links_the_glossary(page):
    """A student who opens any page meets each listed term first as a link to its definition."""
    unlinked = unlinked_first_uses((BOOK / f"{page}.md").read_text())
    assert [term for term in unlinked if term not in OTHER_SENSES.get(page, ())] == []


def test_first_use_check_sees_an_unlinked_term():
    """Not vacuous: a bare first use fails, a linked one passes, code and headings are ignored."""
    assert unlinked_first_uses("One NCCL call, then {term}`NCCL` again.") == ["nccl"]
    assert unlinked_first_uses("The {term}`fabric` is slow; the fabric is PCIe.") == ["pcie"]
    assert unlinked_first_uses("## The fabric\n\n```{code-cell} ipython3\nfabric = 1\n```\n") == []
    # A directive's closing fence does not hide the prose after it.
    after_directive = "```{exercise}\nA {term}`hop`.\n```\n\nThe fabric.\n\n```python\nx = 1\n```\n"
    assert unlinked_first_uses(after_directive) == ["fabric"]


#: What the built site shows that is not running text: code and what it prints
#: (no place for a link), math, headings, tables, figure captions (written as
#: cell metadata) and explorers.
SITE_NOT_PROSE = (
    "pre",
    "code",
    "div.math",
    "span.math",
    "script",
    "style",
    "h1",
    "h2",
    "h3",
    "h4",
    "table",
    "figcaption",
    "div.cell_input",
    "div.cell_output",
    "div.lesson-explorer",
    "a.headerlink",
)


def _glossary_link(node) -> bool:
    """Whether a text node sits inside a link to a glossary entry."""
    return any(
        parent.name == "a" and "glossary.html#term-" in parent.get("href", "")
        for parent in node.parents
    )


def unlinked_first_uses_on_site(html: str, terms: tuple[str, ...] = TERMS) -> list[str]:
    """Listed terms whose first use in a built page's article is not a glossary link.

    A use inside the glossary's own definition list (``dt``) counts as defined
    in place.
    """
    from bs4 import BeautifulSoup

    article = BeautifulSoup(html, "html.parser").find("article", class_="bd-article")
    assert article is not None, "no article element"
    for selector in SITE_NOT_PROSE:
        for element in article.select(selector):
            element.decompose()
    # A cross-reference shows its target's title, not the page's words.
    for link in article.select("a.reference.internal"):
        if "glossary.html#term-" not in link.get("href", ""):
            link.decompose()
    nodes = [node for node in article.find_all(string=True) if node.strip()]
    starts, text = [], ""
    for node in nodes:
        starts.append(len(text))
        text += " " + " ".join(node.split()).lower()
    linked = {}  # glossary entry, as its anchor's letters -> where the page first links it
    for i, node in enumerate(nodes):
        link = node.find_parent("a", href=re.compile(r"glossary\.html#term-"))
        if link is not None:
            linked.setdefault(_letters(link["href"].split("#term-")[1]), starts[i])
    unlinked = []
    for term in terms:
        first = term_pattern(term).search(text)
        if first is None:
            continue
        node = nodes[max(i for i, start in enumerate(starts) if start <= first.start())]
        # A link to the term's entry under other words ("One-shot" for the
        # one-shot all-reduce) before or at its first use counts too.
        entry_linked = any(
            key.startswith(_letters(term)) and where <= first.start()
            for key, where in linked.items()
        )
        if not (entry_linked or _glossary_link(node) or node.find_parent("dt")):
            unlinked.append(term)
    return unlinked


def _letters(name: str) -> str:
    """A term or an anchor as lower-case letters and digits only ("term-KV-cache" -> "kvcache")."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _toc_pages() -> list[str]:
    """The book's pages in reading order, from ``_toc.yml`` (the API pages left out)."""
    toc = (BOOK.parent / "_toc.yml").read_text()
    pages = re.findall(r"file: book/(\w+)\s*$", toc, flags=re.M)
    return [page for page in pages if page not in ("api", "glossary")]


def test_site_check_sees_an_unlinked_term():
    """Not vacuous: a bare first use fails, a glossary link passes, code and headings do not count."""
    page = (
        '<article class="bd-article"><h2>Ranks</h2><p>Each <code>rank</code> and each '
        '<a href="glossary.html#term-rank">rank</a>; the fabric.</p></article>'
    )
    assert unlinked_first_uses_on_site(page, ("rank", "fabric")) == ["fabric"]
    glossary = '<article class="bd-article"><dl><dt id="term-fabric">fabric</dt></dl></article>'
    assert unlinked_first_uses_on_site(glossary, ("fabric",)) == []


@pytest.mark.slow
def test_first_use_on_the_built_site_links_the_glossary(built_book):
    """On every built page a student meets each listed term first as a link to its entry.

    The site shows what the source check cannot: glued text and the Markdown
    as rendered.
    """
    html_dir = built_book.html_dir / "book"
    unlinked = {}
    for page in _toc_pages():
        found = unlinked_first_uses_on_site((html_dir / f"{page}.html").read_text())
        found = [term for term in found if term not in OTHER_SENSES.get(page, ())]
        if found:
            unlinked[page] = found
    assert unlinked == {}


#: Words a reader met before their definition, each as a pattern over the source (a role's
#: backtick may sit inside it) and, for those defined in the running text rather than the
#: glossary, a pattern of the definition that must share the paragraph of the first use.
READING_ORDER_TERMS: dict[str, tuple[str, str | None]] = {
    "HBM": (r"\bHBM\b", None),
    "aiconfigurator": (r"\baiconfigurator\b", None),
    "gated attention": (r"\bgated attention\b", None),
    "per hop": (r"\bper[ -]hop\b", r"\{term\}`hops?`|\{term\}`hops <hop>`"),
    "two-shot": (r"\btwo-shot\b", None),
    "one-shot": (r"\bone-shot\b", None),
    "alpha-beta model": (r"\balpha-beta model\b", None),
    "eagerly": (r"\beager(ly)?\b", None),
    "oneCCL": (r"\boneCCL\b", None),
    "MIN_LATENCY": (r"\bMIN_LATENCY\b", None),
    "LOWPRECISION": (r"\bLOWPRECISION\b", r"8-bit values"),
    "MNNVL": (r"\bMNNVL\b", r"NVLink across nodes"),
    "UB": (r"`UB`", None),
    "NVFP4": (r"\bNVFP4\b", None),
    "RMSNorm": (r"\bRMSNorm\b", None),
    "symmetric memory": (r"\bsymmetric[ -]memory\b", None),
    "collective matmul": (r"\bcollective`?\s+matmul\b", r"matrix product \(matmul\)"),
    "GEMM": (r"\bGEMMs?\b", None),
    "log-sum-exp": (r"\blog-sum-exp\b", r"logarithm of each part's sum"),
    "rotary": (r"\brotary\b", None),
    "EPLB": (r"\bEPLB\b", r"expert-parallel load balancer"),
    "F, the card's peak rate": (r"c\^2 / F\$", r"\$F\$ the card's\s+peak arithmetic rate"),
}


def first_use_in_reading_order(
    pages: list[tuple[str, str]], pattern: str, definition: str | None
) -> tuple[str, bool] | None:
    """(page, defined) at a pattern's first match over pages' text without code, tables kept.

    Defined means inside a ``{term}`` link or, for a running-text definition, in the
    same paragraph as ``definition``; ``None`` when no page uses the pattern.
    """
    for page, markdown in pages:
        text = without_code_blocks(re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S))
        first = re.search(pattern, text)
        if first is None:
            continue
        links = [(m.start(), m.end()) for m in re.finditer(r"\{term\}`[^`]*`", text)]
        linked = any(start <= first.start() < end for start, end in links)
        start = text.rfind("\n\n", 0, first.start())
        end = text.find("\n\n", first.end())
        paragraph = text[start + 1 : end if end >= 0 else len(text)]
        return page, linked or bool(definition and re.search(definition, paragraph))
    return None


def test_first_use_in_reading_order_is_defined():
    """Each word a student met undefined is, at its first use in the book's order, defined there.

    The order is the table of contents' (the landing page first); a link to the
    glossary counts, as does a definition in the same paragraph.
    """
    pages = [(page, (BOOK / f"{page}.md").read_text()) for page in ["index", *_toc_pages()]]
    found = {
        name: first_use_in_reading_order(pages, pattern, definition)
        for name, (pattern, definition) in READING_ORDER_TERMS.items()
    }
    assert {name: use for name, use in found.items() if use and not use[1]} == {}
    assert found["HBM"] == ("index", True) and found["two-shot"] == ("overview", True)


def test_reading_order_check_sees_a_term_before_its_definition():
    """Not vacuous: a bare use fails even when a later page links it; a nearby definition passes."""
    pages = [("a", "The GEMM runs.\n"), ("b", "A {term}`GEMM`.\n")]
    assert first_use_in_reading_order(pages, r"\bGEMM\b", None) == ("a", False)
    assert first_use_in_reading_order(pages[1:], r"\bGEMM\b", None) == ("b", True)
    defined = [("a", "Kernels ([EPLB](x)), the expert-parallel load balancer.\n\nEPLB.\n")]
    assert first_use_in_reading_order(defined, r"\bEPLB\b", "expert-parallel load balancer")[1]
    code = [("a", "```{code-cell} ipython3\nGEMM = 1\n```\n")]
    assert first_use_in_reading_order(code, r"\bGEMM\b", None) is None
