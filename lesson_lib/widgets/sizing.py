"""The sizing widget: does this many sequences of this length fit on these cards?

Four controls (context length, concurrent sequences, tensor-parallel degree,
card size) drive one per-GPU stacked bar from
:func:`lesson_lib.figures.sizing.memory_bars_figure` and a message that
says what fits, or by how many bytes it does not.
"""

from __future__ import annotations

import dataclasses
import html

import ipywidgets as widgets
from matplotlib.figure import Figure

from lesson_lib._validate import require_int, require_number
from lesson_lib.figures.sizing import memory_bars_figure
from lesson_lib.memory import kv_share, max_sequences, memory_budget
from lesson_lib.specimen import GPU, MODEL
from lesson_lib.specs import Accelerator, ModelSpec
from lesson_lib.units import GB, format_bytes, format_count
from lesson_lib.widgets._base import LessonWidget

#: Tensor-parallel degrees offered by the widget.
TP_OPTIONS: tuple[int, ...] = (1, 2, 4, 8)
#: Card sizes offered, GB (decimal); smallest, largest, step.
CARD_GB_RANGE: tuple[float, float, float] = (16, 192, 0.01)
#: Granularity of the context slider, tokens (also its minimum).
CONTEXT_STEP: int = 1024
#: Most concurrent sequences the slider offers.
MAX_SEQUENCES: int = 128

_STYLE = {"description_width": "initial"}


def _gb(nbytes: float) -> str:
    return format_bytes(nbytes, "GB")


def sizing_message(
    model: ModelSpec, accel: Accelerator, n: int, context_tokens: int, sequences: int
) -> str:
    """The widget's verdict as HTML: what each GPU holds and whether it fits.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    n : int
        Tensor-parallel degree (>= 1).
    context_tokens : int
        Tokens per sequence, 1 to ``model.max_context``.
    sequences : int
        Concurrent sequences (>= 0).

    Returns
    -------
    str
        One paragraph; when the request does not fit it starts with
        "Does not fit" and gives the shortfall per GPU.
    """
    budget = memory_budget(model, accel, n, context_tokens, sequences)
    most = max_sequences(model, accel, n, context_tokens)
    who = "The GPU" if n == 1 else f"Each of the {n} GPUs"
    verb = "holds" if budget.fits else "would need"
    held = (
        f"{who} {verb} {_gb(budget.weights_bytes)} of weights, {_gb(budget.kv_bytes)} of "
        f"KV cache and {_gb(budget.state_bytes)} of DeltaNet state: "
        f"{_gb(budget.used_bytes)} of the card's {_gb(budget.capacity_bytes)}."
    )
    plural = "sequence fits" if most == 1 else "sequences fit"
    most_text = f"At most {most} {plural} at {format_count(context_tokens)} tokens each."
    if budget.weights_bytes > budget.capacity_bytes:
        verdict = (
            '<b style="color:#D55E00">Does not fit:</b> each GPU is short by '
            f"{_gb(budget.shortfall_bytes)}, and the weights alone "
            f"({_gb(budget.weights_bytes)} per GPU) are larger than the card."
        )
    elif not budget.fits:
        verdict = (
            '<b style="color:#D55E00">Does not fit:</b> each GPU is short by '
            f"{_gb(budget.shortfall_bytes)}. {most_text}"
        )
    else:
        verdict = f"<b>Fits</b>, with {_gb(budget.free_bytes)} free per GPU. {most_text}"
    note = ""
    if kv_share(model, n) * n > 1:
        note = (
            f" Note: TP = {n} is more than the model's {model.num_kv_heads} KV heads, so each "
            "GPU still keeps a whole head and the KV cache stops shrinking."
        )
    return f"<p>{verdict} {html.escape(held)}{html.escape(note)}</p>"


def sizing_widget(
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    *,
    context_tokens: int | None = None,
    sequences: int = 1,
    n: int = 1,
    card_gb: float | None = None,
) -> LessonWidget:
    """Controls for context, sequences, TP degree and card size; a bar and a verdict.

    Parameters
    ----------
    model : ModelSpec, default the specimen
        The model.
    accel : Accelerator, default the specimen's 80 GB card
        The card; its memory is replaced by the card-size control.
    context_tokens : int, optional
        Initial tokens per sequence, :data:`CONTEXT_STEP` to
        ``model.max_context`` (the slider moves in steps of
        :data:`CONTEXT_STEP`); default the full context.
    sequences : int, default 1
        Initial number of concurrent sequences, 0 to :data:`MAX_SEQUENCES`.
    n : int, default 1
        Initial tensor-parallel degree, one of :data:`TP_OPTIONS`.
    card_gb : float, optional
        Initial card memory in GB (10**9 bytes); default ``accel``'s.

    Returns
    -------
    LessonWidget
        Controls named ``context_tokens``, ``sequences``, ``n``, ``card_gb``.

    Raises
    ------
    ValueError
        If an initial value is outside its control's range.
    """
    tokens = model.max_context if context_tokens is None else context_tokens
    tokens = require_int("context_tokens", tokens, minimum=CONTEXT_STEP, maximum=model.max_context)
    sequences = require_int("sequences", sequences, minimum=0, maximum=MAX_SEQUENCES)
    if n not in TP_OPTIONS:
        raise ValueError(f"n must be one of {TP_OPTIONS}, got {n!r}")
    low, high, step = CARD_GB_RANGE
    card = accel.memory_bytes / GB if card_gb is None else card_gb
    card = require_number("card_gb", card, minimum=low, maximum=high, unit="GB")
    controls = [
        widgets.IntSlider(
            value=tokens,
            min=CONTEXT_STEP,
            max=model.max_context,
            step=CONTEXT_STEP,
            description="context (tokens)",
            readout_format=",d",
            style=_STYLE,
            continuous_update=False,
        ),
        widgets.IntSlider(
            value=sequences,
            min=0,
            max=MAX_SEQUENCES,
            description="sequences",
            style=_STYLE,
            continuous_update=False,
        ),
        widgets.Dropdown(options=list(TP_OPTIONS), value=n, description="TP degree", style=_STYLE),
        widgets.FloatSlider(
            value=round(card, 2),
            min=low,
            max=high,
            step=step,
            readout_format=".2f",
            description="card (GB usable)",
            style=_STYLE,
            continuous_update=False,
        ),
    ]

    figure: Figure | None = None  # this widget's own figure, redrawn in place

    def render(context_tokens: int, sequences: int, n: int, card_gb: float) -> tuple[str, Figure]:
        nonlocal figure
        card_gb = require_number("card_gb", card_gb, minimum=low, maximum=high, unit="GB")
        one_card = dataclasses.replace(accel, memory_bytes=card_gb * GB)
        budget = memory_budget(model, one_card, n, context_tokens, sequences)
        label = "the GPU" if n == 1 else f"each of {n} GPUs"
        figure = memory_bars_figure(
            [budget],
            [f"{label}\n{sequences} x {format_count(context_tokens)} tokens"],
            width=5.0,
            height=3.4,
            layout="fixed",
            reuse=figure,
        )
        return sizing_message(model, one_card, n, context_tokens, sequences), figure

    return LessonWidget(
        controls,
        render,
        names=("context_tokens", "sequences", "n", "card_gb"),
        alt=(
            "Stacked bar of one GPU's memory (weights, KV cache, DeltaNet state, free) "
            "against the card's capacity for the chosen context, sequences, TP degree "
            "and card size."
        ),
    )
