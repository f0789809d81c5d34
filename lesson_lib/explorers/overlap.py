"""The overlap explorer: a step of some tokens, on a fabric, under one technique.

Every number is :func:`lesson_lib.model.overlap.step_time`'s: the step's compute, its add + RMSNorm
launches and its all-reduces' exposed latency and bytes in one bar, the communication hidden under
the compute in a second. At its defaults it is the figure's decoded token on four fast GPUs.
"""

from __future__ import annotations

from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, state_filter, states
from lesson_lib.explorers._layers import bottom_legend, labels_above, layer, lookup, nominal_scale
from lesson_lib.figures._style import NEUTRALS, ROLE_COLORS
from lesson_lib.model.overlap import TECHNIQUES, step_time
from lesson_lib.model.specimen import FAST, MODEL, SLOW
from lesson_lib.model.units import MS, format_count, format_seconds

#: Tokens each all-reduce carries: a decoded token, batches and prompts.
TOKEN_VALUES: tuple[int, ...] = (1, 16, 128, 1024, 4096)
FABRICS = {"fast": FAST, "slow": SLOW}
FABRIC_LABELS: tuple[str, ...] = (
    f"fast: NVLink-class, {format_seconds(FAST.latency)}",
    f"slow: PCIe-class, {format_seconds(SLOW.latency)}",
)
TECHNIQUE_LABELS: tuple[str, ...] = (
    "none",
    "all-reduce fused with add + RMSNorm",
    "chunked overlap (async TP), 4 chunks",
    "FP8 all-reduce payload",
    "FP8 weights",
)
CONTROLS: tuple[Control, ...] = (
    Control("tokens", "tokens per all-reduce", TOKEN_VALUES, 1),
    Control("fabric", "fabric", tuple(FABRICS), "fast", FABRIC_LABELS, input="radio"),
    Control("technique", "technique", TECHNIQUES, "none", TECHNIQUE_LABELS),
)
#: What each technique changes, in the message.
EFFECT: dict[str, str] = {
    "none": "an add + RMSNorm kernel launched after each all-reduce",
    "fused": "the launches gone, the all-reduces kept",
    "chunked": "each all-reduce split in 4 chunks under its GEMM, each chunk paying the latency",
    "fp8_allreduce": "the bytes on the wire halved, the latency kept",
    "fp8_weights": "the weights read at one byte each",
}
MESSAGE = Template(
    "{what}, {fabric_text}, {technique_text}: {total}\n"
    "compute {compute} + launches {launches} + exposed all-reduces {exposed} ({latency} latency)"
    "; hidden {hidden}\n{effect}; against no technique {delta}"
)
_TERMS = (
    ("compute_ms", "compute", ROLE_COLORS["compute"]),
    ("launches_ms", "add + RMSNorm launches", NEUTRALS[3]),
    ("latency_ms", "exposed latency", ROLE_COLORS["latency"]),
    ("bandwidth_ms", "exposed bytes", ROLE_COLORS["bandwidth"]),
    ("hidden_ms", "hidden under compute", NEUTRALS[1]),
)
_STEP, _HIDDEN = "the step", "communication hidden under compute"


def _ms(seconds: float) -> float:
    return round(seconds / MS, 5)


def _state(tokens: int, fabric: str, technique: str) -> dict[str, Any]:
    step = step_time(tokens, technique, FABRICS[fabric])
    base = step_time(tokens, "none", FABRICS[fabric])
    change = step.total_s - base.total_s
    sign = "+" if change > 0 else "-"
    delta = "the same" if abs(change) < 5e-7 else f"{sign}{format_seconds(abs(change), 'ms')}"
    what = "a decoded token" if tokens == 1 else f"a step of {format_count(tokens)} tokens"
    return {
        "what": what[0].upper() + what[1:],
        "fabric_text": f"4 GPUs, {fabric} fabric",
        "technique_text": TECHNIQUE_LABELS[TECHNIQUES.index(technique)],
        "total": format_seconds(step.total_s, "ms"),
        "compute": format_seconds(step.compute_s, "ms"),
        "launches": format_seconds(step.launches_s, "ms", decimals=3),
        "exposed": format_seconds(step.latency_s + step.bandwidth_s, "ms"),
        "latency": format_seconds(step.latency_s, "ms"),
        "hidden": format_seconds(step.hidden_s, "ms"),
        "effect": EFFECT[technique][0].upper() + EFFECT[technique][1:],
        "delta": delta,
        "compute_ms": _ms(step.compute_s),
        "launches_ms": _ms(step.launches_s),
        "latency_ms": _ms(step.latency_s),
        "bandwidth_ms": _ms(step.bandwidth_s),
        "hidden_ms": _ms(step.hidden_s),
        "total_ms": _ms(step.total_s),
    }


def _chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    axis = {t: max(r["total_ms"] for r in rows if r["tokens"] == t) * 1.05 for t in TOKEN_VALUES}
    columns = [c for c, _, _ in _TERMS]
    color = nominal_scale(
        "term", [label for _, label, _ in _TERMS], [c for _, _, c in _TERMS],
        bottom_legend(labelLimit=260),
    )  # fmt: skip
    y = {"field": "_bar", "type": "nominal", "title": None, "sort": [_STEP, _HIDDEN],
         "scale": {"domain": [_STEP, _HIDDEN], "paddingInner": 0.5}, "axis": labels_above(17)}  # fmt: skip
    x = {"field": "_ms", "type": "quantitative", "stack": "zero",
         "title": f"ms (one scale per number of tokens; {MODEL.allreduces_per_token} all-reduces)",
         "scale": {"domainMin": 0, "domainMax": {"expr": lookup(axis, "tokens", lambda v: f"{v:.4g}")},
                   "nice": False}}  # fmt: skip
    tooltip = [{"field": "term"}, {"field": "_ms", "title": "ms", "format": ".3f"}]
    encoding = {"y": y, "x": x, "color": color, "tooltip": tooltip,
                "order": {"field": "_stack", "type": "quantitative"}}  # fmt: skip
    return {
        "width": 560,
        "height": 110,
        "transform": [
            {"filter": state_filter(CONTROLS)},
            {"fold": columns, "as": ["_term", "_ms"]},
            {"calculate": lookup({c: t for c, t, _ in _TERMS}, "datum._term"), "as": "term"},
            {"calculate": f"indexof({columns!r}, datum._term)", "as": "_stack"},
            {"calculate": f"datum._term == 'hidden_ms' ? '{_HIDDEN}' : '{_STEP}'", "as": "_bar"},
        ],
        **layer("bar", encoding, stroke="white", strokeWidth=1),
    }


def overlap_explorer() -> Explorer:
    """The live overlap explorer: tokens per all-reduce, fabric and technique.

    Returns
    -------
    Explorer
    """
    rows = states(CONTROLS, _state)
    return Explorer(
        title="Overlap explorer: a step under each technique",
        description=(
            "Two horizontal bars on an axis fixed for each number of tokens. The first is the "
            "step's time, stacked from compute, the add + RMSNorm launches, and the all-reduces' "
            "exposed latency and bytes; the second, in grey, is the communication hidden under "
            "the compute. The message gives the numbers and what the technique changes."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart=_chart(rows),
        numeric=(*(c for c, _, _ in _TERMS), "total_ms"),
        message_lines=3,
    )
