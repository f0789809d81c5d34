"""The real book build: zero warnings, every page, glued numbers present."""

import re

import pytest

from lesson_lib.site import ROOT, toc_files
from lesson_lib.worked_example import numbers

pytestmark = pytest.mark.slow

#: The worked example's headline numbers the built site must show as glued text.
HEADLINE = [
    "weights_gb",
    "kv_full_gib",
    "wire_2",
    "wire_4",
    "latency_fast_total",
    "latency_slow_total",
    "line_2_fast",
    "line_4_fast",
    "line_4_slow",
    "speedup_2_to_4",
    "prefill_payload",
]


def test_toc_lists_pages():
    """The toc parser finds the root and the reference pages."""
    files = toc_files()
    assert files[0] == "book/index"
    assert "book/api" in files
    assert all((ROOT / f"{f}.md").exists() for f in files)


def test_build_has_no_warnings(built_book):
    """`jupyter-book build . -W -n --keep-going` succeeds with zero warnings."""
    assert built_book.warnings == [], "\n".join(built_book.warnings[:20])
    assert built_book.returncode == 0, built_book.output[-3000:]
    assert (built_book.html_dir / "index.html").exists()


def test_every_toc_page_is_built(built_book):
    """Each page in _toc.yml has its HTML."""
    missing = [f for f in toc_files() if not (built_book.html_dir / f"{f}.html").exists()]
    assert missing == []


def test_headline_numbers_are_glued(built_book):
    """Each headline number appears in the site as pasted (glued) text, never typed."""
    pasted = set()
    for page in built_book.html_dir.glob("book/*.html"):
        pasted |= set(re.findall(r'<span class="pasted-text">([^<]*)</span>', page.read_text()))
    values = numbers()
    assert [k for k in HEADLINE if values[k] not in pasted] == []


def test_no_page_is_a_stub(built_book):
    """No chapter is left as a placeholder."""
    stubs = [
        p.name
        for p in built_book.html_dir.glob("book/*.html")
        if "This chapter is being written" in p.read_text()
    ]
    assert stubs == []
