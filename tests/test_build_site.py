"""The real book build: zero warnings, every page, glued numbers present."""

import re

import pytest
from build_site import (
    CACHE_DIR,
    ROOT,
    invalidate_stale_cache,
    package_fingerprint,
    toc_files,
)

from lesson_lib.chapters.glue import chapter_numbers

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


@pytest.mark.slow
def test_build_has_no_warnings(built_book):
    """`jupyter-book build . -W -n --keep-going` succeeds with zero warnings."""
    assert built_book.warnings == [], "\n".join(built_book.warnings[:20])
    assert built_book.returncode == 0, built_book.output[-3000:]
    assert (built_book.html_dir / "index.html").exists()


@pytest.mark.slow
def test_every_toc_page_is_built(built_book):
    """Each page in _toc.yml has its HTML."""
    missing = [f for f in toc_files() if not (built_book.html_dir / f"{f}.html").exists()]
    assert missing == []


@pytest.mark.slow
def test_headline_numbers_are_glued(built_book):
    """Each headline number appears in the site as pasted (glued) text, never typed."""
    pasted = set()
    for page in built_book.html_dir.glob("book/*.html"):
        pasted |= set(re.findall(r'<span class="pasted-text">([^<]*)</span>', page.read_text()))
    values = chapter_numbers("overview")
    assert [k for k in HEADLINE if values[k] not in pasted] == []


@pytest.mark.slow
def test_no_page_is_a_stub(built_book):
    """No chapter is left as a placeholder."""
    stubs = [
        p.name
        for p in built_book.html_dir.glob("book/*.html")
        if "This chapter is being written" in p.read_text()
    ]
    assert stubs == []


def fake_root(tmp_path):
    (tmp_path / "lesson_lib").mkdir(parents=True)
    (tmp_path / "lesson_lib" / "a.py").write_text("X = 1\n")
    (tmp_path / "requirements.txt").write_text("numpy==2\n")
    return tmp_path


def test_cache_cleared_only_when_lesson_lib_changes(tmp_path):
    """A cache filled by other code is dropped; an up-to-date one is kept."""
    root = fake_root(tmp_path)
    cache = root / CACHE_DIR
    cache.mkdir(parents=True)
    (cache / "entry").write_text("old output")
    assert invalidate_stale_cache(root) is True  # no stamp: unknown provenance
    assert not (cache / "entry").exists()
    (cache / "entry").write_text("fresh output")
    assert invalidate_stale_cache(root) is False
    assert (cache / "entry").exists()
    (root / "lesson_lib" / "a.py").write_text("X = 2\n")
    assert invalidate_stale_cache(root) is True
    assert not (cache / "entry").exists()


def test_fingerprint_covers_code_data_and_pins(tmp_path):
    """Code, data files and requirements all change the fingerprint; caches do not."""
    root = fake_root(tmp_path)
    seen = {package_fingerprint(root)}
    (root / "lesson_lib" / "data.json").write_text("{}")
    seen.add(package_fingerprint(root))
    (root / "requirements.txt").write_text("numpy==3\n")
    seen.add(package_fingerprint(root))
    (root / "lesson_lib" / "__pycache__").mkdir()
    (root / "lesson_lib" / "__pycache__" / "a.pyc").write_bytes(b"x")
    assert package_fingerprint(root) in seen
    assert len(seen) == 3


def test_a_book_without_its_own_package_is_fingerprinted_against_the_checkout(tmp_path):
    """The site without solutions imports the checkout's lesson_lib: its cache follows that."""
    checkout = fake_root(tmp_path / "checkout")
    book = tmp_path / "book"
    cache = book / CACHE_DIR
    cache.mkdir(parents=True)
    assert invalidate_stale_cache(book, checkout) is True  # no stamp
    (cache / "entry").write_text("output")
    assert invalidate_stale_cache(book, checkout) is False
    (checkout / "lesson_lib" / "a.py").write_text("X = 3\n")
    assert invalidate_stale_cache(book, checkout) is True
    assert not (cache / "entry").exists()
