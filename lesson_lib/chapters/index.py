"""The landing page: the worked example's numbers and the buyer's two answers.

The page quotes the PCIe bandwidth (payloads chapter), three comparisons of
the decode lines and the buyer's boxes (latency chapter).
"""

from __future__ import annotations

from lesson_lib.chapters import latency, overview, payloads
from lesson_lib.chapters.glue import glue_numbers

#: The latency chapter's values the landing page quotes.
FROM_LATENCY: tuple[str, ...] = ("speedup_1_to_4_slow", "slow_4_vs_fast_2", "break_even_4_vs_2")


def numbers() -> dict[str, str]:
    """Every value the landing page glues.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text: the worked example's numbers, the PCIe
        bandwidth, :data:`FROM_LATENCY` and the buyer's two answers
        (:func:`lesson_lib.chapters.latency.buyer_numbers`).
    """
    scaling = latency.scaling_numbers()
    return {
        **overview.numbers(),
        "pcie_bandwidth": payloads.payload_numbers()["pcie_bandwidth"],
        **{k: scaling[k] for k in FROM_LATENCY},
        **latency.buyer_numbers(),
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/index.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
