"""The cluster explorer: a model, GPUs per node, nodes, TP, PP and EP, checked and priced.

Every state is one :func:`lesson_lib.model.cluster_planner.plan_cluster` call on the
chosen model (the specimen, or the Qwen3-235B-A22B mixture of experts), the
lesson's card, NVLink-class fabric inside a node and assumed network between
nodes. One control sets the size of the group that splits each layer: TP for
the dense specimen, EP for the mixture of experts (``plan_cluster`` places an
MoE by EP with TP 1 and PP 1 and data-parallel attention; TP for an MoE model
is compared with EP in the experts explorer, and PP with EP is not placed,
which the message says). A layout that cannot exist says why in
``plan_cluster``'s words and is not priced: no time per token, no
throughput, no GPUs drawn, only the list of its problems under the node
boxes.

The chart keeps the meaning of :func:`lesson_lib.figures.cluster.layout_figure`:
nodes as boxes, GPUs coloured by pipeline stage (idle ones left blank), each
tensor-parallel or expert-parallel group outlined (green inside a node, dashed vermillion when
split by the network), pipeline hand-offs as arrows (thicker across the
network), dashed arcs between data-parallel replicas on different nodes, and
the network band under the nodes.
"""

from __future__ import annotations

import functools
import json
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from lesson_lib.explorers._base import Control, Explorer, Template, csv_data, states
from lesson_lib.figures._style import PALETTE, PHONE_TEXT_FLOOR_PX
from lesson_lib.figures.cluster import STAGE_COLORS, TP_NETWORK_COLOR, TP_NVLINK_COLOR
from lesson_lib.model.cluster_plan import ClusterPlan, GpuSlot
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.units import format_bytes, format_count, format_seconds

#: The models offered, by key: the specimen and one mixture of experts whose
#: 128 experts fit EP 8 on one node of eight cards.
MODELS: dict[str, ModelSpec] = {"specimen": MODEL, "qwen3_235b": PRESETS["Qwen3-235B-A22B"]}
MODEL_LABELS: tuple[str, ...] = (
    f"{MODEL.name}, dense (the specimen)",
    f"{MODELS['qwen3_235b'].name}, MoE of {MODELS['qwen3_235b'].num_experts} experts",
)

#: Values offered: the candidate layouts' sizes, up to 8 GPUs per node and 4
#: nodes, with TP 3 and PP 3 to show why some cuts are refused.
GPUS_PER_NODE_VALUES: tuple[int, ...] = (1, 2, 4, 8)
NODE_VALUES: tuple[int, ...] = (1, 2, 3, 4)
#: Degrees of the group that splits each layer, TP for the dense model, EP for
#: the MoE: for the MoE 2 and 4 are too few GPUs for its weights, 3 does not
#: divide its experts, 8 fills one node of eight, 16 and 32 cross the network.
GROUP_VALUES: tuple[int, ...] = (1, 2, 3, 4, 8, 16, 32)
PP_VALUES: tuple[int, ...] = (1, 2, 3, 4)
#: The lesson's layout, two nodes of four GPUs with TP 4 inside each and PP 2 across.
DEFAULTS: dict[str, int | str] = {
    "model": "specimen",
    "gpus_per_node": 4,
    "nodes": 2,
    "group": 4,
    "pp": 2,
}

CONTROLS: tuple[Control, ...] = (
    Control("model", "model", tuple(MODELS), DEFAULTS["model"], MODEL_LABELS, input="radio"),
    Control(
        "gpus_per_node",
        "GPUs per node",
        GPUS_PER_NODE_VALUES,
        DEFAULTS["gpus_per_node"],
        input="radio",
    ),
    Control("nodes", "nodes", NODE_VALUES, DEFAULTS["nodes"], input="radio"),
    Control("group", "TP (dense) or EP (MoE)", GROUP_VALUES, DEFAULTS["group"], input="radio"),
    Control("pp", "PP", PP_VALUES, DEFAULTS["pp"], input="radio"),
)

MESSAGE = Template(
    (
        "{model_name}",
        ", ",
        "{gpus}",
        " (",
        "{nodes}",
        " x ",
        "{gpus_per_node}",
        "), ",
        "{degrees}",
        ": ",
        "{verdict}",
        "\n",
        "{priced}",
    )
)
#: The message's last line for a layout that is not priced.
NOT_PRICED = "Nothing priced: this layout cannot be built."
#: Widest line of the message and of the list under the diagram, characters.
LINE_WIDTH: int = 104

#: Text colour of a problem in the list (the explorers' error colour, AA on white).
PROBLEM_COLOR = "#a14a00"

# The diagram's geometry, in GPU cells (the figure's).
_CELL = 1.0  # one GPU cell
_GPU = 0.78  # drawn square inside the cell
_PAD = 0.35  # node box padding
_FOOT = 0.55  # extra room at the bottom of a node box for its name
_GAP = 1.3  # between node boxes
_MAX_COLS = 4
_BAND = -_PAD - _FOOT - 0.9  # top of the network band
#: The diagram's width in pixels.
VIEW_WIDTH = 640
#: The diagram's height in pixels.
VIEW_HEIGHT = 250
#: The diagram's width on a phone, pixels: a 390 px phone's explorer column
#: (340 px in Chromium) less the chart's padding. There each cluster size is
#: drawn again at the zoom this width allows, text at its own size.
PHONE_WIDTH = 320
#: Smallest text the diagram draws on a phone, pixels: the figures' phone floor.
PHONE_TEXT_PX: float = PHONE_TEXT_FLOOR_PX
#: The chart's parameter holding the phone's move of the wide view's pixels,
#: ``[kx, bx, ky, by]`` (x in the x scale's domain, 0..VIEW_WIDTH), and the
#: one saying the chart is drawn on a phone (``tools/site/explorers.js`` sets it).
VIEW_TRANSFORM = "view_t"
PHONE_PARAM = "phone"
#: Width of a GPU label's character, in ems: wide enough for "TP", "S", "R"
#: and digits in a sans-serif face (Helvetica's T is 0.61 em, R 0.72, digits 0.56).
LABEL_EM = 0.62
#: Room a GPU label keeps to the edges of its square, pixels, across and down
#: (its group's outline is drawn just outside the square).
LABEL_MARGIN_PX = 3
#: Size of the network band's label, pixels.
BAND_TEXT_PX = 11
#: Side of a GPU's square, pixels, below which a phone leaves out "idle"
#: (four letters of PHONE_TEXT_PX text are about 14 px wide).
IDLE_ROOM_PX = 16
#: The most pixels per GPU cell; each cluster size is drawn as large as fits, up to this.
ZOOM_MAX = 60.0
#: Pixels at the bottom of the view kept for the key of pipeline stages.
STAGE_KEY = 24
#: Tallest arc over the GPUs (its control point's height), in cells.
_ARC_MAX = 2.0


def _cols(gpus_per_node: int) -> int:
    return min(gpus_per_node, _MAX_COLS)


def _rows(gpus_per_node: int) -> int:
    return math.ceil(gpus_per_node / _cols(gpus_per_node))


def _width(gpus_per_node: int, nodes: int) -> float:
    return nodes * (_cols(gpus_per_node) * _CELL + 2 * _PAD) + (nodes - 1) * _GAP


@functools.cache
def _zoom(g: int, nodes: int, width: float = VIEW_WIDTH) -> tuple[float, float, float]:
    """Pixels per cell and the offsets that centre a cluster of this size in a view ``width`` wide."""
    left, right = -0.2, _width(g, nodes) + 0.2
    bottom = _BAND - 0.6 if nodes > 1 else -_PAD - _FOOT - 0.2
    top = _rows(g) * _CELL + _ARC_MAX / 2 + 0.1  # room for the arcs over the GPUs
    height = VIEW_HEIGHT - STAGE_KEY
    zoom = min(ZOOM_MAX, width / (right - left), height / (top - bottom))
    return (
        zoom,
        width / 2 - zoom * (left + right) / 2,
        STAGE_KEY + height / 2 - zoom * (bottom + top) / 2,
    )


def phone_transform(g: int, nodes: int) -> tuple[float, float, float]:
    """How the phone's drawing of a cluster size follows from the wide one's pixels.

    Both views draw the same layout in cells, ``pixel = offset + zoom * cell``,
    so a wide pixel ``p`` lands at ``k * p + b`` on the phone, with ``k`` the
    ratio of the zooms and ``b = offset_phone - k * offset_wide``, one ``k``
    for both axes so nothing is stretched.

    Parameters
    ----------
    g : int
        GPUs per node.
    nodes : int
        Nodes.

    Returns
    -------
    tuple of float
        ``k``, ``b`` along x and ``b`` along y, in pixels of the phone's view.
    """
    zoom, ox, oy = _zoom(g, nodes)
    phone_zoom, phone_ox, phone_oy = _zoom(g, nodes, PHONE_WIDTH)
    k = phone_zoom / zoom
    return k, phone_ox - k * ox, phone_oy - k * oy


def _label_fits() -> list[dict[str, Any]]:
    """``shown_label``: as much of a GPU's label as fits inside its square on a phone.

    A line is at most ``LABEL_EM`` ems a character wide and Vega's lines are
    ``font + 2`` pixels apart, with ``LABEL_MARGIN_PX`` to spare across and
    down; the square is ``_GPU`` cells at the view's zoom. A phone leaves out
    what does not fit rather than shrink it: the stage and replica line first
    (the stage is also the GPU's colour), then the rank. The wide view shows
    the whole label.
    """
    parts = "split(datum.label, '|')"
    square = f"{_GPU} * toNumber(datum._cell_zoom) * {VIEW_TRANSFORM}[2]"

    def fits(lines: int, chars: str) -> str:
        width = f"{LABEL_EM} * datum.font * {chars} + {LABEL_MARGIN_PX}"
        return f"{square} >= {width} && {square} >= {lines} * (datum.font + 2) + {LABEL_MARGIN_PX}"

    both = fits(2, f"max(length({parts}[0]), length({parts}[1] || ''))")
    first = fits(1, f"length({parts}[0])")
    return [
        {"calculate": f"length({parts}) == 1 ? {first} : {both}", "as": "whole_fits"},
        {
            "calculate": f"!{PHONE_PARAM} || datum.whole_fits ? datum.label : "
            f"({first} ? {parts}[0] : '')",
            "as": "shown_label",
        },
    ]


def view_transforms() -> list[list[list[float]]]:
    """:func:`phone_transform` of every cluster size as the chart reads it, in the x scale's domain.

    Returns
    -------
    list of list of list of float
        ``[kx, bx, ky, by]`` for each GPUs per node (rows, in
        ``GPUS_PER_NODE_VALUES`` order) and nodes (columns): x in the x
        scale's domain (0..VIEW_WIDTH drawn PHONE_WIDTH wide), y in pixels.
    """
    to_domain = VIEW_WIDTH / PHONE_WIDTH
    table = []
    for g in GPUS_PER_NODE_VALUES:
        row = []
        for nodes in NODE_VALUES:
            k, bx, by = phone_transform(g, nodes)
            row.append(
                [round(k * to_domain, 5), round(bx * to_domain, 3), round(k, 5), round(by, 3)]
            )
        table.append(row)
    return table


def chart_params() -> tuple[dict[str, Any], ...]:
    """The chart's parameters besides the controls: :data:`PHONE_PARAM` and :data:`VIEW_TRANSFORM`.

    Returns
    -------
    tuple of dict
        Vega-Lite variable parameters: ``phone`` (False; True on a phone)
        and ``view_t``, the identity, or on a phone the current cluster
        size's row of :func:`view_transforms`.
    """
    pick = (
        f"{json.dumps(view_transforms(), separators=(',', ':'))}"
        f"[indexof({list(GPUS_PER_NODE_VALUES)}, gpus_per_node)]"
        f"[indexof({list(NODE_VALUES)}, nodes)]"
    )
    return (
        {"name": PHONE_PARAM, "value": False},
        {"name": VIEW_TRANSFORM, "expr": f"{PHONE_PARAM} ? {pick} : [1, 0, 1, 0]"},
    )


def _at(g: int, nodes: int, x: float, y: float) -> tuple[float, float]:
    """A point of the layout (in cells, y up) in the view's pixels (y up)."""
    zoom, ox, oy = _zoom(g, nodes)
    return round(ox + zoom * x, 1), round(oy + zoom * y, 1)


def refusal(model: ModelSpec, pp: int) -> str | None:
    """Why the explorer does not place this choice at all, or None when it does.

    Parameters
    ----------
    model : ModelSpec
        The chosen model.
    pp : int
        The chosen pipeline degree.

    Returns
    -------
    str or None
        A sentence for PP on a mixture of experts, which ``plan_cluster``
        places by EP with TP 1 and PP 1.
    """
    if model.is_moe and pp > 1:
        return (
            f"PP is not modelled with EP: {model.name} is placed by EP alone with "
            "data-parallel attention; set PP 1"
        )
    return None


def degrees_of(state: dict[str, Any]) -> dict[str, int]:
    """The ``tp``, ``pp`` and ``ep`` a state asks ``plan_cluster`` for.

    Parameters
    ----------
    state : dict
        Holds each control's value under its name.

    Returns
    -------
    dict of str to int
        The group is TP for a dense model (EP 1) and EP for an MoE (TP 1).
    """
    moe = MODELS[state["model"]].is_moe
    group = state["group"]
    return {"tp": 1 if moe else group, "pp": state["pp"], "ep": group if moe else 1}


@functools.cache
def _plan(model: str, gpus_per_node: int, nodes: int, tp: int, pp: int, ep: int) -> ClusterPlan:
    spec = MODELS[model]
    return plan_cluster(
        spec, GPU, gpus_per_node, nodes, tp, pp, intra=FAST, inter=INTER_NODE, ep=ep
    )


def plan_at(state: dict[str, Any]) -> ClusterPlan | None:
    """The plan of a state (a row or a dict of the controls' values); None if not placed.

    Parameters
    ----------
    state : dict
        Holds each control's value under its name.

    Returns
    -------
    ClusterPlan or None
        ``plan_cluster``'s plan, or None when :func:`refusal` refuses the choice.
    """
    if refusal(MODELS[state["model"]], state["pp"]):
        return None
    d = degrees_of(state)
    return _plan(state["model"], state["gpus_per_node"], state["nodes"], d["tp"], d["pp"], d["ep"])


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _wrap(text: str, first: str = "") -> list[str]:
    return textwrap.wrap(text, LINE_WIDTH, initial_indent=first, break_on_hyphens=False)


def _verdict(plan: ClusterPlan) -> str:
    """Valid or not, then the first problem, or else the first flag, in plan_cluster's words."""
    if plan.problems:
        listed = _count(len(plan.problems), "problem")
        lines = [f"cannot exist ({listed}, all listed below)"]
        lines += _wrap(plan.problems[0], "Problem: ")
        return "\n".join(lines)
    weights = (
        f"weights {format_bytes(plan.weights_per_gpu_bytes, 'GB').removesuffix(' GB')} of "
        f"{format_bytes(plan.accel.memory_bytes, 'GB')} per GPU"
    )
    if not plan.flags:
        return f"valid; {weights}"
    lines = [f"valid, {_count(len(plan.flags), 'flag')} below; {weights}"]
    return "\n".join(lines + _wrap(plan.flags[0], "Flag: "))


def _one_parts(plan: ClusterPlan) -> str:
    """Where one sequence's time goes: the TP all-reduces or EP all-to-alls, the PP hand-offs."""
    if plan.ep > 1:
        where = "across nodes" if plan.ep_crosses_nodes else "on NVLink"
        return (
            f"{plan.step.collectives} EP all-to-alls {format_seconds(plan.step.communication_s, 'ms')}"
            f" {where}, {format_bytes(plan.step.wire_bytes, 'MiB')} from the busiest GPU"
        )
    if plan.tp == 1:
        tp = "no TP all-reduces"
    else:
        where = "across nodes" if plan.tp_crosses_nodes else "on NVLink"
        tp = f"TP all-reduces {format_seconds(plan.step.communication_s, 'ms')} {where}"
    if plan.pp == 1:
        return tp
    sends = format_seconds(plan.pp_send_s, "us", decimals=1)
    hand_offs = _count(plan.pp - 1, "PP send")
    return f"{tp}; {hand_offs} {sends}, {plan.pp_network_boundaries} across nodes"


def _batched(plan: ClusterPlan) -> str:
    if plan.batch == 0:
        return "No full-length sequence fits beside the weights, so nothing is decoded"
    fit = "" if plan.batch == plan.sequences_per_replica else f" ({plan.sequences_per_replica} fit)"
    replica = "EP group" if plan.ep > 1 else "replica"
    return (
        f"Batched, {_count(plan.batch, 'full-length sequence')} per {replica}{fit}: "
        f"{format_seconds(plan.batched_token_time_s, 'ms')} a token each, "
        f"{format_count(plan.tokens_per_s_total)} tokens/s from {_count(plan.dp, replica)}"
    )


def _priced(plan: ClusterPlan) -> str:
    """The message's last lines: one sequence's time and the batched throughput."""
    one = f"One sequence: {format_seconds(plan.token_time_s, 'ms')} per token ({_one_parts(plan)})"
    return f"{one}\n{_batched(plan)}"


def _state(**state: Any) -> dict[str, Any]:
    model = MODELS[state["model"]]
    gpus = _count(state["gpus_per_node"] * state["nodes"], "GPU")
    plan = plan_at(state)
    if plan is None:
        degrees = f"EP {state['group']} x PP {state['pp']}"
        return {"model_name": model.name, "gpus": gpus, "dp": -1, "degrees": degrees,
                "verdict": "not placed: PP is not modelled with EP; set PP 1",
                "priced": NOT_PRICED}  # fmt: skip
    if plan.ep > 1:
        degrees = f"EP {plan.ep} x DP {plan.dp}"
    else:
        degrees = f"TP {plan.tp} x PP {plan.pp} x DP {plan.dp}"
    priced = NOT_PRICED if plan.problems else _priced(plan)
    return {"model_name": model.name, "gpus": gpus, "dp": plan.dp, "degrees": degrees,
            "verdict": _verdict(plan), "priced": priced}  # fmt: skip


# ------------------------------------------------------------------ the diagram
#: Kinds of line in the list under the diagram (``note_kind`` of :attr:`DiagramTables.notes`).
PROBLEM, FLAG, NOTHING = "problem", "flag", "none"


def _r(value: float) -> float:
    return round(value, 3)


def _node_x(g: int, node: int) -> float:
    return node * (_cols(g) * _CELL + 2 * _PAD + _GAP)


def _cell(g: int, node: int, slot: int) -> tuple[float, float]:
    """Lower-left corner of a GPU cell, before centring; row 0 is the top row."""
    cols = _cols(g)
    col, row = slot % cols, slot // cols
    return _node_x(g, node) + _PAD + col * _CELL, (_rows(g) - 1 - row) * _CELL


def _center(g: int, slots: Sequence[GpuSlot]) -> tuple[float, float]:
    points = [_cell(g, s.node, s.slot) for s in slots]
    return (
        sum(p[0] for p in points) / len(points) + _CELL / 2,
        sum(p[1] for p in points) / len(points) + _CELL / 2,
    )


def _edge(g: int, slots: Sequence[GpuSlot], side: str) -> tuple[float, float]:
    """Middle of the ``"top"``, ``"left"`` or ``"right"`` edge of a group's cells."""
    x, y = _center(g, slots)
    xs = [_cell(g, s.node, s.slot)[0] for s in slots]
    ys = [_cell(g, s.node, s.slot)[1] for s in slots]
    if side == "left":
        return min(xs), y
    if side == "right":
        return max(xs) + _CELL, y
    return x, max(ys) + _CELL


def _arc(a: tuple[float, float], b: tuple[float, float], rad: float) -> list[tuple[float, float]]:
    """The figure's ``arc3`` connection as three points: ends and the curve's control point.

    The chart draws them with basis interpolation, a curve from ``a`` to ``b``
    pulled towards the control point; ``rad`` 0 is a straight line.
    """
    if rad == 0:
        return [a, b]
    (x1, y1), (x2, y2) = a, b
    chord = math.hypot(x2 - x1, y2 - y1)
    rad = math.copysign(min(abs(rad), _ARC_MAX / chord), rad)
    return [a, ((x1 + x2) / 2 + rad * (y2 - y1), (y1 + y2) / 2 - rad * (x2 - x1)), b]


def _pp_route(
    g: int, here: Sequence[GpuSlot], there: Sequence[GpuSlot]
) -> list[tuple[float, float]]:
    """A hand-off's route: straight between side-by-side groups, else an arc (the figure's)."""
    same_row = len({_cell(g, s.node, s.slot)[1] for s in [*here, *there]}) == 1
    if same_row and here[0].node < there[0].node:
        return _arc(_edge(g, here, "right"), _edge(g, there, "left"), 0.0)
    a, b = _edge(g, here, "top"), _edge(g, there, "top")
    if abs(a[0] - b[0]) < _CELL:  # stacked in one node: loop out on the right
        return _arc(_edge(g, here, "right"), _edge(g, there, "right"), -0.6)
    return _arc(a, b, -0.3)


def _gpu_label(plan: ClusterPlan, s: GpuSlot) -> str:
    """A GPU's text, lines split by ``|``: its TP or EP rank, then its stage and replica if any."""
    second = [f"S{s.stage}"] if plan.pp > 1 else []
    second += [f"R{s.replica}"] if plan.dp > 1 else []
    rank = f"EP{s.tp_rank}" if plan.ep > 1 else f"TP{s.tp_rank}"
    return rank + ("|" + " ".join(second) if second else "")


def note_paragraphs(state: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The list under the diagram: every problem, then every flag, each wrapped into lines.

    Parameters
    ----------
    state : dict
        Holds each control's value under its name.

    Returns
    -------
    list of (str, list of str)
        :data:`PROBLEM`, :data:`FLAG` or :data:`NOTHING`, and the lines of
        one problem or flag; a choice the explorer does not place has one
        problem, its :func:`refusal`.
    """
    plan = plan_at(state)
    if plan is None:
        why = refusal(MODELS[state["model"]], state["pp"])
        return [(PROBLEM, _wrap(f"{why}.", "Not placed: "))]
    paragraphs = [(PROBLEM, _wrap(p, "Problem: ")) for p in plan.problems]
    paragraphs += [(FLAG, _wrap(f, "Flag: ")) for f in plan.flags]
    return paragraphs or [(NOTHING, ["No problems and no flags."])]


def notes_of(state: dict[str, Any]) -> list[tuple[str, str]]:
    """The list under the diagram line by line: kind and line (:func:`note_paragraphs`).

    Parameters
    ----------
    state : dict
        Holds each control's value under its name.

    Returns
    -------
    list of (str, str)
        :data:`PROBLEM`, :data:`FLAG` or :data:`NOTHING`, and the line's text.
    """
    return [(kind, line) for kind, lines in note_paragraphs(state) for line in lines]


@dataclass
class DiagramTables:
    """The diagram's data: one table per kind of mark, rows keyed by their state.

    Every row starts with the controls' values (``model``, ``gpus_per_node``,
    ``nodes``, ``group``, ``pp``) of the state it belongs to; the chart keeps the rows of
    the state chosen. A cell is a GPU's index in its cluster, ``node x
    gpus_per_node + slot``; places are pixels of the view (y up).

    Attributes
    ----------
    gpus : list of dict
        One row per placed GPU: ``cell``, ``stage`` (``"S0"`` ...) and
        ``label`` (its text, lines split by ``|``).
    stages : list of dict
        The pipeline stages the GPUs belong to, for the key under the
        diagram: ``stage``, in order.
    tp_outlines : list of dict
        One row per run of a TP group's GPUs along one row of a node:
        ``first_cell``, ``last_cell`` and ``across_nodes`` (1 when the group
        is split by the network, else 0).
    tp_links : list of dict
        The line joining two pieces of a TP group split by the network:
        from ``x``, ``y`` to ``x2``, ``y2``.
    pp_paths : list of dict
        The points of each pipeline hand-off: ``path`` (which hand-off),
        ``point`` (its order along the path), ``across_nodes`` (1 when the
        hand-off crosses the network, else 0), ``head_angle`` (the
        arrowhead's angle in degrees at the last point; empty elsewhere),
        ``x`` and ``y``.
    dp_paths : list of dict
        The points of each arc between data-parallel replicas on different
        nodes: ``path``, ``point``, ``x`` and ``y``.
    notes : list of dict
        The lines of the list under the diagram: ``line`` (its place in the
        list), ``note`` (its text's index in :attr:`note_texts`),
        ``note_kind`` (:data:`PROBLEM`, :data:`FLAG` or :data:`NOTHING`) and
        ``para`` (which problem or flag it belongs to, from 0; a phone shows
        each one's lines as one paragraph).
    """

    gpus: list[dict[str, Any]] = field(default_factory=list)
    stages: list[dict[str, Any]] = field(default_factory=list)
    tp_outlines: list[dict[str, Any]] = field(default_factory=list)
    tp_links: list[dict[str, Any]] = field(default_factory=list)
    pp_paths: list[dict[str, Any]] = field(default_factory=list)
    dp_paths: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    _note_ids: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def note_texts(self) -> list[str]:
        """Each line of the notes once, in order of first use (many states share a line)."""
        return list(self._note_ids)

    def add_state(self, state: dict[str, Any]) -> None:
        """Append every mark of one state to the tables.

        A layout that cannot exist, or is not placed, gets its notes only:
        the node boxes are drawn empty.

        Parameters
        ----------
        state : dict
            The controls' values (``model``, ``gpus_per_node``, ``nodes``,
            ``group``, ``pp``).
        """
        g, nodes = state["gpus_per_node"], state["nodes"]
        lines = [
            (para, kind, line)
            for para, (kind, wrapped) in enumerate(note_paragraphs(state))
            for line in wrapped
        ]
        for i, (para, kind, line) in enumerate(lines):
            note = self._note_ids.setdefault(line, len(self._note_ids))
            self.notes.append({**state, "line": i, "note": note, "note_kind": kind, "para": para})
        plan = plan_at(state)
        if plan is None or plan.problems:
            return
        for s in plan.placement:
            gpu = {
                "cell": s.node * g + s.slot,
                "stage": f"S{s.stage}",
                "label": _gpu_label(plan, s),
            }
            self.gpus.append({**state, **gpu})
        for stage in sorted({s.stage for s in plan.placement}):
            self.stages.append({**state, "stage": f"S{stage}"})
        if plan.tp > 1 or plan.ep > 1:
            for group in _groups(plan).values():
                across = len({s.node for s in group}) > 1
                runs: dict[tuple[int, int], list[GpuSlot]] = {}
                for s in group:
                    runs.setdefault((s.node, s.slot // _cols(g)), []).append(s)
                for run in runs.values():
                    cells = [s.node * g + s.slot for s in run]
                    outline = {"first_cell": min(cells), "last_cell": max(cells)}
                    self.tp_outlines.append({**state, **outline, "across_nodes": int(across)})
                if across:
                    ends = [_center(g, run) for run in runs.values()]
                    for start, end in pairwise(ends):
                        (x, y), (x2, y2) = _at(g, nodes, *start), _at(g, nodes, *end)
                        self.tp_links.append({**state, "x": x, "y": y, "x2": x2, "y2": y2})
        for path, (route, across) in enumerate(_pp_routes(plan), start=1):
            (ax, ay), (bx, by) = route[-2], route[-1]
            angle = _r(math.degrees(math.atan2(bx - ax, by - ay)))
            for i, point in enumerate(route):
                x, y = _at(g, nodes, *point)
                head = angle if i == len(route) - 1 else ""
                mark = {"across_nodes": int(across), "head_angle": head, "x": x, "y": y}
                self.pp_paths.append({**state, "path": path, "point": i, **mark})
        for path, route in enumerate(_dp_routes(plan), start=1):
            for i, point in enumerate(route):
                x, y = _at(g, nodes, *point)
                self.dp_paths.append({**state, "path": path, "point": i, "x": x, "y": y})


def _groups(plan: ClusterPlan) -> dict[tuple[int, int], list[GpuSlot]]:
    """The GPUs of each (replica, stage), in placement order."""
    groups: dict[tuple[int, int], list[GpuSlot]] = {}
    for s in plan.placement:
        groups.setdefault((s.replica, s.stage), []).append(s)
    return groups


def _pp_routes(plan: ClusterPlan) -> list[tuple[list[tuple[float, float]], bool]]:
    """Each pipeline hand-off's route and whether it crosses the network, replica by replica."""
    g, groups, routes = plan.gpus_per_node, _groups(plan), []
    for d in range(plan.dp):
        for p in range(plan.pp - 1):
            here, there = groups[(d, p)], groups[(d, p + 1)]
            across = any(a.node != b.node for a, b in zip(here, there, strict=True))
            routes.append((_pp_route(g, here, there), across))
    return routes


def _dp_routes(plan: ClusterPlan) -> list[list[tuple[float, float]]]:
    """An arc between each two neighbouring replicas that start on different nodes."""
    g, groups, routes = plan.gpus_per_node, _groups(plan), []
    for d in range(plan.dp - 1):
        here, there = groups[(d, 0)], groups[(d + 1, 0)]
        if here[0].node != there[0].node:
            routes.append(_arc(_edge(g, here, "top"), _edge(g, there, "top"), -0.45))
    return routes


def diagram_tables(rows: Sequence[dict[str, Any]]) -> DiagramTables:
    """The diagram's tables for every state of ``rows`` (the explorer's states).

    Parameters
    ----------
    rows : sequence of dict
        One per state, holding the controls' values.

    Returns
    -------
    DiagramTables
        The marks of every state, in the order of ``rows``.
    """
    tables = DiagramTables()
    for row in rows:
        tables.add_state(_state_of(row))
    return tables


def _frame(
    g: int,
    nodes: int,
    kind: str,
    corners: tuple[float, float, float, float],
    *,
    node: int | str = "",
    cell: int | str = "",
    zoom: float | str = "",
) -> dict[str, Any]:
    """One box, cell or wire of a cluster size, its corners moved into the view's pixels."""
    (x, y), (x2, y2) = _at(g, nodes, *corners[:2]), _at(g, nodes, *corners[2:])
    return {"gpus_per_node": g, "nodes": nodes, "kind": kind, "node": node, "cell": cell,
            "x": x, "y": y, "x2": x2, "y2": y2, "zoom": zoom}  # fmt: skip


def _frames() -> list[dict[str, Any]]:
    """Node boxes, GPU cells and the network band of every cluster size, in pixels.

    ``kind`` is ``"node"`` (a node's box), ``"cell"`` (a GPU's place),
    ``"band"`` (the network) or ``"wire"`` (a node's link to it); ``node``
    is the node of a box, cell or wire, ``cell`` a cell's index and ``zoom``
    the pixels per cell of its cluster size (see :func:`_zoom`).
    """
    rows: list[dict[str, Any]] = []
    inset = (_CELL - _GPU) / 2
    for g in GPUS_PER_NODE_VALUES:
        for nodes in NODE_VALUES:
            cols, top, zoom = _cols(g), _rows(g) * _CELL, round(_zoom(g, nodes)[0], 2)
            for node in range(nodes):
                x0 = _node_x(g, node)
                box = (x0, -_PAD - _FOOT, x0 + cols * _CELL + 2 * _PAD, top + _PAD)
                rows.append(_frame(g, nodes, "node", box, node=node))
                for slot in range(g):
                    x, y = _cell(g, node, slot)
                    square = (x + inset, y + inset, x + _CELL - inset, y + _CELL - inset)
                    rows.append(
                        _frame(g, nodes, "cell", square, node=node, cell=node * g + slot, zoom=zoom)
                    )
            if nodes > 1:
                band = (0.0, _BAND - 0.45, _width(g, nodes), _BAND)
                rows.append(_frame(g, nodes, "band", band))
                for node in range(nodes):
                    cx = _node_x(g, node) + _PAD + cols * _CELL / 2
                    wire = (cx, -_PAD - _FOOT, cx, _BAND)
                    rows.append(_frame(g, nodes, "wire", wire, node=node))
    return rows


#: The key under the diagram, what each line and box means (the figure's key).
KEY: tuple[tuple[str, str], ...] = (
    ("nvlink", "TP or EP group, NVLink"),
    ("network", "TP or EP group split by network"),
    ("pp", "PP: 1 hidden vector per token"),
    ("dp", "DP: nothing per token"),
    ("idle", "idle GPU"),
)


#: Columns of each diagram table read as numbers, besides the controls'.
TABLE_NUMBERS: dict[str, tuple[str, ...]] = {
    "gpus": ("cell",),
    "stages": (),
    "tp_outlines": ("first_cell", "last_cell", "across_nodes"),
    "tp_links": ("x", "y", "x2", "y2"),
    "pp_paths": ("path", "point", "across_nodes", "head_angle", "x", "y"),
    "dp_paths": ("path", "point", "x", "y"),
    "notes": ("line", "note", "para"),
}


def _table_data(tables: DiagramTables, name: str) -> dict[str, Any]:
    """One of the diagram's tables as named inline CSV data."""
    controls = (c.name for c in CONTROLS if c.name != "model")  # the model is a key, text
    numbers = (*controls, *TABLE_NUMBERS[name])
    return {"name": name, **csv_data(getattr(tables, name), numbers)}


def _chart(frames: list[dict[str, Any]], tables: DiagramTables, note_lines: int) -> dict[str, Any]:
    state = [{"filter": " && ".join(f"datum.{c.name} == {c.name}" for c in CONTROLS)}]
    size = "datum.gpus_per_node == gpus_per_node && datum.nodes == nodes"
    frame_numbers = ("gpus_per_node", "nodes", "node", "cell", "x", "y", "x2", "y2", "zoom")
    frame_data = {"name": "frames", **csv_data(frames, frame_numbers)}
    cells = [
        {"key": f"{f['gpus_per_node']}-{f['nodes']}-{f['cell']}", **f}
        for f in frames
        if f["kind"] == "cell"
    ]
    cell_data = csv_data(
        [{k: c[k] for k in ("key", "x", "y", "x2", "y2", "zoom")} for c in cells], ()
    )
    key_of = "datum.gpus_per_node + '-' + datum.nodes + '-' + datum"
    # Marks are placed at (vx, vy): the wide view's pixels x, y as they are, or
    # on a phone moved by phone_transform (VIEW_TRANSFORM), into a view
    # PHONE_WIDTH wide whose x scale keeps the domain 0..VIEW_WIDTH.
    to_view = [
        {"calculate": f"{VIEW_TRANSFORM}[0] * datum.{c} + {VIEW_TRANSFORM}[1]", "as": f"v{c}"}
        for c in ("x", "x2")
    ] + [
        {"calculate": f"{VIEW_TRANSFORM}[2] * datum.{c} + {VIEW_TRANSFORM}[3]", "as": f"v{c}"}
        for c in ("y", "y2")
    ]
    x = {
        "field": "vx",
        "type": "quantitative",
        "axis": None,
        "scale": {"domain": [0, VIEW_WIDTH], "nice": False, "zero": False},
    }
    y = {
        "field": "vy",
        "type": "quantitative",
        "axis": None,
        "scale": {"domain": [0, VIEW_HEIGHT], "nice": False, "zero": False},
    }
    box = {"x": x, "y": y, "x2": {"field": "vx2"}, "y2": {"field": "vy2"}}

    def on_frame(kind: str) -> list[dict[str, Any]]:
        return [{"filter": f"{size} && datum.kind == '{kind}'"}, *to_view]

    def cell_lookup(
        column: str, corners: list[str], grow: dict[str, float] | None = None
    ) -> list[dict[str, Any]]:
        """The corners and zoom of the GPU cell named in ``column``, moved out by ``grow`` cells.

        The lookup's inline CSV is not parsed, hence ``toNumber``.
        """
        names = [f"_{column}_{c}" for c in (*corners, "zoom")]
        return [
            {"calculate": f"{key_of}.{column}", "as": f"_key_{column}"},
            {
                "lookup": f"_key_{column}",
                "from": {"data": cell_data, "key": "key", "fields": [*corners, "zoom"]},
                "as": names,
            },
            *(
                {
                    "calculate": f"toNumber(datum.{n}) + {(grow or {}).get(c, 0)} * "
                    f"toNumber(datum._{column}_zoom)",
                    "as": c,
                }
                for c, n in zip(corners, names, strict=False)
            ),
        ]

    mid = [
        {"calculate": "(datum.vx + datum.vx2) / 2", "as": "mid"},
        {"calculate": "(datum.vy + datum.vy2) / 2", "as": "mid_y"},
    ]
    at_mid = {"x": {**x, "field": "mid"}, "y": {**y, "field": "mid_y"}}
    grow = round((_CELL - _GPU) / 2 - 0.04, 3)  # a TP outline sits just outside its GPUs
    frame_layers = [
        {
            "transform": on_frame("node"),
            "mark": {"type": "rect", "fill": "#f4f4f4", "stroke": "black", "cornerRadius": 5},
            "encoding": box,
        },
        {
            "transform": [*on_frame("node"), {"calculate": "'node ' + datum.node", "as": "name"}],
            "mark": {
                "type": "text",
                "align": "left",
                "baseline": "bottom",
                "dx": 4,
                "dy": -3,
                "fontWeight": "bold",
                "fontSize": 11,
                "color": "#1a1a1a",
            },
            "encoding": {"x": x, "y": y, "text": {"field": "name"}},
        },
        {
            "transform": on_frame("wire"),
            "mark": {"type": "rule", "stroke": PALETTE["grey"], "strokeWidth": 3},
            "encoding": box,
        },
        {
            "transform": on_frame("band"),
            "mark": {"type": "rect", "fill": "#767676"},
            "encoding": box,
        },
        {
            # On a phone a band thinner than its text has the text under it, in ink.
            "transform": [
                *on_frame("band"),
                *mid,
                {
                    "calculate": f"{PHONE_PARAM} && datum.vy2 - datum.vy < {BAND_TEXT_PX} + 2",
                    "as": "thin",
                },
                {
                    "calculate": f"datum.thin ? datum.vy - {BAND_TEXT_PX} : datum.mid_y",
                    "as": "text_y",
                },
            ],
            "mark": {
                "type": "text",
                "fontWeight": "bold",
                "fontSize": BAND_TEXT_PX,
                "baseline": "middle",
            },
            "encoding": {
                "x": at_mid["x"],
                "y": {**y, "field": "text_y"},
                "color": {
                    "condition": {"test": "datum.thin", "value": "#1a1a1a"},
                    "value": "white",
                },
                "text": {"value": "network (InfiniBand / RoCE)"},
            },
        },
        {
            "transform": on_frame("cell"),
            "mark": {"type": "rect", "fill": "white", "stroke": "#767676", "strokeDash": [3, 2]},
            "encoding": box,
        },
        {
            # On a phone "idle" is drawn at PHONE_TEXT_PX where its GPU's square has room.
            "transform": [
                *on_frame("cell"),
                *mid,
                {
                    "filter": f"!{PHONE_PARAM} || {_GPU} * datum.zoom * {VIEW_TRANSFORM}[2] >= {IDLE_ROOM_PX}"
                },
            ],
            "mark": {
                "type": "text",
                "color": "#595959",
                "fontSize": {"expr": f"{PHONE_PARAM} ? {PHONE_TEXT_PX} : 8"},
                "baseline": "middle",
            },
            "encoding": {**at_mid, "text": {"value": "idle"}},
        },
    ]
    gpu_layers = [
        {
            "mark": {"type": "rect", "stroke": "black", "strokeWidth": 1.2},
            "encoding": {
                **box,
                "fill": {
                    "field": "stage",
                    "type": "nominal",
                    "title": "pipeline stage",
                    "scale": {
                        "range": [
                            STAGE_COLORS[s % len(STAGE_COLORS)] for s in range(max(PP_VALUES))
                        ],
                    },
                    "legend": None,
                },
                "tooltip": [
                    {"field": "label", "title": "GPU"},
                    {"field": "stage", "title": "stage"},
                ],
            },
        },
        {
            "transform": [{"filter": "datum.shown_label != ''"}],
            "mark": {
                "type": "text",
                "lineBreak": "|",
                "baseline": "middle",
                "color": "black",
            },
            "encoding": {
                **at_mid,
                "text": {"field": "shown_label"},
                "size": {"field": "font", "type": "quantitative", "scale": None},
            },
        },
    ]
    layers: list[dict[str, Any]] = [
        {"data": frame_data, "layer": frame_layers},
        {
            "data": _table_data(tables, "gpus"),
            "transform": [
                *state,
                *cell_lookup("cell", ["x", "y", "x2", "y2"]),
                *to_view,
                *mid,
                {
                    "calculate": f"clamp(toNumber(datum._cell_zoom) * {VIEW_TRANSFORM}[2] / 4.5, "
                    f"{PHONE_PARAM} ? {PHONE_TEXT_PX} : 7, 12)",
                    "as": "font",
                },
                *_label_fits(),
            ],
            "layer": gpu_layers,
        },
        {
            "data": _table_data(tables, "tp_outlines"),
            "transform": [
                *state,
                *cell_lookup("first_cell", ["x", "y", "y2"], {"x": -grow, "y": -grow, "y2": grow}),
                *cell_lookup("last_cell", ["x2"], {"x2": grow}),
                *to_view,
            ],
            "encoding": box,
            "layer": [
                {
                    "transform": [{"filter": "datum.across_nodes == 0"}],
                    "mark": {"type": "rect", "fill": None, "strokeWidth": 2.2,
                             "stroke": TP_NVLINK_COLOR},
                },
                {
                    "transform": [{"filter": "datum.across_nodes == 1"}],
                    "mark": {"type": "rect", "fill": None, "strokeWidth": 2.2,
                             "stroke": TP_NETWORK_COLOR, "strokeDash": [6, 3]},
                },
            ],
        },
        {
            "data": _table_data(tables, "tp_links"),
            "transform": [*state, *to_view],
            "mark": {"type": "rule", "stroke": TP_NETWORK_COLOR, "strokeWidth": 1.5,
                     "strokeDash": [6, 3]},
            "encoding": box,
        },
        {
            "data": _table_data(tables, "pp_paths"),
            "transform": [*state, *to_view],
            "layer": [
                {
                    "mark": {"type": "line", "interpolate": "basis", "color": "black"},
                    "encoding": {
                        "x": x, "y": y, "detail": {"field": "path"},
                        "order": {"field": "point", "type": "quantitative"},
                        "strokeWidth": {"condition": {"test": "datum.across_nodes == 1",
                                                      "value": 2.2},
                                        "value": 1.3},
                    },
                },
                {
                    "transform": [{"filter": "isValid(datum.head_angle)"}],
                    "mark": {"type": "point", "shape": "triangle-up", "filled": True,
                             "color": "black", "size": 70, "opacity": 1},
                    "encoding": {"x": x, "y": y, "angle": {"field": "head_angle",
                                                           "type": "quantitative",
                                                           "scale": None}},
                },
            ],
        },
        {
            "data": _table_data(tables, "stages"),
            "transform": [
                *state,
                {"window": [{"op": "row_number", "as": "n"}], "sort": [{"field": "stage"}]},
                {"calculate": "90 + 44 * (datum.n - 1)", "as": "kx"},
            ],
            "layer": [
                {
                    "mark": {"type": "rect", "width": 14, "height": 12, "xOffset": 7, "stroke": "black",
                             "strokeWidth": 0.6},
                    "encoding": {
                        "x": {"field": "kx", "type": "quantitative", "scale": None},
                        "y": {"value": VIEW_HEIGHT - STAGE_KEY / 2},
                        "fill": {"field": "stage", "type": "nominal", "legend": None},
                    },
                },
                {
                    "mark": {"type": "text", "align": "left", "baseline": "middle", "dx": 18,
                             "fontSize": 11, "color": "#1a1a1a"},
                    "encoding": {
                        "x": {"field": "kx", "type": "quantitative", "scale": None},
                        "y": {"value": VIEW_HEIGHT - STAGE_KEY / 2},
                        "text": {"field": "stage"},
                    },
                },
                {
                    "transform": [{"filter": "datum.n == 1"}],
                    "mark": {"type": "text", "align": "left", "baseline": "middle",
                             "fontSize": 11, "color": "#1a1a1a"},
                    "encoding": {
                        "x": {"value": 0},
                        "y": {"value": VIEW_HEIGHT - STAGE_KEY / 2},
                        "text": {"value": "pipeline stage"},
                    },
                },
            ],
        },
        {
            "data": _table_data(tables, "dp_paths"),
            "transform": [*state, *to_view],
            "mark": {"type": "line", "interpolate": "basis", "color": "black",
                     "strokeWidth": 1.2, "strokeDash": [3, 3]},
            "encoding": {
                "x": x, "y": y, "detail": {"field": "path"},
                "order": {"field": "point", "type": "quantitative"},
            },
        },
    ]  # fmt: skip
    diagram = {"name": "diagram", "width": VIEW_WIDTH, "height": VIEW_HEIGHT, "layer": layers}
    key = _key_view(VIEW_WIDTH, PHONE_WIDTH)
    notes_view = {
        "name": "notes",
        "width": VIEW_WIDTH,
        "height": 16 * note_lines,
        "data": _table_data(tables, "notes"),
        "transform": [
            *state,
            {
                "lookup": "note",
                "from": {
                    "data": csv_data(
                        [{"id": i, "text": t} for i, t in enumerate(tables.note_texts)], ("id",)
                    ),
                    "key": "id",
                    "fields": ["text"],
                },
            },
        ],
        "mark": {"type": "text", "align": "left", "baseline": "middle", "fontSize": 12},
        "encoding": {
            "x": {"value": 0},
            "y": {
                "field": "line",
                "type": "ordinal",
                "axis": None,
                "scale": {"domain": list(range(note_lines)), "padding": 0.5},
            },
            "text": {"field": "text"},
            "color": {
                "condition": {"test": f"datum.note_kind == '{PROBLEM}'", "value": PROBLEM_COLOR},
                "value": "#1a1a1a",
            },
        },
    }
    return {"vconcat": [_hidden(diagram), _hidden(key), notes_view], "spacing": 6}


def _hidden(view: dict[str, Any]) -> dict[str, Any]:
    """The view with every mark kept out of the accessibility tree.

    The diagram's marks are shapes whose meaning the chart's description and
    the message give; as ARIA images they would be unnamed, and empty ones
    (no TP group split by the network, say) are flagged by axe-core. The
    list of problems and flags stays readable.
    """
    for layer in view.get("layer", []):
        _hidden(layer)
    if isinstance(view.get("mark"), dict):
        view["mark"]["aria"] = False
    return view


def _key_entries(width: int, layout: str) -> list[dict[str, Any]]:
    """The key's entries laid out in rows at most ``width`` pixels wide, tagged ``layout``."""
    entries, x, y = [], 0.0, 10
    for kind, label in KEY:
        size = 40 + 6.2 * len(label)
        if x and x + size > width:
            x, y = 0.0, y + 20
        entries.append(
            {"layout": layout, "kind": kind, "label": label, "x": x, "x2": x + 20, "tx": x + 26,
             "y": y}
        )  # fmt: skip
        x += size
    return entries


def key_height(width: int) -> int:
    """Height of the key laid out ``width`` pixels wide: 20 px a row of entries.

    Parameters
    ----------
    width : int
        The key's width, pixels.

    Returns
    -------
    int
        Pixels.
    """
    return int(max(e["y"] for e in _key_entries(width, "")) + 10)


def _key_view(width: int, phone_width: int) -> dict[str, Any]:
    """The static key: a swatch and a label per kind of line or box (the figure's key).

    It holds the entries laid out ``width`` wide and ``phone_width`` wide; the
    chart's ``phone`` parameter picks one.
    """
    entries = _key_entries(width, "wide") + _key_entries(phone_width, "phone")
    height = key_height(width)
    at = {
        "x": {"field": "x", "type": "quantitative", "scale": None},
        "y": {"field": "y", "type": "quantitative", "scale": None},
    }
    rect = {"type": "rect", "height": 12, "width": 20, "xOffset": 10, "fill": None}
    rule = {"type": "rule", "color": "black"}
    swatches = {
        "nvlink": {**rect, "stroke": TP_NVLINK_COLOR, "strokeWidth": 2.2},
        "network": {**rect, "stroke": TP_NETWORK_COLOR, "strokeWidth": 2.2, "strokeDash": [4, 2]},
        "idle": {**rect, "fill": "white", "stroke": "#767676", "strokeDash": [3, 2]},
        "pp": {**rule, "strokeWidth": 2},
        "dp": {**rule, "strokeWidth": 1.2, "strokeDash": [3, 3]},
    }
    layers: list[dict[str, Any]] = []
    for kind, mark in swatches.items():
        encoding = dict(at)
        if mark["type"] == "rule":
            encoding["x2"] = {"field": "x2"}
        layers.append(
            {
                "transform": [{"filter": f"datum.kind == '{kind}'"}],
                "mark": mark,
                "encoding": encoding,
            }
        )
    layers.append(
        {
            "transform": [{"filter": "datum.kind == 'pp'"}],
            "mark": {"type": "point", "shape": "triangle-right", "filled": True,
                     "color": "black", "size": 50, "opacity": 1},
            "encoding": {"x": {"field": "x2", "type": "quantitative", "scale": None},
                         "y": at["y"]},
        }
    )  # fmt: skip
    layers.append(
        {
            "mark": {"type": "text", "align": "left", "baseline": "middle", "fontSize": 11,
                     "color": "#1a1a1a"},
            "encoding": {"x": {"field": "tx", "type": "quantitative", "scale": None},
                         "y": at["y"], "text": {"field": "label"}},
        }
    )  # fmt: skip
    return {
        "name": "key",
        "width": width,
        "height": height,
        "data": {"values": entries},
        "transform": [{"filter": f"datum.layout == ({PHONE_PARAM} ? 'phone' : 'wide')"}],
        "layer": layers,
    }


def phone_layout() -> dict[str, Any]:
    """How ``tools/site/explorers.js`` draws the chart on a column narrower than it (a phone).

    Returns
    -------
    dict
        The ``narrow`` of :class:`~lesson_lib.explorers._base.Explorer`:
        ``phone`` set, the diagram and key :data:`PHONE_WIDTH` wide (the key
        in as many rows as that takes), and the list of problems and flags
        shown as page text, one paragraph each, instead of drawn lines.
    """
    return {
        "params": {PHONE_PARAM: True},
        "views": {
            "diagram": {"width": PHONE_WIDTH},
            "key": {"width": PHONE_WIDTH, "height": key_height(PHONE_WIDTH)},
            "notes": {"width": PHONE_WIDTH},
        },
        "asText": [{"view": "notes", "text": "text", "join": "para"}],
    }


def cluster_explorer() -> Explorer:
    """The live cluster explorer: choose a model, GPUs per node, nodes, TP or EP, and PP.

    Returns
    -------
    Explorer
        Displays as a Vega-Lite chart (JupyterLab, the static site) whose
        controls pick one of the precomputed plans, starting at the lesson's
        two nodes of four GPUs as TP 4 x PP 2; ``row(...)`` and
        ``message_for(...)`` give a state's numbers and message.
    """
    rows = states(CONTROLS, _state)
    tables = diagram_tables(rows)
    note_lines = max(len(notes_of(row)) for row in rows)
    explorer = Explorer(
        title="Cluster explorer: where TP, PP, EP and DP sit",
        description=(
            "The chosen cluster: nodes as boxes with their GPUs inside, coloured by pipeline "
            "stage (idle GPUs left blank); tensor-parallel and expert-parallel groups outlined, "
            "green inside a node and dashed vermillion when split across nodes; arrows for "
            "pipeline hand-offs, thicker across the network; dashed arcs between data-parallel "
            "replicas; the network band under the nodes. A layout that cannot exist leaves the "
            "nodes empty. Below it, every problem and flag of the layout; the message above "
            "gives its verdict and, for a layout that can exist, its time per token and batched "
            "throughput."
        ),
        controls=CONTROLS,
        rows=rows,
        message=MESSAGE,
        chart=_chart(_frames(), tables, note_lines),
        numeric=("gpus_per_node", "nodes", "group", "pp"),
        message_lines=5,
        params=chart_params(),
        narrow=phone_layout(),
    )
    return explorer


def _state_of(row: dict[str, Any]) -> dict[str, Any]:
    return {c.name: row[c.name] for c in CONTROLS}
