"""The summary page: the summary's numbers: the worked example's and three it quotes from the sizing, payloads and batching chapters."""

from __future__ import annotations

from lesson_lib.chapters import batching, experts, overview, payloads, sizing
from lesson_lib.chapters.glue import glue_numbers


def numbers() -> dict[str, str]:
    """Every value the summary page glues: the worked example's numbers and four quoted from the sizing, payloads, batching and experts chapters.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {
        **overview.numbers(),
        "batch_crossover_4": batching.batching_numbers()["batch_crossover_4"],
        "rate_4_gb": payloads.payload_numbers()["rate_4_gb"],
        "sizing_kv_heads": sizing.sizing_numbers()["sizing_kv_heads"],
        "ds_alltoalls": experts.experts_numbers()["ds_alltoalls"],
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/summary.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
