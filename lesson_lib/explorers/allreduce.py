"""The ring stepper: N ranks and a step through a ring all-reduce of one hidden vector.

Each state reads :func:`lesson_lib.model.tensor_parallel.simulate_hidden_allreduce`: the rank by
chunk grid as :func:`lesson_lib.figures.allreduce.draw_holdings` colours it, and bars of bytes sent
so far against ``2 (N - 1) / N`` payloads. A step past a smaller ring's last shows it done.
"""

from __future__ import annotations

import functools
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, states
from lesson_lib.explorers._layers import Spec, bottom_legend, layer, lookup, nominal_scale
from lesson_lib.figures._style import PALETTE
from lesson_lib.model.collectives import allreduce_wire_bytes, ring_allreduce_factor
from lesson_lib.model.ring import RingResult
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.tensor_parallel import simulate_hidden_allreduce
from lesson_lib.model.units import KiB, format_bytes, format_count

#: Range of the ranks slider.
MIN_RANKS: int = 2
MAX_RANKS: int = 8
#: The step buttons cover every step of the largest ring, 2 (N - 1).
MAX_STEP: int = 2 * (MAX_RANKS - 1)
#: The lesson's starting point, the end of the four-rank ring's reduce-scatter.
DEFAULTS: dict[str, int] = {"n": 4, "step": 3}
#: Rings of up to this many ranks list each cell's contributors (as the figure does).
LIST_CONTRIBUTORS_UP_TO: int = 5

CONTROLS: tuple[Control, ...] = (
    Control("n", "ranks N", tuple(range(MIN_RANKS, MAX_RANKS + 1)), DEFAULTS["n"], input="range"),
    Control("step", "step", tuple(range(MAX_STEP + 1)), DEFAULTS["step"], input="radio"),
)

MESSAGE = Template(
    "N = {n}, {head}\nSent so far per rank: {so_far}, {multiple} x the payload of {payload}\n"
    "Whole all-reduce: 2(N-1)/N = {factor} x payload = {total} per rank (simulated: {sim_total})"
)

#: Phases of the step strip, in order, with their colours and legend labels.
PHASES: tuple[tuple[str, str, str], ...] = (
    ("start", "#dddddd", "start"),
    ("reduce-scatter", PALETTE["orange"], "reduce-scatter"),
    ("all-gather", PALETTE["green"], "all-gather"),
    ("past the end", "#ffffff", "past the end (shows the final state)"),
)
#: Colours of the bars and the lines beside them.
SENT_COLOR = PALETTE["sky"]
WHOLE_COLOR = PALETTE["blue"]
PAYLOAD_COLOR = PALETTE["grey"]
#: Outline of a copy that arrived in the step shown (the figure's RECEIVED_COLOR).
RECEIVED_COLOR = PALETTE["vermillion"]


def _bytes(nbytes: float) -> str:
    return f"{format_count(nbytes, decimals=2)} B ({format_bytes(nbytes, 'KiB')})"


@functools.cache
def _result(n: int) -> RingResult:
    return simulate_hidden_allreduce(MODEL, n)


def _shown_step(n: int, step: int) -> int:
    """The step whose state is drawn: ``step``, or the last one of a ring that has finished."""
    return min(step, len(_result(n).steps))


def _phase(result: RingResult, step: int) -> str:
    """Which phase the step belongs to: start, reduce-scatter, all-gather or past the end."""
    if step == 0:
        return "start"
    return "past the end" if step > len(result.steps) else result.steps[step - 1][0].phase


def _head(result: RingResult, step: int) -> str:
    """The first line's tail: where the ring is and what each rank holds."""
    n, last = result.n, len(result.steps)
    if step > last:
        return (
            f"step {step} is past the last step ({last}): the state after step {last}, "
            "every rank holding the whole sum"
        )
    where = f"after step {step} of {last}"
    if step == 0:
        return f"{where}: before any transfer each rank holds only its own partial vector"
    if step < n - 1:
        return f"{where} (reduce-scatter): each rank adds the chunk it receives to its copy"
    if step == n - 1:
        return f"{where} (reduce-scatter done): each rank holds one complete chunk of the sum"
    if step < last:
        return f"{where} (all-gather): complete chunks travel on, overwriting stale copies"
    return f"{where} (all-gather done): every rank holds the whole sum"


def _state(n: int, step: int) -> dict[str, Any]:
    result = _result(n)
    at = _shown_step(n, step)
    payload = float(sum(result.chunk_bytes))
    sent = result.bytes_sent_after(at)
    lo, hi = min(sent), max(sent)
    return {
        "head": _head(result, step),
        "so_far": _bytes(hi) if lo == hi else f"{format_count(lo)} to {_bytes(hi)}",
        "multiple": format_count(hi / payload, decimals=3),
        "payload": f"{format_count(payload)} B",
        "factor": format_count(ring_allreduce_factor(n), decimals=3),
        "total": _bytes(allreduce_wire_bytes(payload, n)),
        "sim_total": f"{format_count(max(result.bytes_sent))} B",
    }


def _cell_form(n: int) -> str:
    """The two lines over the grid: how its cells' text reads for a ring of ``n`` ranks."""
    if n <= LIST_CONTRIBUTORS_UP_TO:
        return "each cell lists the ranks whose parts\nit holds (0+1+2); all: complete"
    return (
        f"above {LIST_CONTRIBUTORS_UP_TO} ranks each cell counts the\nranks whose parts it "
        "holds (4/8); all: complete"
    )


#: ``_cell_form`` as a Vega expression of the ranks control ``n``.
CELL_FORM_EXPR: str = (
    f"n <= {LIST_CONTRIBUTORS_UP_TO} ? {_cell_form(MIN_RANKS)!r} : {_cell_form(MAX_RANKS)!r}"
)


def _cell_label(held: frozenset[int], n: int, sender: int | None) -> str:
    """A cell's text, as :func:`lesson_lib.figures.allreduce.draw_holdings` writes it."""
    k = len(held)
    text = "+".join(str(r) for r in sorted(held)) if n <= LIST_CONTRIBUTORS_UP_TO else f"{k}/{n}"
    if k == n and n > 2:
        text = "all"
    if sender is not None and n <= LIST_CONTRIBUTORS_UP_TO:
        text += f"\n\u2190r{sender}"
    return text


#: Columns of the details table (the state, then a copy's or a rank's numbers).
DETAIL_COLUMNS: tuple[str, ...] = tuple("n step rank chunk k label src kib whole".split())


def _details(n: int, step: int) -> list[dict[str, Any]]:
    """The state's marks: one row per (rank, chunk) copy, one per rank's bar ('' where unused)."""
    result = _result(n)
    whole = allreduce_wire_bytes(float(sum(result.chunk_bytes)), n)
    at = _shown_step(n, step)
    held = result.holdings[at]
    received = {(t.dst, t.chunk): t.src for t in result.steps[at - 1]} if at else {}
    blank = dict.fromkeys(DETAIL_COLUMNS, "")
    rows = []
    for rank in range(n):
        for chunk in range(n):
            sender = received.get((rank, chunk))
            cell = {
                "rank": rank,
                "chunk": chunk,
                "k": len(held[rank][chunk]),
                "label": _cell_label(held[rank][chunk], n, sender),
                "src": "" if sender is None else sender,
            }
            rows.append({**blank, "n": n, "step": step, **cell})
    for rank, nbytes in enumerate(result.bytes_sent_after(at)):
        bar = {"rank": rank, "kib": round(nbytes / KiB, 4), "whole": round(whole / KiB, 4)}
        rows.append({**blank, "n": n, "step": step, **bar})
    return rows


def _strip_values() -> list[dict[str, Any]]:
    """Every step offered, for every N, with its phase, for the step strip."""
    return [
        {"n": n, "step": s, "phase": _phase(_result(n), s)}
        for n in CONTROLS[0].values
        for s in CONTROLS[1].values
    ]


def _strip_view() -> Spec:
    """The strip of the steps offered, coloured by phase, the chosen step outlined."""
    phase = nominal_scale(
        "phase",
        [p for p, _, _ in PHASES],
        [c for _, c, _ in PHASES],
        bottom_legend(labelExpr=lookup({p: label for p, _, label in PHASES}, "datum.label"),
                      labelLimit=260),
    )  # fmt: skip
    step_axis = {"field": "step", "type": "ordinal", "axis": {"labelAngle": 0, "orient": "top"},
                 "title": "step of the all-reduce (the step buttons)"}  # fmt: skip
    return {
        "data": {"values": _strip_values()},
        "width": 540,
        "height": 26,
        "transform": [{"filter": "datum.n == n"}],
        "encoding": {"x": step_axis},
        "layer": [
            layer("rect", {"color": phase, "tooltip": [{"field": "step"}, {"field": "phase"}]},
                  stroke="#555555", strokeWidth=1),
            layer("rect", transform=[{"filter": "datum.step == step"}], fill=None,
                  stroke="black", strokeWidth=3.5),
        ],
    }  # fmt: skip


def _share_layer() -> Spec:
    """Each copy's cell, coloured by the share of the contributions it holds."""
    legend = bottom_legend(
        gradientLength=220,
        values=[0, 1],
        labelExpr="datum.value == 0 ? 'own partial only' : 'all N (complete)'",
    )
    share = {"field": "share", "type": "quantitative", "title": "contributions held",
             "scale": {"domain": [0, 1], "scheme": {"name": "cividis", "extent": [0.92, 0.08]}},
             "legend": legend}  # fmt: skip
    tooltip = [{"field": "rank"}, {"field": "chunk"}, {"field": "k", "title": "contributions"},
               {"field": "label", "title": "ranks"}]  # fmt: skip
    return layer("rect", {"color": share, "tooltip": tooltip}, stroke="white", strokeWidth=2)


def _form_layer() -> Spec:
    """The two lines over the grid, drawn down to 4 px above it: the form of the cells' text."""
    pick = [{"filter": "datum.rank == 0 && datum.chunk == 0"},
            {"calculate": CELL_FORM_EXPR, "as": "_form"}]  # fmt: skip
    at_corner = {"x": {"value": 0}, "y": {"value": 0}, "text": {"field": "_form"}}
    return layer("text", at_corner, pick, align="left", baseline="top", dy=-4 - 2 * 13,
                 fontSize=11, lineHeight=13, color="#1a1a1a", lineBreak="\n")  # fmt: skip


def _grid_view(state: str) -> Spec:
    """The rank by chunk grid of the state: shares, arrivals, the form line, the cells' text."""
    chunk = {"field": "chunk", "type": "ordinal", "title": "chunk of the vector",
             "axis": {"labelExpr": "'c' + datum.value", "labelAngle": 0}}  # fmt: skip
    text = {
        "text": {"field": "label"},
        "size": {"condition": {"test": "n <= 5", "value": 12}, "value": 10},
        "color": {"condition": {"test": "datum.k > (datum.n + 1) / 2", "value": "white"},
                  "value": "black"},
    }  # fmt: skip
    # No copy arrives at step 0: aria off keeps that empty group unnamed.
    arrivals = layer("rect", transform=[{"filter": "isValid(datum.src)"}], aria=False, fill=None,
                     stroke=RECEIVED_COLOR, strokeWidth=3.5)  # fmt: skip
    return {
        "width": 260,
        "height": 260,
        "transform": [
            {"filter": f"{state} && isValid(datum.chunk)"},
            {"calculate": "(datum.k - 1) / max(datum.n - 1, 1)", "as": "share"},
        ],
        "encoding": {"x": chunk, "y": {"field": "rank", "type": "ordinal", "title": "rank"}},
        "layer": [
            _share_layer(),
            arrivals,
            _form_layer(),
            layer("text", text, lineBreak="\n", baseline="middle"),
        ],
    }


_WHOLE_LINE, _ONE_LINE = "whole all-reduce: 2(N-1)/N x payload", "1 x payload"


def _reference_rule(line: str, y: Spec, **props: Any) -> Spec:
    """A horizontal line across the bars named ``line`` in the legend (one row of rank 0)."""
    pick = [{"filter": "datum.rank == 0"}, {"calculate": f"'{line}'", "as": "line"}]
    return layer("rule", {"y": y, "stroke": {"field": "line", "type": "nominal"}}, pick, **props)


def _bars_view(state: str, payload_kib: float) -> Spec:
    """Bars of the bytes each rank has sent so far, against the whole all-reduce and 1 payload."""
    rank = {"field": "rank", "type": "ordinal", "title": "rank", "axis": {"labelAngle": 0}}
    kib = {"field": "kib", "type": "quantitative", "title": "bytes sent so far (KiB)",
           "scale": {"domain": [0, round(2.05 * payload_kib, 4)]}}  # fmt: skip
    tooltip = [{"field": "rank"}, {"field": "kib", "title": "KiB sent"}]
    whole = _reference_rule(_WHOLE_LINE, {"field": "whole", "type": "quantitative"},
                            strokeWidth=2)  # fmt: skip
    whole["encoding"]["stroke"] = nominal_scale(
        "line", [_WHOLE_LINE, _ONE_LINE], [WHOLE_COLOR, PAYLOAD_COLOR],
        {"orient": "bottom", "direction": "vertical", "labelLimit": 260},
    )  # fmt: skip
    one = _reference_rule(_ONE_LINE, {"datum": payload_kib, "type": "quantitative"},
                          strokeWidth=1.5, strokeDash=[2, 3])  # fmt: skip
    sent = layer("bar", {"x": rank, "y": kib, "tooltip": tooltip}, color=SENT_COLOR,
                 stroke="black", strokeWidth=1)  # fmt: skip
    return {
        "width": 200,
        "height": 260,
        "transform": [{"filter": f"{state} && isValid(datum.kib)"}],
        "layer": [sent, whole, one],
    }


def _chart(payload_kib: float) -> Spec:
    state = "datum.n == n && datum.step == step"
    return {
        "vconcat": [
            _strip_view(),
            {"hconcat": [_grid_view(state), _bars_view(state, payload_kib)], "spacing": 24},
        ],
        "spacing": 14,
        "resolve": {"scale": {"color": "independent"}, "legend": {"color": "independent"}},
    }


def ring_explorer() -> Explorer:
    """The live ring stepper: choose N and step through the ring all-reduce.

    Returns
    -------
    Explorer
        Starting at the end of the four-rank ring's reduce-scatter.
    """
    rows = states(CONTROLS, _state)
    details = [d for row in rows for d in _details(row["n"], row["step"])]
    payload = float(sum(_result(DEFAULTS["n"]).chunk_bytes))
    return Explorer(
        title="Ring stepper: who holds which partial sum",
        description=(
            "A strip of the steps offered, coloured by phase (reduce-scatter, all-gather, past "
            "the end); a rank by chunk grid of the simulated ring all-reduce after the step, "
            "each copy coloured by how many ranks' contributions it holds and outlined if it "
            "arrived in that step; and bars of the bytes each rank has sent so far against "
            "2(N-1)/N times the payload. The message above gives the bytes."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart=_chart(payload / KiB),
        numeric=("n", "step"),
        message_lines=3,
        details=details,
        detail_numeric=("rank", "chunk", "k", "src", "kib", "whole"),
    )
