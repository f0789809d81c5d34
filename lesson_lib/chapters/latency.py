"""The latency chapter: one decoded token's timeline, and how decode speed scales with N.

:func:`~lesson_lib.model.step_time.decode_step` prices one configuration; this
module asks the latency chapter's questions of it: how the speed-up over one
GPU grows with ``n`` (:func:`speedup_curve`), where it stops growing
(:func:`speedup_limit`), and how slow a fabric may be before more GPUs stop
paying (:func:`break_even_latency`). Times are seconds.

Decode under tensor parallelism is a chain: a slice of compute, then an
all-reduce every rank waits for, twice per layer. :func:`token_timeline`
lays a token's :func:`~lesson_lib.model.step_time.decode_step` out as that chain,
and :func:`allreduce_anatomy` splits the fixed latency of one small
all-reduce into illustrative parts: an assumed launch overhead, the rest of
the fixed cost and the hops of a two-point fit. It is a picture of the
model, not a measured breakdown of how NCCL spends the time.
"""

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
    """The latency chapter's numbers beyond :func:`~lesson_lib.chapters.overview.numbers`.

    Returns
    -------
    dict of str to str
        ``limit_fast`` / ``limit_slow`` (speed-up ceilings over one GPU),
        ``break_even_4_vs_2`` (latency at which 4 GPUs tie 2 on the fast
        fabric), ``break_even_2_vs_1`` (latency at which 2 GPUs tie 1),
        ``speedup_fast_16`` / ``speedup_slow_16`` (16 GPUs over 1),
        ``ring_hop`` and ``ring_base`` (the per-hop fit's two terms),
        ``ring_latency_8`` (its prediction at 8 GPUs), ``ring_peak_n`` and
        ``ring_peak_speedup`` (where a per-hop ring stops paying);
        ``hbm_bandwidth``, ``weights_share_2`` / ``weights_share_4`` (the
        heuristic's inputs); ``bandwidth_2_fast`` / ``bandwidth_4_slow`` (the
        left-out wire-bytes term); ``speedup_1_to_4_fast`` /
        ``speedup_1_to_4_slow`` (4 GPUs over 1) and ``slow_4_vs_fast_2``;
        ``ceiling_tokens_per_s_slow`` (the most tokens per second one sequence
        can reach on the slow fabric with any number of GPUs) and
        ``gpus_to_90_percent_slow`` (the fewest GPUs that reach 90 % of it).
    """

    # The lesson's three lines (compute + latency): 2 fast, 4 fast, 4 slow GPUs.
    fast_2, fast_4, slow_4 = (line.step for line in decode_lines())
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
        "bandwidth_4_slow": format_seconds(
            decode_step(MODEL, GPU, SLOW, 4).bandwidth_s, "ms", decimals=3
        ),
        "speedup_1_to_4_fast": format_ratio(speedup(one, fast_4)),
        "speedup_1_to_4_slow": format_ratio(speedup(one, slow_4)),
        "slow_4_vs_fast_2": format_ratio(slow_4.total_s / fast_2.total_s),
        "limit_fast": format_ratio(speedup_limit(MODEL, GPU, FAST), decimals=1),
        "limit_slow": format_ratio(limit_slow, decimals=1),
        "ceiling_tokens_per_s_slow": format_count(limit_slow / one.total_s),
        "gpus_to_90_percent_slow": format_count(near_limit),
        "break_even_4_vs_2": format_seconds(
            break_even_latency(MODEL, GPU, 4, fast_2.total_s), "us", decimals=1
        ),
        "break_even_2_vs_1": format_seconds(
            break_even_latency(MODEL, GPU, 2, one.total_s), "us", decimals=1
        ),
        "speedup_fast_16": format_ratio(speedup_curve(MODEL, GPU, FAST, [16])[0], decimals=1),
        "speedup_slow_16": format_ratio(speedup_curve(MODEL, GPU, SLOW, [16])[0], decimals=1),
        "ring_hop": format_seconds(FAST_RING.hop_latency, "us", decimals=3),
        "ring_base": format_seconds(FAST_RING.latency, "us"),
        "ring_latency_8": format_seconds(allreduce_latency(8, FAST_RING), "us", decimals=1),
        "ring_peak_n": format_count(peak),
        "ring_peak_speedup": format_ratio(
            speedup_curve(MODEL, GPU, FAST_RING, [peak])[0], decimals=1
        ),
    }


def decode_lines_table(caption: str | None = None) -> str:
    """HTML table of the lesson's three decode lines, without and with the bandwidth term.

    Parameters
    ----------
    caption : str, optional
        Table caption.

    Returns
    -------
    str
        One row per line of :func:`lesson_lib.chapters.overview.decode_lines`:
        compute, latency, the lesson's total (compute + latency) and its
        tokens/s, then the bandwidth term and the total with it, all in ms.
    """

    def ms(seconds: float, decimals: int = 2) -> str:
        return format_seconds(seconds, "ms", decimals=decimals)

    rows = []
    for line in decode_lines():  # the lesson's arithmetic, compute + latency
        full = decode_step(MODEL, GPU, line.fabric, line.n)  # the same GPUs, with the bytes
        rows.append(
            (
                line.label,
                ms(line.step.compute_s),
                ms(line.step.latency_s),
                ms(line.step.total_s),
                format_count(line.step.tokens_per_s),
                ms(full.bandwidth_s, 3),
                ms(full.total_s),
            )
        )
    header = (
        "configuration",
        "compute (heuristic)",
        "latency (assumed)",
        "lesson's total",
        "tokens/s",
        "+ bandwidth term",
        "total with it",
    )
    return html_table(header, rows, caption)


def timeline_numbers() -> dict[str, str]:
    """The timeline figure's numbers, formatted, keyed by the name the latency chapter glues.

    Returns
    -------
    dict of str to str
        Compute slice and wait per all-reduce on 2 fast and 4 slow GPUs, and
        the four parts of one 2-GPU all-reduce on the fast fabric.
    """

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
    "one stream, the lesson's arithmetic (ms per token)",
    "one stream at full context (ms per token)",
    "full-length sequences that fit",
    "all of them together (tokens/s)",
)


def buyer_table(caption: str | None = None) -> str:
    """HTML table of :func:`buyer_answers`: both questions for each box.

    Parameters
    ----------
    caption : str, optional
        Table caption.

    Returns
    -------
    str
        One row per box, columns :data:`BUYER_HEADER`.
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


def buyer_numbers() -> dict[str, str]:
    """The two answers to the buyer, formatted for the landing page, this chapter and the summary.

    Returns
    -------
    dict of str to str
        ``box_1_*``, ``box_2_*`` and ``box_4_*`` (``_stream``, ``_stream_full``,
        ``_sequences``, ``_tokens_per_s``) for one GPU, two fast and four
        slow; ``stream_winner``, ``stream_full_winner`` and
        ``throughput_winner`` (the boxes);
        ``throughput_4_vs_1`` and ``throughput_4_vs_2`` (the four slow GPUs'
        throughput over the others').
    """
    one, two, four = buyer_answers()
    out: dict[str, str] = {}
    for key, a in (("box_1", one), ("box_2", two), ("box_4", four)):
        out[f"{key}_stream"] = format_seconds(a.stream_s, "ms")
        out[f"{key}_stream_full"] = format_seconds(a.stream_full_s, "ms")
        out[f"{key}_sequences"] = format_count(a.sequences)
        out[f"{key}_tokens_per_s"] = format_count(a.tokens_per_s)
    boxes = (one, two, four)
    out["stream_winner"] = min(boxes, key=lambda a: a.stream_s).label
    out["throughput_winner"] = max(boxes, key=lambda a: a.tokens_per_s).label
    out["stream_full_winner"] = min(boxes, key=lambda a: a.stream_full_s).label
    out["throughput_4_vs_1"] = format_ratio(four.tokens_per_s / one.tokens_per_s, decimals=1)
    out["throughput_4_vs_2"] = format_ratio(four.tokens_per_s / two.tokens_per_s, decimals=1)
    return out


def embedding_numbers() -> dict[str, str]:
    """The input embedding, which decoding does not read whole.

    Returns
    -------
    dict of str to str
        ``embedding_gb`` (vocabulary x hidden size x bytes per weight, the
        whole matrix) and ``embedding_row`` (the one row a token looks up).
    """
    rows = MODEL.vocab_size or 0
    return {
        "embedding_gb": format_bytes(rows * MODEL.hidden_vector_bytes, "GB"),
        "embedding_row": format_bytes(MODEL.hidden_vector_bytes, "KiB", decimals=0),
    }


#: What ``book/latency.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.GLUE,
    Quote(payloads.payload_numbers, ("pcie_bandwidth",)),
    scaling_numbers,
    published_numbers,
    buyer_numbers,
    Quote(batching.batching_numbers, ("kv_read_full_4",)),
    timeline_numbers,
    embedding_numbers,
)
