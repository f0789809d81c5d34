"""The summary page: the worked example's numbers and what it quotes from the chapters."""

from __future__ import annotations

from lesson_lib.chapters import (
    batching,
    experts,
    kv_transfer,
    latency,
    measured,
    overview,
    payloads,
    sizing,
)
from lesson_lib.chapters.glue import glue_numbers


def numbers() -> dict[str, str]:
    """Every value the summary page glues.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text: the worked example's numbers, the batch
        crossover on four GPUs (batching), the ring-of-4 rate (payloads), the
        KV heads (sizing), the slow fabric's break-even latency and the
        buyer's two answers (latency), how the headline fares on the measured
        PCIe-class systems (measured), DeepSeek-V3's all-to-alls per token
        (experts), and a full-length request's hand-off from prefill to decode
        GPUs on each link (kv_transfer).
    """
    return {
        **overview.numbers(),
        "batch_crossover_4": batching.batching_numbers()["batch_crossover_4"],
        "rate_4_gb": payloads.payload_numbers()["rate_4_gb"],
        "sizing_kv_heads": sizing.sizing_numbers()["sizing_kv_heads"],
        "break_even_4_vs_2": latency.scaling_numbers()["break_even_4_vs_2"],
        **latency.buyer_numbers(),
        "claim_four_slow_lose": measured.measured_numbers()["claim_four_slow_lose"],
        "ds_alltoalls": experts.experts_numbers()["ds_alltoalls"],
        **{
            name: kv_transfer.kv_transfer_numbers()[name]
            for name in ("full_nvlink", "full_nic", "full_ethernet", "stream_full_nic")
        },
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/summary.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
