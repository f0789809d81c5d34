"""The prefill page: decode and prefill on the alpha-beta curve, on the chip and on the wire."""

from __future__ import annotations

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.chapters.overview import _ms
from lesson_lib.model._validate import MAX_RANKS, require_int
from lesson_lib.model.collectives import crossover_bytes, crossover_tokens
from lesson_lib.model.prefill import per_token, place_on_curve, prefill_message_bytes
from lesson_lib.model.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.units import (
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)


def regime_rows(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, n: int, prompt_tokens: int
) -> list[tuple[str, str, str]]:
    """Decode and prefill, each classified on the chip and on the wire.

    The larger side names the regime: on the chip the weights' streaming
    (memory-bound, a tie too) or the arithmetic (compute-bound); on the wire
    latency or bytes (``StepBreakdown.communication_bound``).

    Parameters
    ----------
    model, accel, fabric : ModelSpec, Accelerator, Fabric
        The model, one card and the wire between the cards.
    n : int
        Tensor-parallel degree, from 2 to 4096 (``MAX_RANKS``).
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.

    Returns
    -------
    list of (str, str, str)
        ``(step, on the chip, on the wire)``, each naming the regime and both times.
    """
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    pair = per_token(model, accel, fabric, n, prompt_tokens)
    prefill = f"prefill ({prompt_tokens:,}-token prompt)"
    return [
        (
            label,
            f"{'memory' if step.weights_s >= step.flops_s else 'compute'}-bound: weights "
            f"{format_seconds(step.weights_s)}, arithmetic {format_seconds(step.flops_s)}",
            f"{step.communication_bound}-bound: latency {format_seconds(step.latency_s)}, "
            f"bytes {format_seconds(step.bandwidth_s)}",
        )
        for label, step in (("decode (one token)", pair.decode), (prefill, pair.prefill))
    ]


def prefill_numbers() -> dict[str, str]:
    """Numbers the prefill chapter glues beyond :func:`~lesson_lib.chapters.overview.worked_example_numbers`.

    Returns
    -------
    dict of str to str
        Formatted values, e.g. ``"crossover_slow": "3.2 MB"``.
    """
    m = MODEL
    decode_fast = place_on_curve(m.hidden_vector_bytes, 2, FAST)
    prompt = prefill_message_bytes(m, PROMPT_TOKENS)
    prefill_fast = place_on_curve(prompt, 2, FAST)
    fast4 = per_token(m, GPU, FAST, 4, PROMPT_TOKENS)
    slow4 = per_token(m, GPU, SLOW, 4, PROMPT_TOKENS)
    return {
        "fast_bandwidth": format_rate(FAST.bandwidth),
        "slow_bandwidth": format_rate(SLOW.bandwidth),
        "crossover_fast_mib": format_bytes(crossover_bytes(FAST, 2), "MiB"),
        "crossover_fast_4": format_bytes(crossover_bytes(FAST, 4), "MB"),
        "crossover_slow": format_bytes(crossover_bytes(SLOW, 2), "MB"),
        "crossover_tokens_fast": format_count(crossover_tokens(m, FAST, 2)),
        "decode_below_crossover": format_ratio(1 / decode_fast.ratio_to_crossover, decimals=0),
        "prefill_above_crossover": format_ratio(prefill_fast.ratio_to_crossover, decimals=1),
        "decode_bandwidth_term_fast": format_seconds(decode_fast.bandwidth_s, "ns", decimals=0),
        "prefill_allreduce_fast": format_seconds(prefill_fast.total_s, "us", decimals=0),
        "decode_flops_4": format_seconds(fast4.decode.flops_s, "us"),
        "prefill_total_fast_4": _ms(fast4.prefill.total_s),
        "prefill_total_slow_4": _ms(slow4.prefill.total_s),
        "prefill_per_token_fast_4": format_seconds(fast4.prefill_s, "us", decimals=1),
        "decode_per_token_fast_4": _ms(fast4.decode_s),
        "prefill_cheaper_fast_4": format_ratio(fast4.ratio, decimals=0),
        "prefill_tokens_per_s_fast_4": format_count(fast4.prefill.tokens_per_s),
        # Prompt length at which prefill's arithmetic takes as long as streaming
        # the weights, on any number of GPUs: 2 FLOPs per parameter and token.
        "chip_crossover_tokens": format_count(
            m.weight_bytes * GPU.peak_flops / (2 * m.params * GPU.hbm_bandwidth)
        ),
        "gpu_peak_flops": f"{GPU.peak_flops / 1e12:,.0f} TFLOP/s",
    }


def _embedding_and_head_numbers() -> dict[str, str]:
    """The embedding table's and output head's share of the parameters, ``2 E / params``.

    An engine looks the embedding up and runs the (untied) head for the last token only, so
    the prompt's two FLOPs per parameter and token overcount by this share.
    """
    share = 100 * 2 * (MODEL.vocab_size or 0) * MODEL.hidden_size / MODEL.params
    return {"embedding_and_head_share": format_count(share, decimals=1) + "%"}


#: What ``book/prefill.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, prefill_numbers, _embedding_and_head_numbers)
