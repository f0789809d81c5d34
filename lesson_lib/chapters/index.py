"""The landing page: the worked example's numbers, the buyer's two answers and the caveat."""

from __future__ import annotations

from lesson_lib.chapters import latency, measured, overview, payloads
from lesson_lib.chapters.glue import GlueTable, Quote
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.units import format_count

#: The latency chapter's values the landing page quotes.
FROM_LATENCY: tuple[str, ...] = ("speedup_1_to_4_slow", "slow_4_vs_fast_2")

#: The measured chapter's values the landing page quotes, the caveat on the headline.
FROM_MEASURED: tuple[str, ...] = ("pcie_alpha_4_low", "pcie_alpha_4_high", "reference_device")


def _layer_numbers() -> dict[str, str]:
    """Why a token needs its all-reduces: the specimen's layers and the exchanges in each."""
    return {
        "layers": format_count(MODEL.num_layers),
        "allreduces_per_layer": format_count(MODEL.allreduces_per_token // MODEL.num_layers),
    }


#: What ``book/index.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.GLUE,
    Quote(payloads.payload_numbers, ("pcie_bandwidth",)),
    Quote(latency.scaling_numbers, FROM_LATENCY),
    latency.buyer_numbers,
    _layer_numbers,
    Quote(measured.GLUE, FROM_MEASURED),
)
