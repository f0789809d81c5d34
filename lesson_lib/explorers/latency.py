"""The decode explorer: the wire, the card, N, the batch, the context and the all-reduce.

At its defaults (the fast fabric, the specimen's card, one sequence, no
context, the ring) it is the lesson's arithmetic; the other choices are the
steps beyond the lesson that the chapters on algorithms and batching explain.
Every number comes from :func:`lesson_lib.model.step_time.decode_step`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from lesson_lib.chapters.algorithms import cuda_graph_fabric
from lesson_lib.chapters.latency import speedup_limit
from lesson_lib.explorers._base import Control, Explorer, Template, states
from lesson_lib.explorers._time_bars import fold_terms, time_bars
from lesson_lib.model.specimen import A100, FAST, FAST_RING, GPU, INTER_NODE, MODEL, SLOW
from lesson_lib.model.specs import Accelerator, Fabric
from lesson_lib.model.step_time import StepBreakdown, decode_step
from lesson_lib.model.units import MS, format_rate, format_seconds

#: The fabrics offered, by key (the lesson's two, CUDA graphs on the fast one, a
#: ring whose latency grows per hop, and a network between nodes).
FABRICS: dict[str, Fabric] = {
    "fast": FAST,
    "graphs": cuda_graph_fabric(FAST),
    "hops": FAST_RING,
    "slow": SLOW,
    "network": INTER_NODE,
}


def _us(seconds: float) -> str:
    return format_seconds(seconds, "us", decimals=2)


FABRIC_LABELS: dict[str, str] = {
    "fast": f"fast: NVLink-class, {_us(FAST.latency)} (lesson)",
    "graphs": f"fast with CUDA graphs (assumed saving), {_us(FABRICS['graphs'].latency)}",
    "hops": f"fast, {_us(FAST_RING.latency)} + {_us(FAST_RING.hop_latency)} per hop (fit)",
    "slow": f"slow: PCIe-class, {_us(SLOW.latency)} (lesson)",
    "network": f"between nodes: InfiniBand-class, {_us(INTER_NODE.latency)} (assumed)",
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
#: Context lengths offered, tokens; 0 is the lesson's weights-only heuristic.
CONTEXT_VALUES: tuple[int, ...] = (0, 4096, 32768, 262_144)
CONTEXT_LABELS: tuple[str, ...] = (
    "none (lesson: weights only)",
    "4,096 tokens",
    "32,768 tokens",
    "262,144 tokens (full)",
)
ALGORITHMS: tuple[str, ...] = ("ring", "two_shot", "one_shot")
ALGORITHM_LABELS: tuple[str, ...] = ("ring (lesson)", "two-shot", "one-shot")

#: The lesson's own setting, drawn as the reference bar.
LESSON = {"fabric": "fast", "card": "h100", "n": 2, "batch": 1, "context": 0, "algorithm": "ring"}

CONTROLS: tuple[Control, ...] = (
    Control("fabric", "fabric", tuple(FABRICS), "fast", tuple(FABRIC_LABELS.values())),
    Control("card", "card", tuple(CARDS), "h100", tuple(CARD_LABELS.values())),
    Control("n", "GPUs (N)", N_VALUES, 4, input="radio"),
    Control("batch", "batch (sequences)", BATCH_VALUES, 1),
    Control("context", "context", CONTEXT_VALUES, 0, CONTEXT_LABELS),
    Control("algorithm", "all-reduce", ALGORITHMS, "ring", ALGORITHM_LABELS, input="radio"),
)

MESSAGE = Template(
    (
        "N = ",
        "{n}",
        ", batch ",
        "{batch}",
        ": ",
        "{total_ms}",
        " ms per token for each sequence, ",
        "{tokens_per_s}",
        " tokens/s in all;\n",
        "compute ",
        "{compute_ms}",
        " ms (KV and state traffic ",
        "{kv_ms}",
        " ms) + all-reduce latency ",
        "{latency_ms}",
        " ms + bytes ",
        "{bandwidth_ms}",
        " ms;\nlargest term: ",
        "{bound}",
        "; speed-up over one such card: ",
        "{speedup}",
        "x;\nceiling on any N (ring, one sequence, no context): ",
        "{ceiling}",
    )
)

_TERMS = (
    ("compute_ms", "compute (weights and KV / HBM)", "compute"),
    ("latency_ms", "all-reduce latency", "latency"),
    ("bandwidth_ms", "all-reduce bytes / fabric", "bandwidth"),
)


def _ms(seconds: float) -> float:
    return round(seconds / MS, 3)


def _ceiling(fabric: str, card: str, batch: int, context: int, algorithm: str) -> str:
    """The speed-up no N can beat, where the lesson's formula for it holds."""
    if batch != 1 or context != 0 or algorithm != "ring":
        return "n/a"
    if FABRICS[fabric].hop_latency > 0:
        return "none (it peaks, then falls)"
    limit = speedup_limit(MODEL, CARDS[card], FABRICS[fabric], include_bandwidth=True)
    return "none" if math.isinf(limit) else f"{limit:.2f}x"


@functools.cache
def _step(
    fabric: str, card: str, n: int, batch: int, context: int, algorithm: str
) -> StepBreakdown:
    setting = {"batch": batch, "context": context or None, "algorithm": algorithm}
    return decode_step(MODEL, CARDS[card], FABRICS[fabric], n, **setting)


def _state(
    fabric: str, card: str, n: int, batch: int, context: int, algorithm: str
) -> dict[str, Any]:
    setting = {"card": card, "batch": batch, "context": context, "algorithm": algorithm}
    step = _step(fabric, n=n, **setting)
    one = _step(fabric, n=1, **setting)
    return {
        "compute_ms": _ms(step.compute_s),
        "kv_ms": _ms(step.kv_read_s),
        "latency_ms": _ms(step.latency_s),
        "bandwidth_ms": _ms(step.bandwidth_s),
        "total_ms": _ms(step.total_s),
        "tokens_per_s": round(step.tokens_per_s),
        "bound": step.bound,
        "speedup": round(one.total_s / step.total_s, 2),
        "ceiling": _ceiling(fabric, card, batch, context, algorithm),
    }


def _chart(explorer_filter: str, free_n_filter: str) -> dict[str, Any]:
    lesson = " && ".join(
        f"datum.{k} == {v!r}" if isinstance(v, str) else f"datum.{k} == {v}"
        for k, v in LESSON.items()
    )
    lesson_bar = "lesson: 2 GPUs, H100, fast fabric"
    one_bar = "1 GPU, your card and fabric"
    yours = "(n == 1 ? '1 GPU' : n + ' GPUs') + ', your choice'"
    bars = (
        f"[({free_n_filter}) && datum.n == 1 ? '{one_bar}' : '', "
        f"({explorer_filter}) ? {yours} : '', "
        f"({lesson}) ? '{lesson_bar}' : '']"
    )
    return {
        "width": 560,
        "height": 150,
        "transform": [
            {"filter": f"(({free_n_filter}) && (datum.n == 1 || datum.n == n)) || ({lesson})"},
            {"calculate": bars, "as": "_bars"},
            {"flatten": ["_bars"], "as": ["_bar"]},
            {"filter": "datum._bar != ''"},
            {
                "calculate": (
                    f"datum._bar == '{one_bar}' ? 0 : (datum._bar == '{lesson_bar}' ? 2 : 1)"
                ),
                "as": "_order",
            },
            *fold_terms(_TERMS),
        ],
        **time_bars(_TERMS, {"field": "_order", "op": "min"}, "bar"),
    }


def decode_explorer() -> Explorer:
    """The live decode explorer: choose the wire, the card, N, the batch, the context, the algorithm.

    Returns
    -------
    Explorer
        Displays as a Vega-Lite chart (JupyterLab, the static site) whose
        controls pick one of the precomputed states; ``row(...)`` and
        ``message_for(...)`` give a state's numbers and message.
    """
    rows = states(CONTROLS, _state)
    explorer = Explorer(
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
        chart={},
        numeric=(*(t for t, _, _ in _TERMS), "n"),
        message_lines=4,
    )
    explorer.chart = _chart(explorer.state_filter(), explorer.state_filter(free=["n"]))
    return explorer
