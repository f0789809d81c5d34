"""The latency page: how decode speed scales with N, a token's timeline and the buyer's answers."""

from __future__ import annotations

import math

from lesson_lib.chapters import batching, overview, payloads
from lesson_lib.chapters.glue import GlueTable, Quote
from lesson_lib.model.collectives import allreduce_latency
from lesson_lib.model.latency import (
    allreduce_anatomy,
    break_even_latency,
    buyer_answers,
    decode_lines,
    peak_n,
    speedup_curve,
    speedup_limit,
    token_timeline,
)
from lesson_lib.model.published import published_numbers
from lesson_lib.model.specimen import FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.tables import html_table
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

    def us(seconds: float, decimals: int = 1) -> str:
        return format_seconds(seconds, "us", decimals=decimals)

    two = token_timeline(MODEL, GPU, FAST, 2, allreduces=1)
    four = token_timeline(MODEL, GPU, SLOW, 4, allreduces=1)
    parts = allreduce_anatomy(MODEL.hidden_vector_bytes)
    return {
        "slice_2_fast": us(two[0].duration_s),
        "wait_2_fast": us(two[1].duration_s + two[2].duration_s),
        "slice_4_slow": us(four[0].duration_s),
        "wait_4_slow": us(four[1].duration_s + four[2].duration_s),
        "anatomy_launch": us(parts[0].seconds, 2),
        "anatomy_fixed": us(parts[1].seconds, 2),
        "anatomy_hops": us(parts[2].seconds, 2),
        "anatomy_bytes": us(parts[3].seconds, 2),
        "anatomy_total": us(sum(p.seconds for p in parts), 2),
    }


#: Columns of :func:`buyer_table`.
BUYER_HEADER: tuple[str, ...] = (
    "box",
    "weights only, one stream (ms per token)",
    "reading a full cache, one stream (ms per token)",
    "full-length sequences that fit",
    "all of them together (tokens/s)",
)


def buyer_table(caption: str | None = None) -> str:
    """HTML table of :func:`~lesson_lib.model.latency.buyer_answers`: both questions for each box.

    Parameters
    ----------
    caption : str, optional

    Returns
    -------
    str
        A row per box, columns :data:`BUYER_HEADER`.
    """
    rows = [
        (
            a.label,
            f"{a.stream_s * 1e3:.2f}",
            f"{a.stream_full_s * 1e3:.2f}",
            format_count(a.sequences),
            format_count(a.tokens_per_s),
        )
        for a in buyer_answers()
    ]
    return html_table(BUYER_HEADER, rows, caption=caption)


#: Shorter sequences at which the page compares the boxes' throughput per GPU, tokens.
SHORTER_CONTEXTS: dict[str, int] = {"mid": 32_768, "short": 4_096}


def buyer_numbers() -> dict[str, str]:
    """The two answers to the buyer, formatted for the landing page, this chapter and the summary.

    Returns
    -------
    dict of str to str
    """
    boxes = buyer_answers()
    out: dict[str, str] = {}
    for key, a in zip(("box_1", "box_2", "box_4"), boxes, strict=True):
        out[f"{key}_stream"] = format_seconds(a.stream_s, "ms")
        out[f"{key}_stream_full"] = format_seconds(a.stream_full_s, "ms")
        out[f"{key}_sequences"] = format_count(a.sequences)
        out[f"{key}_tokens_per_s"] = format_count(a.tokens_per_s)
        out[f"{key}_tokens_per_gpu"] = format_count(a.tokens_per_s_per_gpu)
    out["stream_winner"] = min(boxes, key=lambda a: a.stream_s).label
    out["throughput_winner"] = max(boxes, key=lambda a: a.tokens_per_s).label
    out["stream_full_winner"] = min(boxes, key=lambda a: a.stream_full_s).label
    _, two, four = boxes
    out["throughput_4_vs_2"] = format_ratio(four.tokens_per_s / two.tokens_per_s, decimals=1)
    out["per_gpu_4_vs_2"] = format_ratio(four.tokens_per_s_per_gpu / two.tokens_per_s_per_gpu)
    # the four GPUs spent as two boxes of two fast ones instead
    out["two_fast_boxes_tokens_per_s"] = format_count(2 * two.tokens_per_s)
    for name, context in SHORTER_CONTEXTS.items():
        _, two, four = buyer_answers(context=context)
        out[f"context_{name}"] = format_count(context)
        out[f"per_gpu_4_vs_2_{name}"] = format_ratio(
            four.tokens_per_s_per_gpu / two.tokens_per_s_per_gpu
        )
        out[f"box_4_step_{name}"] = format_seconds(four.step_s, "ms")
        out[f"box_4_wire_{name}"] = format_seconds(four.wire_bytes_s, "ms")
    return out


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
    buyer_numbers,
    Quote(batching.batching_numbers, ("kv_read_full_4",)),
    _timeline_numbers,
    _embedding_numbers,
)
