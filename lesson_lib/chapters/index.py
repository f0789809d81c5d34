"""The index page: the landing page's numbers: the worked example's and three it quotes from the payloads and latency chapters."""

from __future__ import annotations

from lesson_lib.chapters import latency, overview, payloads
from lesson_lib.chapters.glue import glue_numbers


def numbers() -> dict[str, str]:
    """Every value the index page glues: the worked example's numbers and three quoted from the payloads and latency chapters.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {
        **overview.numbers(),
        "pcie_bandwidth": payloads.payload_numbers()["pcie_bandwidth"],
        **{k: latency.scaling_numbers()[k] for k in ("speedup_1_to_4_slow", "slow_4_vs_fast_2")},
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/index.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
