"""The landing page: the worked example's numbers, the buyer's two answers and the caveat.

The page quotes the PCIe bandwidth (payloads chapter), three comparisons of
the decode lines and the buyer's boxes (latency chapter), and how the
headline fares on measured fabrics (measured chapter): the one published
PCIe-only latency and the claim's count on the measured PCIe-class systems.
"""

from __future__ import annotations

from lesson_lib.chapters import latency, measured, overview, payloads
from lesson_lib.chapters.glue import glue_numbers

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


def numbers() -> dict[str, str]:
    """Every value the landing page glues.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text: the worked example's numbers, the PCIe
        bandwidth, :data:`FROM_LATENCY`, the buyer's two answers
        (:func:`lesson_lib.chapters.latency.buyer_numbers`) and
        :data:`FROM_MEASURED`.
    """
    scaling = latency.scaling_numbers()
    caveat = measured.numbers()
    return {
        **overview.numbers(),
        "pcie_bandwidth": payloads.payload_numbers()["pcie_bandwidth"],
        **{k: scaling[k] for k in FROM_LATENCY},
        **latency.buyer_numbers(),
        **{k: caveat[k] for k in FROM_MEASURED},
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/index.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
