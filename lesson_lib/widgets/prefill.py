"""The prefill widget: where a prompt's all-reduce sits on the alpha-beta curve.

Controls: prompt length (tokens), tensor-parallel degree and the fabric (the
lesson's fast or slow one, or a custom latency and bandwidth). The message
says which term of one all-reduce dominates and compares a decoded token's
time with a prompt token's; the picture is
:func:`lesson_lib.figures.prefill.prefill_explorer_figure`.
"""

from __future__ import annotations

import ipywidgets as widgets
from matplotlib.figure import Figure

from lesson_lib._validate import require_number
from lesson_lib.figures.prefill import prefill_explorer_figure
from lesson_lib.prefill import per_token, place_on_curve, prefill_message_bytes
from lesson_lib.specimen import FAST, GPU, MODEL, PROMPT_TOKENS, SLOW
from lesson_lib.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.units import GB, US, format_bytes, format_ratio, format_seconds

#: Fabric choices; dropdown label -> key; "custom" reads the two number fields.
FABRIC_CHOICES: tuple[tuple[str, str], ...] = (
    ("fast (NVLink-class)", "fast"),
    ("slow (PCIe-class)", "slow"),
    ("custom", "custom"),
)
_PRESETS = {"fast": FAST, "slow": SLOW}


def choose_fabric(choice: str, latency_us: float, bandwidth_gb_s: float) -> Fabric:
    """The fabric a widget setting stands for.

    Parameters
    ----------
    choice : {"fast", "slow", "custom"}
        A preset of :mod:`lesson_lib.specimen`, or custom.
    latency_us : float
        Custom latency of one small all-reduce, microseconds (> 0; a wire
        without latency has no crossover to place a message against).
    bandwidth_gb_s : float
        Custom bandwidth per direction, GB/s (decimal, > 0).

    Returns
    -------
    Fabric
        The preset, or a custom fabric in SI units.

    Raises
    ------
    ValueError
        If ``choice`` is unknown or a custom number is out of range.
    """
    if choice in _PRESETS:
        return _PRESETS[choice]
    if choice != "custom":
        raise ValueError(f"fabric must be one of fast, slow, custom; got {choice!r}")
    latency = require_number("latency_us", latency_us, strict=True, unit="us")
    bandwidth = require_number("bandwidth_gb_s", bandwidth_gb_s, strict=True, unit="GB/s")
    return Fabric(
        name=f"custom ({latency:g} us, {bandwidth:g} GB/s)",
        latency=latency * US,
        bandwidth=bandwidth * GB,
    )


def prefill_report(
    fabric: Fabric,
    n: int,
    prompt_tokens: int,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
) -> str:
    """The widget's message: which term dominates, and time per token.

    Parameters
    ----------
    fabric : Fabric
        The wire.
    n : int
        Tensor-parallel degree (>= 2).
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    model : ModelSpec, default MODEL
        The model.
    accel : Accelerator, default GPU
        One card.

    Returns
    -------
    str
        HTML: two short paragraphs.
    """
    payload = prefill_message_bytes(model, prompt_tokens)
    prompt = place_on_curve(payload, n, fabric)
    decode = place_on_curve(model.hidden_vector_bytes, n, fabric)
    pair = per_token(model, accel, fabric, n, prompt_tokens)
    ratio = prompt.ratio_to_crossover
    where = (
        f"{format_ratio(ratio, decimals=1)} above"
        if ratio >= 1
        else f"{format_ratio(1 / ratio, decimals=1)} below"
    )
    return (
        f"<p>Each of the {model.allreduces_per_token} all-reduces of the prompt carries "
        f"{prompt_tokens:,} hidden vectors = <b>{format_bytes(payload, 'MiB')}</b>, "
        f"{where} the crossover of {format_bytes(prompt.crossover_bytes, 'MB')} "
        f"(ring of {n}): <b>{prompt.bound}-bound</b>. One all-reduce costs "
        f"{format_seconds(prompt.latency_s, 'us')} of latency and "
        f"{format_seconds(prompt.bandwidth_s, 'us')} of bytes. A decoded token's "
        f"{format_bytes(model.hidden_vector_bytes, 'KiB')} message is "
        f"<b>{decode.bound}-bound</b>.</p>"
        f"<p>Per token: decode {format_seconds(pair.decode_s)}, prefill "
        f"{format_seconds(pair.prefill_s)} "
        f"({format_ratio(pair.ratio, decimals=0)} cheaper per token); the whole prompt takes "
        f"{format_seconds(pair.prefill.total_s)}, of which "
        f"{format_seconds(pair.prefill.bandwidth_s)} is bytes on the wire.</p>"
    )


def prefill_widget(*, model: ModelSpec = MODEL, accel: Accelerator = GPU) -> widgets.VBox:
    """Prompt length and fabric -> where the message sits and which term dominates.

    Parameters
    ----------
    model : ModelSpec, default MODEL
        The model.
    accel : Accelerator, default GPU
        One card.

    Returns
    -------
    LessonWidget
        Controls ``prompt_tokens``, ``n``, ``fabric``, ``latency_us`` and
        ``bandwidth_gb_s``; the last two are used when ``fabric`` is custom
        and show the preset's values otherwise.
    """
    from lesson_lib.widgets._base import LessonWidget

    style = {"description_width": "initial"}
    controls = [
        widgets.IntText(value=PROMPT_TOKENS, description="prompt (tokens)", style=style),
        widgets.Dropdown(options=[2, 4], value=4, description="GPUs (TP)", style=style),
        widgets.Dropdown(options=list(FABRIC_CHOICES), value="fast", description="fabric"),
        widgets.FloatText(
            value=FAST.latency / US, description="latency (us)", disabled=True, style=style
        ),
        widgets.FloatText(
            value=FAST.bandwidth / GB, description="bandwidth (GB/s)", disabled=True, style=style
        ),
    ]
    for control in controls:
        control.layout = widgets.Layout(width="210px")

    figure: Figure | None = None  # this widget's own figure, redrawn in place

    def render(
        prompt_tokens: int, n: int, fabric: str, latency_us: float, bandwidth_gb_s: float
    ) -> tuple[str, Figure]:
        nonlocal figure
        wire = choose_fabric(fabric, latency_us, bandwidth_gb_s)
        text = prefill_report(wire, n, prompt_tokens, model=model, accel=accel)
        figure = prefill_explorer_figure(
            wire, n, prompt_tokens, model=model, accel=accel, reuse=figure
        )
        return text, figure

    names = ["prompt_tokens", "n", "fabric", "latency_us", "bandwidth_gb_s"]
    widget = LessonWidget(
        controls,
        render,
        names,
        alt=(
            "Left: time of one all-reduce against its payload on log-log axes for the chosen "
            "fabric, with the decode and prefill messages marked and the crossover as a "
            "diamond. Right: the share of compute, latency and bandwidth in a decoded token "
            "and in a prompt token."
        ),
    )
    latency, bandwidth = controls[3], controls[4]

    def on_fabric(change: dict) -> None:
        preset = _PRESETS.get(change["new"])
        latency.disabled = bandwidth.disabled = preset is not None
        if preset is not None:
            latency.value = preset.latency / US
            bandwidth.value = preset.bandwidth / GB

    controls[2].observe(on_fabric, names="value")
    return widget
