"""The latency page: how decode speed scales with N and a token's timeline, in numbers."""

from __future__ import annotations

import math

from lesson_lib.chapters import batching, overview, payloads
from lesson_lib.chapters.glue import GlueTable, Quote
from lesson_lib.model.collectives import allreduce_latency
from lesson_lib.model.latency import (
    break_even_latency,
    decode_lines,
    peak_n,
    speedup_curve,
    speedup_limit,
    token_timeline,
)
from lesson_lib.model.published import published_numbers
from lesson_lib.model.specimen import FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import (
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)


def scaling_numbers() -> dict[str, str]:
    """The latency chapter's numbers beyond :func:`~lesson_lib.chapters.overview.worked_example_numbers`.

    Returns
    -------
    dict of str to str
    """
    # The lesson's three lines (compute + latency): 2 fast, 4 fast, 4 slow GPUs.
    fast_2, _, slow_4 = (line.step for line in decode_lines())
    one = decode_step(MODEL, GPU, FAST, 1)  # one GPU: no all-reduce, no bandwidth term
    peak = peak_n(MODEL, GPU, FAST_RING)
    limit_slow = speedup_limit(MODEL, GPU, SLOW)
    # S(N) = c / (c/N + L) reaches a share f of its ceiling c/L once
    # N >= (c/L) / (1/f - 1): the fewest GPUs for 90 % of the slow ceiling.
    near_limit = math.ceil(limit_slow / (1 / 0.9 - 1))
    return {
        "hbm_bandwidth": format_rate(GPU.hbm_bandwidth, "TB"),
        "weights_share_2": format_bytes(MODEL.weight_bytes / 2, "GB"),
        "weights_share_4": format_bytes(MODEL.weight_bytes / 4, "GB"),
        "bandwidth_2_fast": format_seconds(
            decode_step(MODEL, GPU, FAST, 2).bandwidth_s, "ms", decimals=3
        ),
        "bandwidth_4_fast": format_seconds(
            decode_step(MODEL, GPU, FAST, 4).bandwidth_s, "ms", decimals=3
        ),
        "speedup_1_to_4_slow": format_ratio(speedup(one, slow_4)),
        "slow_4_vs_fast_2": format_ratio(slow_4.total_s / fast_2.total_s),
        "limit_fast": format_ratio(speedup_limit(MODEL, GPU, FAST), decimals=1),
        "limit_slow": format_ratio(limit_slow, decimals=1),
        "ceiling_tokens_per_s_slow": format_count(limit_slow / one.total_s),
        "gpus_to_90_percent_slow": format_count(near_limit),
        "break_even_4_vs_2": format_seconds(
            break_even_latency(MODEL, GPU, 4, fast_2.total_s), "us", decimals=1
        ),
        "speedup_fast_8": format_ratio(speedup_curve(MODEL, GPU, FAST, [8])[0], decimals=1),
        "speedup_slow_8": format_ratio(speedup_curve(MODEL, GPU, SLOW, [8])[0], decimals=1),
        "ring_hop": format_seconds(FAST_RING.hop_latency, "us", decimals=3),
        "ring_base": format_seconds(FAST_RING.latency, "us"),
        "ring_latency_8": format_seconds(allreduce_latency(8, FAST_RING), "us", decimals=1),
        "ring_peak_n": format_count(peak),
        "ring_peak_speedup": format_ratio(
            speedup_curve(MODEL, GPU, FAST_RING, [peak])[0], decimals=1
        ),
    }


def _timeline_numbers() -> dict[str, str]:
    """The timeline figure's numbers, formatted, keyed by the name the latency chapter glues."""

    def us(seconds: float) -> str:
        return format_seconds(seconds, "us", decimals=1)

    two = token_timeline(MODEL, GPU, FAST, 2, allreduces=1, include_bandwidth=False)
    four = token_timeline(MODEL, GPU, SLOW, 4, allreduces=1, include_bandwidth=False)
    return {
        "slice_2_fast": us(two[0].duration_s),
        "wait_2_fast": us(two[1].duration_s),
        "slice_4_slow": us(four[0].duration_s),
        "wait_4_slow": us(four[1].duration_s),
    }


def _embedding_numbers() -> dict[str, str]:
    """The input embedding, which decoding does not read whole."""
    embedding = (MODEL.vocab_size or 0) * MODEL.hidden_vector_bytes
    # the floor the page keeps divides every weight; this one leaves the embedding out
    read = (MODEL.weight_bytes - embedding) / 2 / GPU.hbm_bandwidth
    return {
        "embedding_gb": format_bytes(embedding, "GB"),
        "embedding_row": format_bytes(MODEL.hidden_vector_bytes, "KiB", decimals=0),
        "compute_2_without_embedding": format_seconds(read, "ms"),
    }


#: What ``book/latency.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.WORKED,
    Quote(payloads.payload_numbers, ("pcie_bandwidth",)),
    scaling_numbers,
    published_numbers,
    Quote(batching.batching_numbers, ("kv_read_full_4",)),
    _timeline_numbers,
    _embedding_numbers,
)
