"""The prefill explorer: where a prompt's all-reduce sits on the alpha-beta curve.

Per prompt length, TP degree and fabric (:mod:`lesson_lib.model.prefill`): the dominant term, the
fabric's curve with both messages on it, and a prompt and a decoded token's time on one axis.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, state_filter, states
from lesson_lib.explorers._layers import Spec, bottom_legend, layer, lookup, nominal_scale
from lesson_lib.explorers.kv_transfer import _prompt_label
from lesson_lib.figures._style import PALETTE, ROLE_COLORS
from lesson_lib.figures.prefill import TERMS
from lesson_lib.model.collectives import allreduce_time, crossover_tokens
from lesson_lib.model.prefill import per_token, place_on_curve, prefill_message_bytes
from lesson_lib.model.specimen import FAST, FAST_RING, GPU, INTER_NODE, MODEL, PROMPT_TOKENS, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import MS, US, format_bytes, format_count, format_rate, format_ratio
from lesson_lib.model.units import format_seconds as _seconds

#: The fabrics offered by key, the lesson's two, a network between nodes and a
#: ring whose latency grows per hop (the fit of the algorithms chapter).
FABRICS: dict[str, Fabric] = {"fast": FAST, "slow": SLOW, "network": INTER_NODE, "hops": FAST_RING}


def _wire(fabric: Fabric) -> str:
    return f"{_seconds(fabric.latency)}, {format_rate(fabric.bandwidth)}"


FABRIC_LABELS: dict[str, str] = {
    "fast": f"fast: NVLink-class, {_wire(FAST)} (lesson)",
    "slow": f"slow: PCIe-class, {_wire(SLOW)} (lesson)",
    "network": f"InfiniBand, {_wire(INTER_NODE)} (assumed)",
    "hops": (
        f"fast, {_seconds(FAST_RING.latency)} + {_seconds(FAST_RING.hop_latency)}/hop, "
        f"{format_rate(FAST_RING.bandwidth)} (fit)"
    ),
}
#: Each fabric's curve colour, the lesson's two as in every figure and the others distinct.
FABRIC_COLORS: dict[str, str] = {
    "fast": ROLE_COLORS["fast"], "slow": ROLE_COLORS["slow"],
    "network": PALETTE["blue"], "hops": PALETTE["purple"],
}  # fmt: skip
#: Tensor-parallel degrees offered (an all-reduce needs two ranks).
N_VALUES: tuple[int, ...] = (2, 4, 8)
#: The prompt that puts the message at the fast fabric's two-GPU crossover.
CROSSOVER_PROMPT: int = round(crossover_tokens(MODEL, FAST, 2))
#: Prompt lengths offered in tokens, the powers of two up to the model's context,
#: the lesson's prompt and the fast fabric's crossover.
_POWERS_OF_TWO = {2**k for k in range(40) if 2**k <= MODEL.max_context}
PROMPT_VALUES: tuple[int, ...] = tuple(sorted(_POWERS_OF_TWO | {PROMPT_TOKENS, CROSSOVER_PROMPT}))

_PROMPT_LABELS = tuple(_prompt_label(t, CROSSOVER_PROMPT) for t in PROMPT_VALUES)
CONTROLS: tuple[Control, ...] = (
    Control("prompt", "prompt (tokens)", PROMPT_VALUES, PROMPT_TOKENS, _PROMPT_LABELS),
    Control("n", "GPUs (TP)", N_VALUES, 4, input="radio"),
    Control("fabric", "fabric", tuple(FABRICS), "fast", tuple(FABRIC_LABELS.values())),
)

_DECODE_PAYLOAD = format_bytes(MODEL.hidden_vector_bytes, "KiB")

MESSAGE = Template(
    "{vectors} = {payload} per message, {where} the {n}-GPU crossover ({crossover}): {bound_text}\n"
    f"Each of the {MODEL.allreduces_per_token} all-reduces: "
    "{latency} latency + {bytes}"
    f" bytes (decode's {_DECODE_PAYLOAD}: "
    "{decode_bound}-bound)\nPer token: decode {decode_s}, prefill {prefill_s} ({cheaper}). "
    "Prompt: {total}, {wire} on the wire"
)

#: Time columns of the bars in ms, (column, step, StepBreakdown attribute, term label), in order.
_SHARES: tuple[tuple[str, str, str, str], ...] = tuple(
    (f"{step}_{attr.removesuffix('_s')}_ms", step, attr, label)
    for step in ("decode", "prefill")
    for attr, label, _ in TERMS
)
_COLUMNS: tuple[str, ...] = tuple(c for c, _, _, _ in _SHARES)
#: Payloads on the curve: every half power of two from 64 B to 4 GiB.
_PAYLOADS: tuple[float, ...] = tuple(2.0 ** (k / 2) for k in range(12, 65))
_CURVE, _ALPHA, _BETA = "all-reduce time", "latency term alone", "bytes term alone"


def _us(seconds: float) -> float:
    """Seconds as microseconds, to four significant digits (enough for a log axis)."""
    return float(f"{seconds / US:.4g}")


@functools.cache
def _pair(fabric: str, n: int, prompt: int) -> Any:
    return per_token(MODEL, GPU, FABRICS[fabric], n, prompt)


def _state(prompt: int, n: int, fabric: str) -> dict[str, Any]:
    wire = FABRICS[fabric]
    payload = prefill_message_bytes(MODEL, prompt)
    point = place_on_curve(payload, n, wire)
    decode = place_on_curve(MODEL.hidden_vector_bytes, n, wire)
    pair = _pair(fabric, n, prompt)
    ratio = point.ratio_to_crossover
    factor = format_ratio(max(ratio, 1 / ratio), decimals=1)
    if factor == format_ratio(1.0, decimals=1):  # within rounding of it: say so, not "1x"
        where = "at"
    else:
        where = f"{factor} {'over' if ratio >= 1 else 'below'}"
    cheaper = format_ratio(pair.ratio, decimals=0)
    cheaper = "no cheaper" if cheaper == format_ratio(1.0, decimals=0) else f"{cheaper} cheaper"
    # per token: the prefill's step is the whole prompt's, so divide by its tokens
    shares = {
        column: round(getattr(getattr(pair, step), attr) / getattr(pair, step).tokens / MS, 7)
        for column, step, attr, _ in _SHARES
    }
    return {
        "vectors": f"{format_count(prompt)} vector{'' if prompt == 1 else 's'}",
        "payload": format_bytes(payload, system="binary"),
        "where": where,
        "crossover": format_bytes(point.crossover_bytes, "MB"),
        "bound": point.bound,
        "bound_text": "the two terms equal" if where == "at" else f"{point.bound}-bound",
        "latency": _seconds(point.latency_s),
        "bytes": _seconds(point.bandwidth_s),
        "decode_bound": decode.bound,
        "decode_s": _seconds(pair.decode_s),
        "prefill_s": _seconds(pair.prefill_s, decimals=1),
        "cheaper": cheaper,
        "total": _seconds(pair.prefill.total_s),
        "wire": _seconds(pair.prefill.bandwidth_s),
        "payload_b": payload,
        "prefill_us": _us(point.total_s),
        "decode_us": _us(decode.total_s),
        "crossover_b": round(point.crossover_bytes),
        "crossover_us": _us(2 * point.latency_s),
        **shares,
    }


def _curves() -> list[dict[str, Any]]:
    """Each fabric's alpha-beta curve and asymptotes for each degree (payload, microseconds)."""
    rows = []
    for fabric, wire in FABRICS.items():
        for n in N_VALUES:
            rows += [{"fabric": fabric, "n": n, "series": _CURVE, "b": b,
                      "us": _us(allreduce_time(b, n, wire))} for b in _PAYLOADS]  # fmt: skip
            for b in (_PAYLOADS[0], _PAYLOADS[-1]):
                point = place_on_curve(b, n, wire)
                for series, seconds in ((_ALPHA, point.latency_s), (_BETA, point.bandwidth_s)):
                    rows.append({"fabric": fabric, "n": n, "series": series, "b": b,
                                 "us": _us(seconds)})  # fmt: skip
    return rows


def _log_axes(curves: list[dict[str, Any]]) -> tuple[Spec, Spec]:
    """The curve's log axes: payload in binary units, time from a decade under the fastest."""
    x_ticks = [2.0**k for k in range(6, 33, 4)]
    x_labels = {int(b): format_bytes(b, system="binary", decimals=0) for b in x_ticks}
    times = [r["us"] for r in curves if r["series"] == _CURVE]
    # A decade under the fastest curve, so the smallest latency term is a line above the
    # axis rather than the axis itself.
    low, high = math.floor(math.log10(min(times) / 10)), math.ceil(math.log10(max(times)))
    y_ticks = [10.0**k for k in range(low, high + 1)]  # whole decades
    y_labels = {int(t): _seconds(t * US, decimals=0) for t in y_ticks}
    grid = {"grid": True, "gridOpacity": 0.3}
    x = {
        "type": "quantitative",
        "title": "payload of one all-reduce (bytes, binary units, log scale)",
        "scale": {"type": "log", "base": 2, "domain": [_PAYLOADS[0], _PAYLOADS[-1]], "nice": False},
        "axis": {"values": x_ticks, "labelExpr": lookup(x_labels, "datum.value"), **grid},
    }
    y = {
        "type": "quantitative",
        "title": "time of one all-reduce (log scale)",
        "scale": {"type": "log", "domain": [y_ticks[0], y_ticks[-1]], "nice": False},
        "axis": {"values": y_ticks, "labelExpr": lookup(y_labels, "datum.value"), **grid,
                 "orient": "right"},
    }  # fmt: skip
    return x, y


_FABRIC_COLOR: Spec = nominal_scale("fabric", list(FABRIC_COLORS), FABRIC_COLORS.values(), None)


def _curves_layer(curve_state: str, curves: list[dict[str, Any]], x: Spec, y: Spec) -> Spec:
    """The chosen fabric's curve for the chosen degree, thick, and its two terms alone, thin."""
    dash = nominal_scale("series", [_CURVE, _ALPHA, _BETA],
                         [[1, 0], [2, 3], [6, 3]],
                         bottom_legend(symbolStrokeColor="black"))  # fmt: skip
    encoding = {
        "x": {"field": "b", **x},
        "y": {"field": "us", **y},
        "color": _FABRIC_COLOR,
        "detail": {"field": "series"},
        "size": {"condition": {"test": f"datum.series == '{_CURVE}'", "value": 2.5}, "value": 1.2},
        "strokeDash": dash,
    }  # fmt: skip
    line = layer("line", encoding, [{"filter": curve_state}], clip=True)
    return {"data": {"values": curves}, **line}


def _both(state: str, columns: list[str], value: str) -> list[Spec]:
    """The state's row twice, once per message, with the message's payload as ``_b``."""
    first = columns[0]
    pick = f"datum._k == '{first}' ? {MODEL.hidden_vector_bytes} : datum.payload_b"
    return [{"filter": state}, {"fold": columns, "as": ["_k", value]},
            {"calculate": pick, "as": "_b"}]  # fmt: skip


def _message_label(state: str, x: Spec, test: str, align: str, dy: int, text: str,
                   at: str) -> Spec:  # fmt: skip
    """A message's label at the top of the plot, beside its line."""
    pick = [{"filter": f"({state}) && ({test})"}, {"calculate": text, "as": "_t"},
            {"calculate": at, "as": "_x"}]  # fmt: skip
    return layer("text", {"x": {"field": "_x", **x}, "text": {"field": "_t"}}, pick, align=align,
                 baseline="top", dx=4 if align == "left" else -4, y=dy, fontSize=11)  # fmt: skip


def _message_layers(state: str, x: Spec, y: Spec) -> list[Spec]:
    """The decode and prefill messages: a line at each payload, its label and its point."""
    decode_b = MODEL.hidden_vector_bytes
    middle = math.sqrt(_PAYLOADS[0] * _PAYLOADS[-1])
    prefill_text = "'prefill: ' + datum.vectors + ', ' + datum.payload"
    at = {"x": {"field": "_b", **x}}
    points = {**at, "y": {"field": "_us", **y}, "color": _FABRIC_COLOR}
    return [
        layer("rule", at, _both(state, ["d", "p"], "_v"), color=PALETTE["grey"],
              strokeDash=[6, 2, 2, 2]),
        _message_label(state, x, "true", "left", 4, f"'decode: 1 vector, {_DECODE_PAYLOAD}'",
                       str(decode_b)),
        _message_label(state, x, f"datum.payload_b < {middle}", "left", 22, prefill_text,
                       "datum.payload_b"),
        _message_label(state, x, f"datum.payload_b >= {middle}", "right", 22, prefill_text,
                       "datum.payload_b"),
        layer("point", points, _both(state, ["decode_us", "prefill_us"], "_us"), filled=True,
              size=70, stroke="black", strokeWidth=1, opacity=1),
    ]  # fmt: skip


def _crossover_layers(state: str, x: Spec, y: Spec) -> list[Spec]:
    """The crossover, where the two terms are equal: a diamond and its size."""
    at = {"x": {"field": "crossover_b", **x}, "y": {"field": "crossover_us", **y}}
    label = [{"filter": state}, {"calculate": "'crossover ' + datum.crossover", "as": "_t"}]
    return [
        layer("point", {**at, "color": _FABRIC_COLOR}, [{"filter": state}], shape="diamond",
              filled=True, size=110, stroke="black", strokeWidth=1, opacity=1),
        layer("text", {**at, "text": {"field": "_t"}}, label, align="right", dx=-9, dy=-9,
              fontSize=11),
    ]  # fmt: skip


def _curve_chart(state: str, curve_state: str, curves: list[dict[str, Any]]) -> Spec:
    """One all-reduce's time against its payload, the state's messages and crossover on it."""
    x, y = _log_axes(curves)
    return {
        "width": 540,
        "height": 250,
        "title": {"text": "One all-reduce on the chosen fabric and ring", "fontSize": 12,
                  "anchor": "start"},
        "layer": [
            _curves_layer(curve_state, curves, x, y),
            *_message_layers(state, x, y),
            *_crossover_layers(state, x, y),
        ],
    }  # fmt: skip


def _bar_chart(state: str, x_max_ms: float) -> Spec:
    """Each kind of token's time, term by term, on one linear axis from 0 to ``x_max_ms``."""
    columns = list(_COLUMNS)
    # Each bar's label sits above it (a label beside it would push the message right).
    y = {"field": "_step", "type": "nominal", "title": None, "sort": None, "axis": None,
         "scale": {"paddingInner": 0.5, "paddingOuter": 0.1}}  # fmt: skip
    # A prefill under 2 px of the 600 px axis is no visible bar: its label says so.
    thin = " + ".join(f"datum.{c}" for c in columns[3:]) + f" < {x_max_ms / 300:g}"
    step = ("indexof(datum._column, 'decode') == 0 ? 'decode: ' + datum.decode_s + ' per token' "
            f": 'prefill: ' + datum.prefill_s + ({thin} ? ', too thin to see' : ' per token') "
            "+ ' (' + datum.cheaper + ')'")  # fmt: skip
    term = nominal_scale("term", [label for _, label, _ in TERMS],
                         [ROLE_COLORS[role] for _, _, role in TERMS],
                         bottom_legend(labelLimit=260))  # fmt: skip
    tooltip = [
        {"field": "_step", "title": "step"},
        {"field": "term"},
        {"field": "_ms", "title": "ms", "type": "quantitative", "format": ".4f"},
    ]
    ms = {"field": "_ms", "type": "quantitative", "stack": "zero",
          "title": "time per token (ms, linear)",
          "scale": {"domain": [0, x_max_ms], "nice": False}}  # fmt: skip
    bars = {"y": y, "x": ms, "color": term, "order": {"field": "_stack", "type": "quantitative"},
            "tooltip": tooltip}  # fmt: skip
    label = {"y": {**y, "bandPosition": 0}, "x": {"value": 0}, "text": {"field": "_step"}}
    return {
        "width": 600,
        "height": 84,
        "title": {"text": "Time per token, on one scale for every setting", "fontSize": 12,
                  "anchor": "start"},
        "transform": [
            {"filter": state},
            {"fold": columns, "as": ["_column", "_ms"]},
            {"calculate": lookup({c: t for c, _, _, t in _SHARES}, "datum._column"), "as": "term"},
            {"calculate": step, "as": "_step"},
            {"calculate": f"indexof({columns!r}, datum._column) % 3", "as": "_stack"},
        ],
        "layer": [
            layer("bar", bars, stroke="white", strokeWidth=1),
            layer("text", label, [{"filter": "datum._stack == 0"}], align="left",
                  baseline="bottom", dy=-2, fontSize=12),
        ],
    }  # fmt: skip


def _bar_axis_ms(rows: list[dict[str, Any]]) -> float:
    """The bars' fixed axis: the longest decoded token of any state, up to a whole ms."""
    decode = [c for c, step, _, _ in _SHARES if step == "decode"]
    return float(math.ceil(max(sum(r[c] for c in decode) for r in rows)))


def prefill_explorer() -> Explorer:
    """The live prefill explorer: choose the prompt length, the GPUs and the fabric.

    Returns
    -------
    Explorer
    """
    rows, state = states(CONTROLS, _state), state_filter(CONTROLS)
    curves = _curve_chart(state, state_filter(CONTROLS, free=["prompt"]), _curves())
    independent = {"color": "independent", "strokeDash": "independent"}
    return Explorer(
        title="Prefill explorer: where the prompt's all-reduce sits",
        description=(
            "Top: the time of one all-reduce against its payload on log-log axes for the "
            "chosen fabric and number of GPUs, with the latency and bytes terms alone as thin "
            "lines, the crossover where they are equal as a diamond, and the decode and "
            "prefill messages marked. Bottom: the time of a decoded token and of a prompt "
            "token, split into compute, all-reduce latency and all-reduce bytes, on one linear "
            "axis in milliseconds for every setting; a prompt token's bar is a sliver beside "
            "decode's. The axes stay fixed as the controls move. The message above gives the "
            "numbers."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart={
            "vconcat": [curves, _bar_chart(state, _bar_axis_ms(rows))],
            "spacing": 14,
            "resolve": {"scale": independent, "legend": independent},
        },
        numeric=("payload_b", "prefill_us", "decode_us", "crossover_b", "crossover_us", *_COLUMNS),
        message_lines=3,
    )
