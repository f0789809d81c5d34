"""The landing page: the worked example's numbers and the buyer's two answers."""

from __future__ import annotations

from lesson_lib.chapters import allreduce, batching, latency, measured, overview, payloads
from lesson_lib.chapters.glue import GlueTable, Quote

#: What ``book/index.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.WORKED,
    Quote(payloads.payload_numbers, ("pcie_bandwidth",)),
    Quote(
        latency.scaling_numbers, ("speedup_1_to_4_slow", "slow_4_vs_fast_2", "break_even_4_vs_2")
    ),
    Quote(measured.measured_numbers, ("pcie_alpha_4_low", "pcie_alpha_4_high")),
    batching.buyer_numbers,
    Quote(allreduce.allreduce_numbers, ("ar_num_layers", "ar_per_layer")),
)
