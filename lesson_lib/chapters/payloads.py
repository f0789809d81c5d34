"""The payloads page: decode's bytes per rank at an interactive rate, against the fabrics."""

from __future__ import annotations

from collections.abc import Sequence

from lesson_lib.chapters import allreduce, overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.model._validate import require_instance, require_number
from lesson_lib.model.collectives import allreduce_latency, ring_allreduce_factor
from lesson_lib.model.payloads import decode_wire_bytes, decode_wire_rate, headroom, tokens_to_fill
from lesson_lib.model.specimen import (
    GPU,
    INFINIBAND_NDR_BANDWIDTH,
    MODEL,
    NVLINK_BANDWIDTH,
    PCIE_BANDWIDTH,
    SLOW,
    TOKENS_PER_S,
)
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import MiB, format_bytes, format_count, format_rate, format_seconds

#: The round figure decode traffic per rank stays under ("under 100 MiB per
#: second"), a rounding error next to any fabric; it is not a limit of any wire.
RATE_YARDSTICK: float = 100 * MiB


def payload_numbers(model: ModelSpec = MODEL, tokens_per_s: float = TOKENS_PER_S) -> dict[str, str]:
    """The payloads chapter's numbers beyond :func:`~lesson_lib.chapters.overview.worked_example_numbers`.

    Parameters
    ----------
    model : ModelSpec, default the specimen
    tokens_per_s : float, default the lesson's 50
        Interactive decode rate, tokens/second (> 0).

    Returns
    -------
    dict of str to str
    """
    require_instance("model", model, ModelSpec)
    tokens_per_s = require_number("tokens_per_s", tokens_per_s, strict=True, unit="tokens/s")
    rate4 = decode_wire_rate(model, 4, tokens_per_s)
    bytes_time_8 = decode_wire_bytes(model, 8) / SLOW.bandwidth
    latency_8 = model.allreduces_per_token * allreduce_latency(8, SLOW)
    batch_bytes = {b: decode_step(model, GPU, SLOW, 4, batch=b).bandwidth_s for b in (1, 64)}
    return {
        "rate_4_mb": format_rate(rate4, "MB", decimals=1),
        "headroom_nvlink_4": format_count(headroom(NVLINK_BANDWIDTH, rate4)),
        "headroom_pcie_4": format_count(headroom(PCIE_BANDWIDTH, rate4)),
        "headroom_ib_4": format_count(headroom(INFINIBAND_NDR_BANDWIDTH, rate4)),
        "pcie_share_4": format_count(100 / headroom(PCIE_BANDWIDTH, rate4), decimals=2) + " %",
        "fill_pcie_4": format_count(tokens_to_fill(model, 4, PCIE_BANDWIDTH)),
        "nvlink_bandwidth": format_rate(NVLINK_BANDWIDTH, "GB"),
        "pcie_bandwidth": format_rate(PCIE_BANDWIDTH, "GB"),
        "ib_bandwidth": format_rate(INFINIBAND_NDR_BANDWIDTH, "GB"),
        "nvlink_both_directions": format_rate(2 * NVLINK_BANDWIDTH, "GB"),
        "wire_8": format_bytes(decode_wire_bytes(model, 8), "MiB", decimals=4),
        "wire_time_8_slow": format_seconds(bytes_time_8, "ms", decimals=3),
        "latency_8_slow": format_seconds(latency_8, "ms"),
        "latency_over_bytes_8_slow": format_count(latency_8 / bytes_time_8),
        "bytes_4_slow_batch_1": format_seconds(batch_bytes[1], "ms", decimals=3),
        "bytes_4_slow_batch_64": format_seconds(batch_bytes[64], "ms"),
        "rate_yardstick": format_rate(RATE_YARDSTICK, "MiB"),
    }


def payload_table(
    model: ModelSpec = MODEL,
    ns: Sequence[int] = (2, 4, 8),
    tokens_per_s: float = TOKENS_PER_S,
    caption: str | None = None,
) -> str:
    """HTML table: ring factor, wire bytes per token and wire rate for each ``n``.

    Parameters
    ----------
    model : ModelSpec, default the specimen
    ns : sequence of int, default (2, 4, 8)
        Tensor-parallel degrees, each from 1 to 4096 (``MAX_RANKS``).
    tokens_per_s : float, default the lesson's 50
        Decode rate, tokens/second (>= 0).
    caption : str, optional

    Returns
    -------
    str
        One row per ``n``: GPUs, ``2(n-1)/n``, MiB per rank per token, MiB/s and MB/s.
    """
    rows = [
        (
            format_count(n),
            format_count(ring_allreduce_factor(n), decimals=3),
            format_bytes(decode_wire_bytes(model, n), "MiB", decimals=4),
            format_rate(decode_wire_rate(model, n, tokens_per_s), "MiB"),
            format_rate(decode_wire_rate(model, n, tokens_per_s), "MB", decimals=1),
        )
        for n in ns
    ]
    header = (
        "GPUs (N)",
        "ring factor 2(N-1)/N",
        "sent per rank per token",
        f"at {format_count(tokens_per_s)} tokens/s (binary)",
        "same rate (decimal)",
    )
    return html_table(header, rows, caption)


#: What ``book/payloads.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, allreduce.allreduce_numbers, payload_numbers)
