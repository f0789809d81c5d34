"""The built pages hold what their sources say: the article's sections.

Checked on the HTML of the build (no browser): a page whose article came out
empty fails here even though a browser shows no error for it.
"""

from __future__ import annotations

import html
import re

import pytest
from build_site import ROOT, toc_files

pytestmark = pytest.mark.slow

DOCS = toc_files()


def squash(text: str) -> str:
    """Lower-case text with markup, punctuation and repeated spaces removed."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return re.sub(r"[^\w]+", " ", text).strip().lower()


def article(page_html: str) -> str:
    """The HTML of the page's main article."""
    m = re.search(r'<article class="bd-article"[^>]*>(.*?)</article>', page_html, flags=re.S)
    assert m, "no article element"
    return m.group(1)


def headings(doc: str) -> list[str]:
    """Section titles of a MyST source, outside code fences, markup removed."""
    out, fence = [], None
    for line in (ROOT / f"{doc}.md").read_text().splitlines():
        m = re.match(r"^(`{3,}|:{3,})", line)
        if m:
            fence = None if fence and line.startswith(fence) else fence or m.group(1)
            continue
        if fence is None and re.match(r"^#{1,3} ", line):
            title = re.sub(r"\{[\w:-]+\}`([^`<]*)(<[^`]*>)?`", r"\1", line.lstrip("#"))
            title = re.sub(r"\$[^$]+\$", f" {MATH} ", title)  # built as SVG, its TeX gone
            out.append(squash(title.replace("`", "")))
    return out


#: Stands for a formula in a heading: the built page shows it as SVG and MathML.
MATH = "formulaplaceholder"


def found_in(heading: str, text: str) -> bool:
    """Whether ``heading`` (squashed) is in ``text``, a formula in it matching any words."""
    pattern = r"\b.*?\b".join(re.escape(part.strip()) for part in heading.split(MATH))
    return re.search(pattern, text) is not None


@pytest.mark.parametrize("doc", DOCS)
def test_article_has_every_section_of_its_source(built_book, doc):
    """Every heading of the source is in the built article, with text beneath."""
    body = article((built_book.html_dir / f"{doc}.html").read_text())
    text = squash(body)
    missing = [h for h in headings(doc) if h and not found_in(h, text)]
    assert missing == []
    assert len(text.split()) >= 20 * max(1, len(headings(doc)))


def test_checks_fail_on_an_emptied_page():
    """The helpers see an emptied article."""
    empty = '<article class="bd-article" role="main"></article>'
    assert squash(article(empty)) == ""
    assert "overview" in " ".join(headings("book/overview"))
    assert found_in(
        f"why each rank sends {MATH} of the payload", "why each rank sends 2 n 1 n of the payload"
    )
    assert not found_in(f"why each rank sends {MATH} of the payload", "why each rank sends")


#: Source markup that means a role, a table or a directive was not rendered.
RAW_MARKUP = re.compile(r"\{(term|glue:text|glue|ref|numref)\}`|\|\s*-{3,}\s*\||^```\{", re.M)


def raw_markup(page_html: str) -> list[str]:
    """Pieces of MyST or Markdown source left as text in the article (code blocks aside)."""
    body = re.sub(r"<(pre|code|script|style)\b.*?</\1>", " ", article(page_html), flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "\n", body))
    return [m.group(0) for m in RAW_MARKUP.finditer(text)]


@pytest.mark.parametrize("doc", DOCS)
def test_no_source_markup_shows_on_the_page(built_book, doc):
    """No role, Markdown table or directive of the source reaches the reader as raw text."""
    assert raw_markup((built_book.html_dir / f"{doc}.html").read_text()) == []


def test_raw_markup_is_seen():
    """A Markdown table printed as a paragraph and a raw role are caught; code is not."""
    page = (
        '<article class="bd-article"><p>| a | b |\n|---|---|\n| 0 | x |</p>'
        "<p>see {term}`fabric`</p><pre>{term}`in code`</pre><code>{glue:text}`x`</code></article>"
    )
    assert raw_markup(page) == ["|---|", "{term}`"]
    assert raw_markup('<article class="bd-article"><p>fine</p></article>') == []
