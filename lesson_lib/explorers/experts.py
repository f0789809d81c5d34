"""The experts explorer: an MoE preset under TP or EP, its degree, fabric, card, batch and context.

Every number is :func:`lesson_lib.model.moe.moe_decode_step`'s, each sequence's cache read included:
the chosen layout's time per token beside the other layout's total on the same GPUs; a layout whose
weights and caches do not fit the cards is not priced. At its defaults it is the chapter's example,
DeepSeek-V3 under EP 8 on one node of H200-class cards, one sequence of 32,768 tokens, FP8 dispatch.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, state_filter, states
from lesson_lib.explorers._layers import fold_terms, lookup, time_bars
from lesson_lib.explorers.latency import _ms
from lesson_lib.figures._style import NEUTRALS
from lesson_lib.model.experts import CONTEXT, FP8
from lesson_lib.model.moe import MoEStep, moe_decode_step, sequences_that_fit, weights_per_gpu
from lesson_lib.model.presets import MOE_PRESETS
from lesson_lib.model.specimen import FAST, GPU, H200, INTER_NODE
from lesson_lib.model.specs import Accelerator, Fabric
from lesson_lib.model.units import GB, KiB, format_bytes, format_count, format_seconds

#: The fabrics offered, by key.
FABRICS: dict[str, Fabric] = {"fast": FAST, "network": INTER_NODE}
FABRIC_LABELS: tuple[str, ...] = (
    f"fast: NVLink-class, {format_seconds(FAST.latency, 'us')} (lesson)",
    f"InfiniBand network, {format_seconds(INTER_NODE.latency, 'us')} (assumed)",
)
#: The cards offered, by key.
CARDS: dict[str, Accelerator] = {"h100": GPU, "h200": H200}
CARD_LABELS: tuple[str, ...] = ("H100-class, sold as 80 GB", "H200-class, sold as 141 GB")
#: GPUs offered (Mixtral's 8 experts cap EP at 8).
N_VALUES: tuple[int, ...] = (1, 2, 4, 8)
#: Sequences decoded together, over all GPUs.
BATCH_VALUES: tuple[int, ...] = (1, 8, 64, 256)
#: Tokens each sequence holds (every preset's context reaches the largest).
CONTEXT_VALUES: tuple[int, ...] = (4_096, CONTEXT)
_TOKENS = tuple(format_count(c) for c in CONTEXT_VALUES)
PARALLELISM_LABELS: tuple[str, ...] = ("TP: all-reduces", "EP + DP attention: all-to-alls")

CONTROLS: tuple[Control, ...] = (
    Control("model", "model", tuple(MOE_PRESETS), "DeepSeek-V3"),
    Control("parallelism", "layout", ("tp", "ep"), "ep", PARALLELISM_LABELS, input="radio"),
    Control("n", "GPUs (TP or EP degree)", N_VALUES, 8, input="radio"),
    Control("fabric", "fabric", tuple(FABRICS), "fast", FABRIC_LABELS),
    Control("card", "card", tuple(CARDS), "h200", CARD_LABELS),
    Control("batch", "batch (sequences)", BATCH_VALUES, 1),
    Control(
        "context", "context (tokens a sequence)", CONTEXT_VALUES, CONTEXT, _TOKENS, input="radio"
    ),
)

MESSAGE = Template(
    "{layout}, batch {batch}: {total} per token, {tokens} tokens/s in all;\n"
    "weights and cache {compute} + {collectives} {kind} per token: latency {latency} + bytes "
    "{bandwidth};\n{wire} on the wire per decoded token (all GPUs); weights {weights} per GPU "
    "(fits the cards);\nthe other layout: {other}",
    otherwise=Template(
        "{layout}, batch {batch} of {context_tokens} tokens: not priced;\n"
        "weights {weights} per GPU and the caches do not fit the cards\n"
        "({held} sequences of this length fit);\nthe other layout: {other}"
    ),
    when="unpriced",
)

_TERMS = (
    ("compute_ms", "weights and cache / HBM (roofline)", "compute"),
    ("latency_ms", "collectives' latency", "latency"),
    ("bandwidth_ms", "collectives' bytes / fabric", "bandwidth"),
)
#: The other layout, drawn as one bar of its total in a grey that no meaning uses.
_OTHER_LABEL = "the other layout, its total"


@functools.cache
def _held(model: str, parallelism: str, n: int, card: str, context: int) -> int:
    return sequences_that_fit(MOE_PRESETS[model], CARDS[card], n, parallelism, context)


@functools.cache
def _step(
    model: str, parallelism: str, n: int, fabric: str, card: str, batch: int, context: int
) -> MoEStep | None:
    """The layout's step, or None where its weights and ``batch`` caches do not fit."""
    if batch > _held(model, parallelism, n, card, context):
        return None
    dispatch = {"dispatch_bytes": FP8} if parallelism == "ep" else {}
    setting = {"parallelism": parallelism, "batch": batch, "context": context, **dispatch}
    return moe_decode_step(MOE_PRESETS[model], CARDS[card], FABRICS[fabric], n, **setting)


def _state(
    model: str, parallelism: str, n: int, fabric: str, card: str, batch: int, context: int
) -> dict[str, Any]:
    step = _step(model, parallelism, n, fabric, card, batch, context)
    other_layout = "ep" if parallelism == "tp" else "tp"
    other = _step(model, other_layout, n, fabric, card, batch, context)
    layout = f"TP {n}" if parallelism == "tp" else f"EP {n} + DP attention"
    common = {
        "layout": layout,
        "context_tokens": format_count(context),
        "other": (
            f"{format_seconds(other.total_s, 'ms')} per token (the grey bar)"
            if other
            else "not priced either, it does not fit"
        ),
        "other_ms": _ms(other.total_s) if other else 0.0,
        "held": format_count(_held(model, parallelism, n, card, context)),
        "weights": format_bytes(
            weights_per_gpu(MOE_PRESETS[model], n, parallelism), "GB", decimals=1
        ),
    }
    if step is None:
        # never shown (the other message reads none of them), but the browser needs text
        blank = dict.fromkeys(("total", "compute", "latency", "bandwidth", "tokens", "wire"), "-")
        zeros = dict.fromkeys(("compute_ms", "latency_ms", "bandwidth_ms", "total_ms"), 0.0)
        return {**common, **blank, **zeros, "unpriced": True, "tokens_per_s": 0,
                "collectives": 0, "kind": "-", "wire_kib": 0.0, "weights_gb": 0.0}  # fmt: skip
    return {
        **common,
        "unpriced": False,
        # the message's text, rounded as the chapter's prose rounds (format_seconds)
        "total": format_seconds(step.total_s, "ms"),
        "compute": format_seconds(step.compute_s, "ms"),
        "latency": format_seconds(step.latency_s, "ms"),
        "bandwidth": format_seconds(step.bandwidth_s, "ms"),
        "tokens": format_count(step.tokens_per_s),
        "wire": format_bytes(step.wire_bytes_per_token, "MiB"),
        "compute_ms": _ms(step.compute_s),
        "latency_ms": _ms(step.latency_s),
        "bandwidth_ms": _ms(step.bandwidth_s),
        "total_ms": _ms(step.total_s),
        "tokens_per_s": round(step.tokens_per_s),
        "collectives": step.collectives,
        "kind": "all-reduces" if parallelism == "tp" else "all-to-alls",
        "wire_kib": round(step.wire_bytes_per_token / KiB, 1),
        "weights_gb": round(step.weights_per_gpu_bytes / GB, 1),
    }


def _axis_ms(rows: list[dict[str, Any]]) -> dict[tuple[str, int], float]:
    """Each ``(model, batch)``'s axis: the next whole ms above its longest bar of either layout."""
    longest: dict[tuple[str, int], float] = {}
    for r in rows:
        key = (r["model"], r["batch"])
        longest[key] = max(longest.get(key, 0.0), r["total_ms"], r["other_ms"])
    return {key: float(math.ceil(ms)) for key, ms in longest.items()}


def _chart(both: str, axis: dict[tuple[str, int], float]) -> dict[str, Any]:
    bars = time_bars(_TERMS, ["TP", "EP + DP attention"], "layout")
    by_key = {f"{m}|{b}": ms for (m, b), ms in axis.items()}
    domain_max = lookup(by_key, "model + '|' + batch", value=lambda ms: f"{ms:g}")
    bars["encoding"]["x"] |= {
        "title": "time per decoded token (ms; one scale per model and batch)",
        "scale": {"domainMin": 0, "domainMax": {"expr": domain_max}, "nice": False},
    }  # fmt: skip
    # The chosen layout shows its terms; the other only its total, in its own grey.
    color = bars["encoding"]["color"]["scale"]
    color["domain"].append(_OTHER_LABEL)
    color["range"].append(NEUTRALS[2])
    chosen = "datum.parallelism == parallelism"
    return {
        "width": 560,
        "height": 120,
        "transform": [
            {"filter": both},
            {"calculate": "datum.parallelism == 'tp' ? 'TP' : 'EP + DP attention'", "as": "_bar"},
            *fold_terms((*_TERMS, ("total_ms", _OTHER_LABEL, "compute"))),
            {"filter": f"({chosen}) == (datum._term != 'total_ms')"},
        ],
        **bars,
    }


def experts_explorer() -> Explorer:
    """The live experts explorer: model, layout, GPUs, fabric, card, batch and context.

    Returns
    -------
    Explorer
    """
    rows = states(CONTROLS, _state)
    return Explorer(
        title="Experts explorer: TP or EP for an MoE model",
        description=(
            "Two bars of time per decoded token, tensor parallelism and expert parallelism "
            "with data-parallel attention, on the same GPUs: the chosen layout stacked from "
            "reading the weights and caches, the collectives' latency and their bytes, the "
            "other layout as one grey bar of its total, on an axis fixed for each model and "
            "batch. A layout whose weights and caches do not fit draws no bar. The message "
            "gives the chosen layout's numbers, its bytes on the wire per token and its "
            "weights per GPU, or why it is not priced."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart=_chart(state_filter(CONTROLS, free=["parallelism"]), _axis_ms(rows)),
        numeric=(*(t for t, _, _ in _TERMS), "total_ms", "n", "batch", "context"),
        message_lines=4,
    )
