"""Every listed explorer builds, and its chapter shows it."""

from __future__ import annotations

import pytest
from build_site import ROOT, toc_files

from lesson_lib.explorers._base import Explorer
from lesson_lib.explorers.catalog import EXPLORERS


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.builder)
def test_entry_builds_and_its_chapter_calls_it(entry):
    assert entry.doc in toc_files()
    explorer = entry.build()
    assert isinstance(explorer, Explorer)
    module, _, name = entry.builder.partition(":")
    source = (ROOT / f"{entry.doc}.md").read_text()
    assert f"from {module} import {name}" in source
    assert f"\n{name}()\n" in source


def test_titles_are_unique():
    titles = [e.build().title for e in EXPLORERS]
    assert len(titles) == len(set(titles))


def test_explorers_sharing_a_page_share_no_control_name():
    """Vega names each input after its parameter; radio groups of one page must not merge."""
    by_doc: dict[str, list[str]] = {}
    for entry in EXPLORERS:
        by_doc.setdefault(entry.doc, []).extend(c.name for c in entry.build().controls)
    for doc, names in by_doc.items():
        assert len(names) == len(set(names)), doc
