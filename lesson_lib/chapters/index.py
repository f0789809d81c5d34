"""The landing page: the worked example's numbers, the buyer's two answers and the caveat."""

from __future__ import annotations

from lesson_lib.chapters import latency, measured, overview, payloads
from lesson_lib.chapters.glue import GlueTable, Quote

#: The latency chapter's values the landing page quotes.
FROM_LATENCY: tuple[str, ...] = ("speedup_1_to_4_slow", "slow_4_vs_fast_2", "break_even_4_vs_2")

#: The measured chapter's values the landing page quotes, the caveat on the headline.
FROM_MEASURED: tuple[str, ...] = (
    "pub_pcie_8",
    "pub_pcie_ranks",
    "pub_pcie_vs_fast_2",
    "claim_four_slow_lose",
    "pcie_alpha_4_low",
    "pcie_alpha_4_high",
)


#: What ``book/index.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.GLUE,
    Quote(payloads.payload_numbers, ("pcie_bandwidth",)),
    Quote(latency.scaling_numbers, FROM_LATENCY),
    latency.buyer_numbers,
    Quote(measured.GLUE, FROM_MEASURED),
)
