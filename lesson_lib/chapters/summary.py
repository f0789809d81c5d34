"""The summary page: the worked example's numbers and what it quotes from the chapters."""

from __future__ import annotations

from lesson_lib.chapters import (
    batching,
    experts,
    latency,
    measured,
    overview,
    payloads,
    sizing,
)
from lesson_lib.chapters.glue import GlueTable, Quote

#: What ``book/summary.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.WORKED,
    Quote(batching.batching_numbers, ("batch_crossover_4",)),
    Quote(payloads.payload_numbers, ("rate_4_mb",)),
    Quote(sizing.sizing_numbers, ("sizing_kv_heads",)),
    Quote(latency.scaling_numbers, ("break_even_4_vs_2",)),
    batching.buyer_numbers,
    Quote(measured.measured_numbers, ("pcie_alpha_4_low", "pcie_alpha_4_high")),
    Quote(experts.experts_numbers, ("ds_alltoalls",)),
)
