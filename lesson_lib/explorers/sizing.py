"""The sizing explorer: do this many sequences of this length fit on these cards?

Each state is a :func:`lesson_lib.model.memory.memory_budget`: a stacked bar against the card's
capacity, whether it fits and how many sequences would; at its defaults, the chapter's first bar.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, state_filter, states
from lesson_lib.explorers._layers import Spec, bottom_legend, layer, lookup, nominal_scale
from lesson_lib.figures._style import PALETTE, ROLE_COLORS
from lesson_lib.figures.sizing import SEGMENTS
from lesson_lib.model.memory import kv_share, max_sequences, memory_budget
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.sizing import fits_by_degree
from lesson_lib.model.specimen import GPU, GPU_LABEL, MODEL
from lesson_lib.model.specs import Accelerator, ModelSpec
from lesson_lib.model.units import GB, GiB, format_bytes, format_count

#: Tensor-parallel degrees offered.
TP_VALUES: tuple[int, ...] = (1, 2, 4, 8)
#: The models offered, by name: the specimen first, then the other presets.
MODELS: dict[str, ModelSpec] = dict(PRESETS)
#: Context lengths offered, as the divisor of the chosen model's longest context
#: (1 is the whole of it); for the specimen 262,144, 131,072, 32,768 and 8,192 tokens.
CONTEXT_DIVISORS: tuple[int, ...] = (1, 2, 8, 32)


def _context_tokens(model: str, divisor: int) -> int:
    """Tokens per sequence at ``1 / divisor`` of ``model``'s longest context (it divides evenly)."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {list(MODELS)}, got {model!r}")
    if divisor not in CONTEXT_DIVISORS:
        raise ValueError(f"divisor must be one of {list(CONTEXT_DIVISORS)}, got {divisor!r}")
    return MODELS[model].max_context // divisor


#: The card of exercise ex-sizing-3, sold as 141 GB with about 140 GiB visible.
BIG_CARD_LABEL: str = "141 GB"
BIG_CARD_BYTES: float = 140 * GiB


def _card_gb(memory: float) -> int | float:
    """Card memory in GB, two decimals, whole numbers as int: ``24`` everywhere, never ``24.0``."""
    gb = round(memory / GB, 2)
    return int(gb) if gb == int(gb) else gb


#: Cards offered, by their usable memory in GB (rounded for the control); the
#: specimen's card is :data:`lesson_lib.model.specimen.GPU` itself.
CARDS: dict[int | float, Accelerator] = {
    _card_gb(memory): (
        GPU if memory == GPU.memory_bytes else dataclasses.replace(GPU, memory_bytes=memory)
    )
    for memory in (24 * GB, 48 * GB, GPU.memory_bytes, BIG_CARD_BYTES, 192 * GB)
}
LESSON_CARD: int | float = _card_gb(GPU.memory_bytes)


def _card_label(gb: int | float) -> str:
    """Usable memory, and what the card is sold as; short, as a phone shows a select's choice."""
    memory = CARDS[gb].memory_bytes
    text = format_bytes(memory, "GB")
    if CARDS[gb] is GPU:
        return f"{text} (lesson, sold as {GPU_LABEL})"
    return f"{text} (sold as {BIG_CARD_LABEL})" if memory == BIG_CARD_BYTES else text


#: Sequences offered, the powers of two up to 128 and, for each degree, the most
#: full-length sequences the specimen's card holds and one more (the chapter's
#: 1, 6, 16 ... and the first count that does not fit).
SEQUENCE_VALUES: tuple[int, ...] = tuple(
    sorted(
        {0, *(2**k for k in range(8))}
        | {f.sequences + extra for f in fits_by_degree(degrees=TP_VALUES) for extra in (0, 1)}
    )
)

_CONTEXT_LABELS = tuple(
    f"1/{d} ({format_count(MODEL.max_context // d)} tokens for the specimen)" if d > 1 else "full"
    for d in CONTEXT_DIVISORS
)
_CARD_LABELS = tuple(_card_label(g) for g in CARDS)
CONTROLS: tuple[Control, ...] = (
    Control("model", "model", tuple(MODELS), MODEL.name),
    Control(
        "context", "context (share of the model's longest)", CONTEXT_DIVISORS, 1, _CONTEXT_LABELS
    ),
    Control("sequences", "sequences", SEQUENCE_VALUES, 1),
    Control("n", "TP degree (GPUs)", TP_VALUES, 1, input="radio"),
    Control("card", "card (usable memory)", tuple(CARDS), LESSON_CARD, _CARD_LABELS),
)

MESSAGE = Template(
    "{model}: {context_text}\n{fit}: {margin_gb} GB {margin_word} per GPU{why}\n"
    "Per GPU: {weights_gb} GB weights + {kv_gb} GB KV cache + {state_gb}{state_phrase} = "
    "{used_gb} GB of {card} GB\n"
    "Sequences of this length that fit: {most}, each {per_sequence_gb} GB per GPU"
)

#: The bar's segments, bottom to top: (column, legend label, role), as in the figure.
_SEGMENT_COLUMNS: tuple[tuple[str, str, str], ...] = tuple(
    (attr.replace("_bytes", "_gb"), label, role) for attr, label, role in SEGMENTS
)
#: The segments the states table holds; what is free, or over, the chart works out
#: from the margin (the two are the message's margin, so they are not shipped twice).
_SHIPPED_SEGMENTS: tuple[str, ...] = ("weights_gb", "kv_gb", "state_gb")
_FREE_AND_OVER: tuple[dict[str, str], ...] = (
    {"calculate": "datum.margin_word == 'free' ? datum.margin_gb : 0", "as": "free_gb"},
    {"calculate": "datum.margin_word == 'free' ? 0 : datum.margin_gb", "as": "over_gb"},
)


def _gb(nbytes: float) -> float:
    return round(nbytes / GB, 2)


@functools.cache
def _per_gpu(model: str, tokens: int, n: int, card: int | float) -> tuple[int, float]:
    """The most sequences of this length that fit, and what one of them adds per GPU."""
    spec, accel = MODELS[model], CARDS[card]
    empty, one = (memory_budget(spec, accel, n, tokens, sequences) for sequences in (0, 1))
    return max_sequences(spec, accel, n, tokens), one.used_bytes - empty.used_bytes


def _why(spec: ModelSpec, n: int, weights_too_big: bool) -> str:
    """Why the KV cache or weights behave so; never empty (the browser would take it as missing)."""
    if weights_too_big:
        return "; the weights alone are larger than the card."
    if kv_share(spec, n) * n > 1:
        if spec.kv_lora_rank:
            return f" (one attention latent per token, copied to all {n} GPUs)."
        return f" ({n} GPUs > {spec.num_kv_heads} KV heads: the KV cache no longer splits)."
    return "."


def _state(model: str, context: int, sequences: int, n: int, card: int | float) -> dict[str, Any]:
    spec = MODELS[model]
    tokens = _context_tokens(model, context)
    budget = memory_budget(spec, CARDS[card], n, tokens, sequences)
    most, per_sequence = _per_gpu(model, tokens, n, card)
    has_state = spec.state_bytes > 0
    return {
        "context_text": f"{format_count(tokens)} tokens per sequence ("
        + ("its longest)" if context == 1 else f"1/{context} of its longest)"),
        "state_phrase": " GB DeltaNet state" if has_state else " GB state (no DeltaNet)",
        "fit": "Fits" if budget.fits else "Does not fit",
        "margin_gb": _gb(budget.free_bytes if budget.fits else budget.shortfall_bytes),
        "margin_word": "free" if budget.fits else "short",
        "why": _why(spec, n, budget.weights_bytes > budget.capacity_bytes),
        "weights_gb": _gb(budget.weights_bytes),
        "kv_gb": _gb(budget.kv_bytes),
        "state_gb": _gb(budget.state_bytes),
        "used_gb": _gb(budget.used_bytes),
        "most": most,
        "per_sequence_gb": _gb(per_sequence),
    }


#: The memory axis's fixed right end, GB: the largest card offered, rounded up to 50 GB,
#: so that a bar keeps its length when another control moves; a longer bar is cut at
#: the edge, and its label and the message say by how much it is over.
AXIS_MAX_GB: int = 50 * math.ceil(max(CARDS) / 50)


#: Vertical layout of the chart in pixels: the card's label, the bar, then the overflow's label.
_BAR_TOP, _BAR_BOTTOM = 22, 62
_BAR_MIDDLE = (_BAR_TOP + _BAR_BOTTOM) / 2
_X: Spec = {
    "type": "quantitative",
    "title": "memory per GPU (GB, 10⁹ bytes)",
    "scale": {"domain": [0, AXIS_MAX_GB], "clamp": True, "nice": False},
}


def _segment_bars() -> Spec:
    """The stacked segments, each in its role's colour, what is free faded."""
    segment = nominal_scale("segment", [label for _, label, _ in _SEGMENT_COLUMNS],
                            [ROLE_COLORS[role] for _, _, role in _SEGMENT_COLUMNS],
                            bottom_legend())  # fmt: skip
    encoding = {
        "x": {"field": "_gb", "stack": "zero", **_X},
        "y": {"value": _BAR_MIDDLE},
        "color": segment,
        "opacity": {"condition": {"test": "datum._column == 'free_gb'", "value": 0.45}, "value": 1},
        "order": {"field": "_stack", "type": "quantitative"},
        "tooltip": [{"field": "segment"},
                    {"field": "_gb", "title": "GB per GPU", "type": "quantitative"}],
    }  # fmt: skip
    return layer("bar", encoding, height=_BAR_BOTTOM - _BAR_TOP, stroke="white", strokeWidth=1)


def _segment_labels() -> Spec:
    """Each segment's size in its middle, if the segment is wide enough for it."""
    middle = [
        {"stack": "_gb", "groupby": [], "sort": [{"field": "_stack"}], "as": ["_a", "_b"]},
        {"calculate": "(datum._a + datum._b) / 2", "as": "_mid"},
        # No label on a segment narrower than it (11 px text, 6.5 px a character, on 600 px).
        {"filter": f"datum._gb >= {6.5 / 600 * AXIS_MAX_GB:g} * length(datum._label)"},
    ]
    encoding = {
        "x": {"field": "_mid", "type": "quantitative"},
        "text": {"field": "_label"},
        # White on the dark segments (5.7:1 on the state's green, black 3.7:1).
        "color": {"condition": {"test": "indexof(['weights_gb', 'state_gb'], datum._column) >= 0",
                                "value": "white"}, "value": "black"},
    }  # fmt: skip
    return layer("text", encoding, middle, fontSize=11, baseline="middle", y=_BAR_MIDDLE)


def _segments(state: str) -> Spec:
    """The bar: the state's segments folded into one stack, with their labels."""
    columns = [c for c, _, _ in _SEGMENT_COLUMNS]
    labels = {c: label for c, label, _ in _SEGMENT_COLUMNS}
    return {
        "transform": [
            {"filter": state},
            *_FREE_AND_OVER,
            {"fold": columns, "as": ["_column", "_gb"]},
            {"calculate": lookup(labels, "datum._column"), "as": "segment"},
            {"calculate": f"indexof({columns!r}, datum._column)", "as": "_stack"},
            {"calculate": "datum._gb + ' GB'", "as": "_label"},
        ],
        "layer": [_segment_bars(), _segment_labels()],
    }


def _card_caption(test: str, align: str, dx: int) -> Spec:
    """The card's label beside its line, shown when ``test`` of a wide card holds."""
    text = f"{test}(datum.card > 0.5 * datum.used_gb) ? datum._card : ''"
    encoding = {"x": {"field": "card", **_X}, "text": {"field": "_text"}}
    return layer("text", encoding, [{"calculate": text, "as": "_text"}], align=align, dx=dx, y=0,
                 baseline="top", fontSize=11)  # fmt: skip


def _card(state: str) -> Spec:
    """The card's capacity: a dashed line and its label on the side where there is room."""
    line = layer("rule", {"x": {"field": "card", **_X}, "color": {"value": "black"}},
                 strokeDash=[6, 3], strokeWidth=1.5,
                 y=_BAR_TOP - 6, y2=_BAR_BOTTOM + 6)  # fmt: skip
    return {
        "transform": [
            {"filter": state},
            {"calculate": "'card: ' + datum.card + ' GB'", "as": "_card"},
        ],
        "layer": [line, _card_caption("", "right", -3), _card_caption("!", "left", 3)],
    }


def _over(state: str) -> Spec:
    """What does not fit, said under the bar's end."""
    text = "datum.over_gb > 0 ? 'over by ' + datum.over_gb + ' GB' : ''"
    pick = [{"filter": state}, *_FREE_AND_OVER, {"calculate": text, "as": "_over"}]
    encoding = {"x": {"field": "used_gb", **_X}, "text": {"field": "_over"}}
    return layer("text", encoding, pick, align="right", y=_BAR_BOTTOM + 4, baseline="top",
                 fontSize=11, fontWeight="bold", color=PALETTE["vermillion"])  # fmt: skip


def sizing_explorer() -> Explorer:
    """The live sizing explorer: choose the model, the context, the sequences, the degree, the card.

    Returns
    -------
    Explorer
    """
    state = state_filter(CONTROLS)
    return Explorer(
        title="Sizing explorer: what each GPU holds",
        description=(
            "A stacked bar of one GPU's memory in GB: weights, KV cache, DeltaNet state and "
            "what is free, against a dashed line at the card's capacity; when the choice does "
            "not fit, the bar runs past the line and says by how much. The message above gives "
            "the numbers and how many sequences of that length fit."
        ),
        controls=CONTROLS,
        rows=states(CONTROLS, _state),
        message=MESSAGE,
        chart={
            "width": 600,
            "height": _BAR_BOTTOM + 18,
            "layer": [_segments(state), _card(state), _over(state)],
        },
        numeric=(*_SHIPPED_SEGMENTS, "used_gb", "margin_gb", "most", "per_sequence_gb"),
        message_lines=4,
        compact_text=True,
    )
