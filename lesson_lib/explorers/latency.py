"""The decode explorer: the model, the wire, the card, N, the batch, the context and the all-reduce.

A dense model's numbers come from :func:`lesson_lib.model.step_time.decode_step`, a mixture of
experts' from :func:`lesson_lib.model.moe.moe_decode_step` under TP (no context or all-reduce
choice); a model that does not fit is not priced. At its defaults it is the lesson's arithmetic.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, state_filter, states
from lesson_lib.explorers._layers import fold_terms, layer, time_bars
from lesson_lib.model.algorithms import cuda_graph_fabric
from lesson_lib.model.latency import speedup_limit
from lesson_lib.model.layout import check_layout
from lesson_lib.model.memory import memory_budget
from lesson_lib.model.moe import moe_decode_step
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import A100, FAST, FAST_RING, GPU, INTER_NODE, MODEL, SLOW
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepTerms, decode_step
from lesson_lib.model.units import GB, MS, format_count, format_rate, format_ratio, format_seconds

#: The models offered, by name: the specimen first, then the other presets.
MODELS: dict[str, ModelSpec] = dict(PRESETS)

#: The fabrics offered, by key (the lesson's two, CUDA graphs on the fast one, a
#: ring whose latency grows per hop, and a network between nodes).
FABRICS: dict[str, Fabric] = {"fast": FAST, "graphs": cuda_graph_fabric(FAST), "hops": FAST_RING,
                               "slow": SLOW, "network": INTER_NODE}  # fmt: skip


def _us(seconds: float) -> str:
    return format_seconds(seconds, "us", decimals=2)


FABRIC_LABELS: dict[str, str] = {
    "fast": f"fast: NVLink-class, {_us(FAST.latency)} (lesson)",
    "graphs": f"fast with CUDA graphs (assumed), {_us(FABRICS['graphs'].latency)}",
    "hops": f"fast, {_us(FAST_RING.latency)} + {_us(FAST_RING.hop_latency)} per hop (fit)",
    "slow": f"slow: PCIe-class, {_us(SLOW.latency)} (lesson)",
    "network": f"InfiniBand network, {_us(INTER_NODE.latency)} (assumed)",
}
#: The cards offered, by key; the last is hypothetical (exercise ex-latency-4).
CARDS: dict[str, Accelerator] = {
    "a100": A100,
    "h100": GPU,
    "h100x2": dataclasses.replace(
        GPU, name="hypothetical: twice the HBM bandwidth", hbm_bandwidth=2 * GPU.hbm_bandwidth
    ),
}
CARD_LABELS: dict[str, str] = {
    key: f"{label}, {format_rate(card.hbm_bandwidth, 'TB', decimals=2)}"
    for (key, card), label in zip(
        CARDS.items(), ("A100", "H100 (lesson)", "hypothetical, 2x HBM"), strict=True
    )
}
#: Tensor-parallel degrees offered.
N_VALUES: tuple[int, ...] = (1, 2, 4, 8, 16)
#: Batch sizes offered (sequences decoded together).
BATCH_VALUES: tuple[int, ...] = (1, 4, 16, 64, 256)
#: Contexts offered, as the divisor of the chosen model's longest context; 0 is the lesson's
#: weights-only heuristic. For the specimen 1/64 is 4,096 tokens, the batching chapter's context.
CONTEXT_VALUES: tuple[int, ...] = (0, 64, 1)
#: Short, as a phone shows a select's choice.
CONTEXT_LABELS: tuple[str, ...] = tuple(
    {0: "none (lesson: weights only)", 1: "full"}.get(d)
    or f"1/{d} ({format_count(MODEL.max_context // d)} tokens for the specimen)"
    for d in CONTEXT_VALUES
)


def _context_tokens(model: str, divisor: int) -> int:
    """Tokens already in each sequence: 0 (``divisor`` 0), or ``1 / divisor`` of the longest."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {list(MODELS)}, got {model!r}")
    if divisor not in CONTEXT_VALUES:
        raise ValueError(f"divisor must be one of {list(CONTEXT_VALUES)}, got {divisor!r}")
    return 0 if divisor == 0 else MODELS[model].max_context // divisor


ALGORITHMS: tuple[str, ...] = ("ring", "two_shot", "one_shot")
ALGORITHM_LABELS: tuple[str, ...] = ("ring", "two-shot", "one-shot")
_CEILING = "ceiling, the speed-up no N passes:"

#: The lesson's own setting, drawn as the reference bar.
LESSON = {"model": MODEL.name, "fabric": "fast", "card": "h100", "n": 2, "batch": 1, "context": 0,
          "algorithm": "ring"}  # fmt: skip

CONTROLS: tuple[Control, ...] = (
    Control("model", "model", tuple(MODELS), MODEL.name),
    Control("fabric", "fabric", tuple(FABRICS), "fast", tuple(FABRIC_LABELS.values())),
    Control("card", "card", tuple(CARDS), "h100", tuple(CARD_LABELS.values())),
    Control("n", "GPUs (N)", N_VALUES, 4, input="radio"),
    Control("batch", "batch (sequences)", BATCH_VALUES, 1),
    Control("context", "context (share of the model's longest)", CONTEXT_VALUES, 0, CONTEXT_LABELS),
    Control("algorithm", "all-reduce", ALGORITHMS, "ring", ALGORITHM_LABELS, input="radio"),
)

#: The message of a state that does not fit: nothing is priced.
NO_FIT_MESSAGE = Template(
    "{model}, N = {n}, batch {batch}: does not fit, nothing priced;\n"
    "{used_gb} GB per GPU of {held} against {card_gb} GB on the card;\n"
    "more GPUs, or a card with more memory, would hold it\nspeed-up: none to give\n"
    "{ceiling}\n{note}"
)

MESSAGE = Template(
    "{model}, N = {n}, batch {batch}: {total_ms} ms per token for each sequence, "
    "{tokens_per_s} tokens/s in all;\ncompute {compute_ms} ms (KV and state traffic {kv_ms} ms) "
    "+ all-reduce latency {latency_ms} ms + bytes {bandwidth_ms} ms;\nlargest term: {bound}\n"
    "speed-up over one such card: {speedup}{speedup_note}\n{ceiling}\n{note}",
    otherwise=NO_FIT_MESSAGE,
    when="no_fit",
)

_TERMS = (
    ("compute_ms", "compute (weights and KV / HBM)", "compute"),
    ("latency_ms", "all-reduce latency", "latency"),
    ("bandwidth_ms", "all-reduce bytes / fabric", "bandwidth"),
)


def _ms(seconds: float) -> float:
    return round(seconds / MS, 3)


def _total_s(step: StepTerms) -> float:
    """The bar's length: its three terms in the order they are drawn."""
    return step.compute_s + step.latency_s + step.bandwidth_s


@functools.cache
def _fits(model: str, card: str, n: int, batch: int, context: int) -> tuple[bool, float]:
    """Whether the weights (and, with a context, every sequence's cache) fit; bytes per GPU."""
    spec = MODELS[model]
    tokens = _context_tokens(model, context) if not spec.is_moe else 0
    budget = memory_budget(spec, CARDS[card], n, tokens, batch)
    return budget.fits, budget.used_bytes


@functools.cache
def _step(
    model: str, fabric: str, card: str, n: int, batch: int, context: int, algorithm: str
) -> StepTerms | None:
    """The step, or None when the model does not fit on ``n`` such cards."""
    if not _fits(model, card, n, batch, context)[0]:
        return None
    spec, accel, wire = MODELS[model], CARDS[card], FABRICS[fabric]
    if spec.is_moe:
        return moe_decode_step(spec, accel, wire, n, parallelism="tp", batch=batch)
    tokens = _context_tokens(model, context)
    setting = {"batch": batch, "context": tokens if context else None, "algorithm": algorithm}
    return decode_step(spec, accel, wire, n, **setting)


def _speedup(model: str, fabric: str, card: str, n: int, batch: int, context: int,
             algorithm: str, step: StepTerms) -> tuple[str, str]:  # fmt: skip
    """Speed-up over one card with the bytes, and a note (the chapters' count without them)."""
    # The lesson's dense setting says both, so that the bars' 3.03x and the chapter's 3.04x
    # (which leaves the bytes out) are both on the page.
    one = _step(model, fabric, card, 1, batch, context, algorithm)
    if one is None:
        return "none", " (one card cannot hold the model)"
    ratio = format_ratio(_total_s(one) / _total_s(step))
    spec = MODELS[model]
    if not spec.is_moe and batch == 1 and context == 0 and algorithm == "ring":
        alone, lesson = (
            decode_step(spec, CARDS[card], FABRICS[fabric], k, include_bandwidth=False).total_s
            for k in (1, n)
        )
        without = format_ratio(alone / lesson)
        return ratio, f" with the bytes, {without} without (as the chapters count)"
    return ratio, " with the bytes"


@functools.cache
def _ceiling(model: str, fabric: str, card: str, batch: int, context: int, algorithm: str) -> str:
    """The speed-up no N can beat, where the lesson's formula for it holds."""
    spec = MODELS[model]
    if spec.is_moe or batch != 1 or context != 0 or algorithm != "ring":
        return f"{_CEILING} worked out only for a dense model, batch 1, no context, the ring"
    if FABRICS[fabric].hop_latency > 0:
        return f"{_CEILING} none, the speed-up peaks, then falls (latency grows per hop)"
    limits = [
        speedup_limit(spec, CARDS[card], FABRICS[fabric], include_bandwidth=bytes_in)
        for bytes_in in (False, True)
    ]
    if math.isinf(limits[0]):
        return f"{_CEILING} none"
    # In the speed-up line's order: with the bytes first, as the bars are drawn.
    return (
        f"{_CEILING} {format_ratio(limits[1])} with the bytes, "
        f"{format_ratio(limits[0], decimals=1)} without (as the chapters count)"
    )


def _note(model: str, fabric: str, n: int, algorithm: str) -> str:
    """A TP degree engines refuse, what the all-reduce choice does, or what an MoE step leaves out."""
    spec = MODELS[model]
    if problems := check_layout(spec, n):
        return f"{problems[0]}; priced as if allowed"
    if spec.is_moe:
        return "MoE (TP): reads only the experts the batch touches and no KV cache; all-reduces as rings"
    if FABRICS[fabric].hop_latency == 0:
        return "all-reduce: all three pay the same latency here; pick the 'per hop' fabric to see them differ"
    return f"all-reduce: {ALGORITHM_LABELS[ALGORITHMS.index(algorithm)]} on the per-hop fit"


def _state(
    model: str, fabric: str, card: str, n: int, batch: int, context: int, algorithm: str
) -> dict[str, Any]:
    if MODELS[model].is_moe:  # neither the context nor the all-reduce applies: one row for all
        context, algorithm = 0, "ring"
    return _row(model, fabric, card, n, batch, context, algorithm)


@functools.cache
def _row(
    model: str, fabric: str, card: str, n: int, batch: int, context: int, algorithm: str
) -> dict[str, Any]:
    setting = {"card": card, "batch": batch, "context": context, "algorithm": algorithm}
    step = _step(model, fabric, n=n, **setting)
    fits, used = _fits(model, card, n, batch, context)
    row: dict[str, Any] = {
        "no_fit": not fits,
        # Read only by the message of a state that does not fit (0 elsewhere keeps it light).
        "used_gb": 0 if fits else round(used / GB, 2),
        "card_gb": f"{round(CARDS[card].memory_bytes / GB, 2):g}",
        "held": "weights and KV cache" if context and not MODELS[model].is_moe else "weights",
        "ceiling": _ceiling(model, fabric, card, batch, context, algorithm),
        "note": _note(model, fabric, n, algorithm),
    }
    if step is None:
        # Nothing is drawn; the numbers the message does not read are placeholders.
        return {
            **row, "compute_ms": 0.0, "kv_ms": 0.0, "latency_ms": 0.0, "bandwidth_ms": 0.0,
            "total_ms": 0.0, "tokens_per_s": 0, "bound": "none", "speedup": "none",
            "speedup_note": " (it does not fit)",
        }  # fmt: skip
    speedup, speedup_note = _speedup(model, fabric, card, n, batch, context, algorithm, step)
    return {
        **row,
        "compute_ms": _ms(step.compute_s),
        "kv_ms": _ms(getattr(step, "kv_read_s", 0.0)),  # an MoE step reads no KV cache here
        "latency_ms": _ms(step.latency_s),
        "bandwidth_ms": _ms(step.bandwidth_s),
        "total_ms": _ms(_total_s(step)),
        "tokens_per_s": round(step.tokens_per_s),
        "bound": step.bound,
        "speedup": speedup,
        "speedup_note": speedup_note,
    }


def _axis_max_ms(rows: list[dict[str, Any]]) -> int:
    """Time axis end: the specimen's slowest one-sequence, no-context state, rounded up to 10 ms."""
    lesson = [
        r["total_ms"] for r in rows if (r["model"], r["batch"], r["context"]) == (MODEL.name, 1, 0)
    ]
    return 10 * math.ceil(max(lesson) / 10)


def _chart(explorer_filter: str, free_n_filter: str, axis_max: int) -> dict[str, Any]:
    lesson = " && ".join(f"datum.{k} == {v!r}" for k, v in LESSON.items())
    lesson_bar = f"lesson: {MODEL.name}, 2 GPUs, H100, fast fabric"
    one_bar = "1 GPU of your card, no all-reduce"
    unfit = "(datum.no_fit == 'true' ? ' (does not fit)' : '')"
    order = (
        f"indexof(datum._bar, '{one_bar}') == 0 ? 0 : (indexof(datum._bar, 'lesson:') == 0 ? 2 : 1)"
    )
    yours = f"(n == 1 ? '1 GPU' : n + ' GPUs') + ', your choice' + {unfit}"
    bars = (
        f"[({free_n_filter}) && datum.n == 1 ? '{one_bar}' + {unfit} : '', "
        f"({explorer_filter}) ? {yours} : '', "
        f"({lesson}) ? '{lesson_bar}' : '']"
    )
    bar_layer = time_bars(_TERMS, {"field": "_order", "op": "min"}, "bar")
    x_scale = {"domain": [0, axis_max], "clamp": True, "nice": False}
    bar_layer["encoding"]["x"] = {**bar_layer["encoding"]["x"], "scale": x_scale}
    past = layer(
        "text",
        {
            "y": {"field": "_bar", "type": "nominal", "sort": {"field": "_order", "op": "min"}},
            "x": {"datum": axis_max, "type": "quantitative", "scale": x_scale},
            "text": {"field": "_past"},
        },
        [
            {"filter": f"datum.total_ms > {axis_max}"},
            {"calculate": "'past the axis: ' + datum.total_ms + ' ms →'", "as": "_past"},
        ],
        align="right", dx=-4, baseline="middle", fontSize=11, fontWeight="bold", color="white",
    )  # fmt: skip
    return {
        "width": 560,
        "height": 150,
        "transform": [
            {"filter": f"(({free_n_filter}) && (datum.n == 1 || datum.n == n)) || ({lesson})"},
            {"calculate": bars, "as": "_bars"},
            {"flatten": ["_bars"], "as": ["_bar"]},
            {"filter": "datum._bar != ''"},
            {"calculate": order, "as": "_order"},
        ],
        "layer": [{"transform": fold_terms(_TERMS), **bar_layer}, past],
    }


def decode_explorer() -> Explorer:
    """The live decode explorer: choose the wire, the card, N, the batch, the context, the algorithm.

    Returns
    -------
    Explorer
    """
    rows = states(CONTROLS, _state)
    return Explorer(
        title="Decode explorer: where a token's time goes",
        description=(
            "Stacked bars of compute, all-reduce latency and all-reduce bandwidth time per "
            "decoded token for one GPU, the chosen configuration and the lesson's 2 GPUs on "
            "the fast fabric; the message above gives the terms, tokens per second and the "
            "speed-up over one card."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart=_chart(
            state_filter(CONTROLS), state_filter(CONTROLS, free=["n"]), _axis_max_ms(rows)
        ),
        numeric=(*(t for t, _, _ in _TERMS), "n", "total_ms", "kv_ms", "tokens_per_s", "used_gb"),
        message_lines=6,
        compact_text=True,
    )
