"""A stepper through the ring all-reduce: who holds which partial sum, bytes so far."""

from __future__ import annotations

import ipywidgets as widgets
from matplotlib.figure import Figure

from lesson_lib._validate import require_int
from lesson_lib.collectives import allreduce_wire_bytes, ring_allreduce_factor
from lesson_lib.figures.ring import ring_state_figure
from lesson_lib.ring import RingResult
from lesson_lib.specimen import MODEL
from lesson_lib.specs import ModelSpec
from lesson_lib.tensor_parallel import simulate_hidden_allreduce
from lesson_lib.units import format_bytes, format_count
from lesson_lib.widgets._base import LessonWidget

#: Range of the ranks slider.
MIN_RANKS: int = 2
MAX_RANKS: int = 8


def _bytes(nbytes: float) -> str:
    return f"{format_count(nbytes, decimals=2)} B ({format_bytes(nbytes, 'KiB')})"


def _phase_note(result: RingResult, step: int) -> str:
    n, last = result.n, len(result.steps)
    if step == 0:
        return "Before any transfer: every rank holds only its own partial vector."
    if step < n - 1:
        return "Reduce-scatter: each rank adds the chunk it receives to its own copy."
    if step == n - 1:
        return (
            "Reduce-scatter done: each rank holds one complete chunk of the sum "
            "and has sent (N-1)/N of the payload."
        )
    if step < last:
        return "All-gather: complete chunks travel on round the ring, overwriting stale copies."
    return "Done: every rank holds the whole sum."


def ring_message(result: RingResult, step: int) -> str:
    """HTML summary of a ring all-reduce after ``step`` steps.

    Parameters
    ----------
    result : RingResult
        A simulated ring all-reduce.
    step : int
        From 0 to ``len(result.steps)``.

    Returns
    -------
    str
        HTML: the phase, the bytes each rank has sent so far (from the
        simulator) and the whole all-reduce's ``2(N-1)/N`` times the payload.

    Raises
    ------
    ValueError
        If ``step`` is out of range.
    """
    last = len(result.steps)
    step = require_int("step", step, minimum=0, maximum=last)
    n = result.n
    payload = float(sum(result.chunk_bytes))
    sent = result.bytes_sent_after(step)
    lo, hi = min(sent), max(sent)
    so_far = _bytes(hi) if lo == hi else f"{_bytes(lo)} to {_bytes(hi)}"
    factor = format_count(ring_allreduce_factor(n), decimals=3)
    total = allreduce_wire_bytes(payload, n)
    sim_total = max(result.bytes_sent)
    return (
        f"<p><b>N = {n} ranks, after step {step} of {last}.</b> "
        f"{_phase_note(result, step)}</p>"
        f"<p>Bytes sent so far by each rank: <b>{so_far}</b>, "
        f"{format_count(hi / payload, decimals=3)} x the payload of {_bytes(payload)}.<br>"
        f"Whole all-reduce: 2(N-1)/N x payload = {factor} x payload = "
        f"<b>{_bytes(total)}</b> per rank. The simulated ring, whose chunks hold whole "
        f"elements, sends {_bytes(sim_total)} per rank at most.</p>"
    )


def ring_stepper_widget(n: int = 4, step: int = 3, model: ModelSpec = MODEL) -> LessonWidget:
    """Step through a ring all-reduce of one hidden vector over ``n`` ranks.

    Two sliders: the number of ranks N (2 to 8) and the step (0 to
    ``2 (N - 1)``; its maximum follows N). The picture shows which rank
    holds which partial sum after that step and the bytes each rank has sent
    so far; the message gives the bytes against ``2(N-1)/N`` times the
    payload. Everything comes from :func:`lesson_lib.ring.simulate_ring_allreduce`.

    Parameters
    ----------
    n : int, default 4
        Initial number of ranks, from 2 to 8.
    step : int, default 3
        Initial step, from 0 to ``2 (n - 1)``.
    model : ModelSpec, default the specimen
        Whose hidden vector is summed.

    Returns
    -------
    LessonWidget
        Controls ``"n"`` and ``"step"``, a message and a PNG picture.

    Raises
    ------
    ValueError, TypeError
        If the initial ``n`` or ``step`` is out of range.
    """
    n = require_int("n", n, minimum=MIN_RANKS, maximum=MAX_RANKS)
    step = require_int("step", step, minimum=0, maximum=2 * (n - 1))
    ranks = widgets.IntSlider(
        value=n, min=MIN_RANKS, max=MAX_RANKS, description="ranks N", continuous_update=False
    )
    steps = widgets.IntSlider(value=step, min=0, max=2 * (n - 1), description="step")

    def follow_ranks(change: dict) -> None:
        # Registered before LessonWidget's own observers, so the step slider's
        # range is right (and its value clamped) before anything is drawn.
        steps.max = 2 * (int(change["new"]) - 1)

    ranks.observe(follow_ranks, names="value")
    results: dict[int, RingResult] = {}  # one simulation per N, private to this widget
    figure: Figure | None = None  # this widget's own figure, redrawn in place

    def render(n: int, step: int) -> tuple[str, Figure]:
        nonlocal figure
        n = require_int("n", n, minimum=MIN_RANKS, maximum=MAX_RANKS)
        if n not in results:
            results[n] = simulate_hidden_allreduce(model, n)
        result = results[n]
        step = require_int("step", step, minimum=0, maximum=len(result.steps))
        figure = ring_state_figure(result, step, reuse=figure)
        return ring_message(result, step), figure

    return LessonWidget(
        [ranks, steps],
        render,
        ["n", "step"],
        alt=(
            "Ring all-reduce stepper: a rank by chunk grid coloured by how many ranks' "
            "contributions each copy holds, and bars of the bytes each rank has sent so far "
            "against 2(N-1)/N times the payload."
        ),
    )
