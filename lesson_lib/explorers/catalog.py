"""Where each live explorer appears: its builder and the chapter that shows it.

The browser tests and benchmark walk this list, so a listed explorer is tested on the page.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from lesson_lib.explorers._base import Explorer


@dataclass(frozen=True)
class Entry:
    """One explorer of the book."""

    #: The chapter's docname (``book/latency``).
    doc: str
    #: ``module:function`` of the builder, called with no arguments.
    builder: str

    def build(self) -> Explorer:
        """Call the builder."""
        module, _, name = self.builder.partition(":")
        factory: Callable[[], Explorer] = getattr(importlib.import_module(module), name)
        return factory()


#: Every explorer, in book order.
EXPLORERS: tuple[Entry, ...] = (
    Entry("book/sizing", "lesson_lib.explorers.sizing:sizing_explorer"),
    Entry("book/allreduce", "lesson_lib.explorers.allreduce:ring_explorer"),
    Entry("book/latency", "lesson_lib.explorers.latency:decode_explorer"),
    Entry("book/prefill", "lesson_lib.explorers.prefill:prefill_explorer"),
    Entry("book/kv_transfer", "lesson_lib.explorers.kv_transfer:kv_transfer_explorer"),
    Entry("book/cluster", "lesson_lib.explorers.cluster:cluster_explorer"),
    Entry("book/experts", "lesson_lib.explorers.experts:experts_explorer"),
    Entry("book/overlap", "lesson_lib.explorers.overlap:overlap_explorer"),
)
