"""The KV-transfer explorer: one request's prefill and the hand-off of its cache.

Bars of one :func:`lesson_lib.model.kv_links.link_handoff` on one time axis; at its defaults, the
live twin of :func:`~lesson_lib.figures.kv_transfer.handoff_timeline_figure`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, state_filter, states
from lesson_lib.explorers._layers import Spec, labels_above, layer, lookup
from lesson_lib.figures._style import ROLE_COLORS
from lesson_lib.figures.kv_transfer import LINK_COLORS
from lesson_lib.model.kv_links import GPUS, LINKS, LINKS_BY_KEY, link_handoff
from lesson_lib.model.kv_transfer import Handoff, kv_transfer_bytes
from lesson_lib.model.specimen import MODEL, PROMPT_TOKENS
from lesson_lib.model.units import format_bytes, format_count, format_seconds

#: Prompt lengths offered, tokens: powers of two from 128 to the model's context.
PROMPT_VALUES: tuple[int, ...] = tuple(2**k for k in range(7, 40) if 2**k <= MODEL.max_context)
#: Tensor-parallel degrees offered on each side.
GPU_VALUES: tuple[int, ...] = (1, 2, 4, 8)


def _prompt_label(tokens: int, crossover: int | None = None) -> str:
    """A prompt length, marked when it is the lesson's, the ``crossover`` or the full context."""
    text = format_count(tokens)
    if tokens == PROMPT_TOKENS:
        return f"{text} (lesson)"
    if tokens == crossover:
        return f"{text} (crossover: fast, 2 GPUs)"
    return f"{text} (full context)" if tokens == MODEL.max_context else text


_PROMPT_LABELS = tuple(_prompt_label(t) for t in PROMPT_VALUES)
_LINK_KEYS, _LINK_LABELS = tuple(link.key for link in LINKS), tuple(link.label for link in LINKS)
CONTROLS: tuple[Control, ...] = (
    Control("prompt", "prompt (tokens)", PROMPT_VALUES, PROMPT_TOKENS, _PROMPT_LABELS),
    Control("link", "link", _LINK_KEYS, "nic", _LINK_LABELS),
    Control("prefill_gpus", "prefill GPUs (TP)", GPU_VALUES, GPUS, input="radio"),
    Control("decode_gpus", "decode GPUs (TP)", GPU_VALUES, GPUS, input="radio"),
)

MESSAGE = Template(
    "{request} per request ({kv} of KV + {state} of state); busiest port {port}\n"
    "Prefill {prefill}; shipped after it + {bulk} ({share} of the prefill)\n"
    "Streamed by layer + {exposed}, {keeps}\n"
    "{rate} requests/s through these ports; first token {ttft} streamed, {ttft_bulk} shipped"
)

#: The chart's bars, top to bottom.
BARS: tuple[str, ...] = ("prefill", "shipped after it", "streamed by layer")
#: A note above its bar's end, or, short of the axis's middle, after it (clear of the bar's name).
_ABOVE_END: dict[str, Any] = {"align": "right", "baseline": "bottom", "dy": -9, "fontSize": 12}
_AFTER_END: dict[str, Any] = {"align": "left", "baseline": "middle", "dx": 4, "fontSize": 12}


def _ms(seconds: float) -> float:
    return float(f"{seconds * 1e3:.6g}")


@functools.cache
def _handoff(prompt: int, link: str, prefill_gpus: int, decode_gpus: int) -> Handoff:
    return link_handoff(LINKS_BY_KEY[link], prompt, prefill_gpus, decode_gpus)


def _state(prompt: int, link: str, prefill_gpus: int, decode_gpus: int) -> dict[str, Any]:
    h = _handoff(prompt, link, prefill_gpus, decode_gpus)
    return {
        "request": format_bytes(kv_transfer_bytes(MODEL, prompt), system="binary", decimals=1),
        "kv": format_bytes(MODEL.kv_bytes(prompt), system="binary", decimals=1),
        "state": format_bytes(MODEL.state_bytes, "MiB", decimals=1),
        "port": format_bytes(h.bulk.port_bytes, system="binary", decimals=1),
        "prefill": format_seconds(h.prefill.total_s),
        "bulk": format_seconds(h.bulk.time_s),
        "share": f"{100 * h.ratio:.1f} %",
        # in ms to three places, as the chapter's prose gives it
        "exposed": format_seconds(h.streamed.exposed_s, "ms", decimals=3),
        "keeps": "the port keeps up" if h.streamed.keeps_up else "the port falls behind",
        "rate": format_count(1 / h.bulk.time_s, decimals=1),
        "ttft": format_seconds(h.ttft_streamed_s),
        "ttft_bulk": format_seconds(h.ttft_bulk_s),
    }


def _details(prompt: int, link: str, prefill_gpus: int, decode_gpus: int) -> list[dict[str, Any]]:
    """The three bars of one state: start and end in ms, and the label beside each."""
    h = _handoff(prompt, link, prefill_gpus, decode_gpus)
    state = dict(prompt=prompt, link=link, prefill_gpus=prefill_gpus, decode_gpus=decode_gpus)
    spans = (
        (0.0, h.prefill.total_s, format_seconds(h.prefill.total_s)),
        (h.prefill.total_s, h.ttft_bulk_s, "+ " + format_seconds(h.bulk.time_s)),
        (0.0, h.ttft_streamed_s, "+ " + format_seconds(h.streamed.exposed_s, "ms", decimals=3)),
    )
    return [
        {**state, "bar": bar, "order": i, "start_ms": _ms(a), "end_ms": _ms(b), "note": note}
        for i, (bar, (a, b, note)) in enumerate(zip(BARS, spans, strict=True))
    ]


def _axis_ms(details: list[dict[str, Any]]) -> dict[int, float]:
    """Each prompt's time axis, ms: the latest bar end over every link and GPU count, rounded up.

    A 128-token prompt and a full-context one differ a thousandfold: one axis would hide the short.
    """
    latest: dict[int, float] = {}
    for d in details:
        latest[d["prompt"]] = max(latest.get(d["prompt"], 0.0), d["end_ms"])
    return {prompt: _nice_up(ms) for prompt, ms in latest.items()}


def _nice_up(ms: float) -> float:
    """The smallest round step (1, 1.5, 2, 3, 4, 5, 6, 8 times a power of ten) at least ``ms``."""
    decade = 10.0 ** math.floor(math.log10(ms))
    steps = (1, 1.5, 2, 3, 4, 5, 6, 8, 10)
    return next(float(f"{k * decade:.6g}") for k in steps if k * decade >= ms)


def _chart(state: str, axis: dict[int, float]) -> Spec:
    y = {"field": "bar", "type": "nominal", "title": None, "sort": BARS,
         "scale": {"paddingInner": 0.55}, "axis": labels_above(14)}  # fmt: skip
    domain_max = lookup(axis, "prompt", value=lambda ms: f"{ms:g}")
    link_color = lookup(LINK_COLORS, "datum.link")
    x = {"field": "start_ms", "type": "quantitative",
         "title": "ms from the prompt's arrival (one scale per prompt length)",
         "scale": {"domainMin": 0, "domainMax": {"expr": domain_max}, "nice": False}}  # fmt: skip
    tooltip = [{"field": "bar"}, {"field": "start_ms", "title": "from (ms)"},
               {"field": "end_ms", "title": "to (ms)"}]  # fmt: skip
    spans = {
        "y": y, "x": x, "x2": {"field": "end_ms"},
        "color": {"field": "_color", "type": "nominal", "scale": None},
        "opacity": {"condition": {"test": "datum.bar == 'streamed by layer'", "value": 0.55},
                    "value": 1},
        "tooltip": tooltip,
    }  # fmt: skip
    at_end = {"y": y, "x": {"field": "end_ms", "type": "quantitative"}}
    color = f"datum.bar == 'prefill' ? {ROLE_COLORS['prefill']!r} : {link_color}"
    short = f"datum.end_ms < 0.5 * {domain_max}"
    return {
        "width": 560,
        "height": 170,
        "transform": [
            {"filter": state},
            {"calculate": color, "as": "_color"},
            {"calculate": f"{short} ? '' : datum.note", "as": "_above"},
            {"calculate": f"{short} ? datum.note : ''", "as": "_after"},
        ],
        "layer": [
            layer("bar", spans, stroke="white", strokeWidth=1),
            layer("text", {**at_end, "text": {"field": "_above"}}, **_ABOVE_END),
            layer("text", {**at_end, "text": {"field": "_after"}}, **_AFTER_END),
        ],
    }


def kv_transfer_explorer() -> Explorer:
    """The live KV-transfer explorer: choose the prompt, the link and the GPUs on each side.

    Returns
    -------
    Explorer
    """
    rows = states(CONTROLS, _state)
    details = [d for row in rows for d in _details(**{c.name: row[c.name] for c in CONTROLS})]
    return Explorer(
        title="KV-transfer explorer: one request's hand-off",
        description=(
            "Three horizontal bars on one time axis in milliseconds, fixed for each prompt "
            "length: the prefill on the prefill GPUs, the cache shipped after it over the "
            "chosen link, and the cache streamed layer by layer behind the prefill, each "
            "labelled with what it adds. "
            "The message above gives the bytes per request and per port and the times."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart=_chart(state_filter(CONTROLS), _axis_ms(details)),
        message_lines=4,
        details=details,
        detail_numeric=("order", "start_ms", "end_ms"),
    )
