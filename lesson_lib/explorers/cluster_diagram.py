"""The cluster explorer's diagram as tables: every state's marks, in the view's pixels.

Each cluster size is laid out in the figure's
:class:`~lesson_lib.figures.cluster_geometry.ClusterGrid` cells and moved into the view's pixels, as
large as fits; a phone redraws it at its narrower view's zoom (:func:`_phone_transform`).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.figures.cluster_geometry import BAND, CELL, FOOT, GPU, PAD, ClusterGrid, Point
from lesson_lib.model.cluster_plan import (
    ClusterPlan,
    GpuSlot,
    dp_neighbours,
    spans_nodes,
    stage_hand_offs,
    tp_groups,
)

#: Cluster sizes drawn, and pipeline degrees coloured: up to 8 GPUs per node, 4 nodes, PP 4.
GPUS_PER_NODE_VALUES: tuple[int, ...] = (1, 2, 4, 8)
NODE_VALUES: tuple[int, ...] = (1, 2, 3, 4)
PP_VALUES: tuple[int, ...] = (1, 2, 3, 4)
#: The diagram's width and height in pixels.
VIEW_WIDTH = 640
VIEW_HEIGHT = 250
#: The diagram's width on a phone, pixels: a 390 px phone's explorer column (340 px in Chromium)
#: less padding. There each cluster size is redrawn at this width's zoom, text at its own size.
PHONE_WIDTH = 320
#: The chart's parameter holding the phone's move of the wide view's pixels,
#: ``[kx, bx, ky, by]`` (x in the x scale's domain, 0..VIEW_WIDTH), and the
#: one saying the chart is drawn on a phone (``tools/site/explorers.js`` sets it).
VIEW_TRANSFORM = "view_t"
PHONE_PARAM = "phone"
#: The most pixels per GPU cell; each cluster size is drawn as large as fits, up to this.
ZOOM_MAX = 60.0
#: Pixels at the bottom of the view kept for the key of pipeline stages.
STAGE_KEY = 24
#: Size of the network band's label, pixels.
BAND_TEXT_PX = 11
#: Tallest arc over the GPUs (its control point's height), in cells.
ARC_MAX = 2.0
#: Kinds of line in the list under the diagram (``note_kind`` of :attr:`DiagramTables.notes`).
PROBLEM, FLAG, NOTHING = "problem", "flag", "none"


@functools.cache
def _zoom(g: int, nodes: int, width: float = VIEW_WIDTH) -> tuple[float, float, float, int]:
    """Pixels per cell, the offsets that put a cluster of this size centred at the top of a view
    ``width`` wide, and the height that view needs (its drawing, the network band's name under
    the band and the stage key), pixels."""
    left, right = -0.2, ClusterGrid(g).width(nodes) + 0.2
    bottom = BAND - 0.45 if nodes > 1 else -PAD - FOOT - 0.2
    name = BAND_TEXT_PX + 4 if nodes > 1 else 0  # the band's name under it, as in the figure
    top = ClusterGrid(g).rows * CELL + ARC_MAX / 2 + 0.1  # room for the arcs over the GPUs
    height = VIEW_HEIGHT - STAGE_KEY - name
    zoom = min(ZOOM_MAX, width / (right - left), height / (top - bottom))
    fit = math.ceil(zoom * (top - bottom)) + name + STAGE_KEY
    return zoom, width / 2 - zoom * (left + right) / 2, VIEW_HEIGHT - zoom * top, fit


def _at(g: int, nodes: int, point: Point) -> Point:
    """A point of the layout (cells) in the wide view's pixels (y up), to 0.1."""
    zoom, ox, oy, _ = _zoom(g, nodes)
    return round(ox + zoom * point[0], 1), round(oy + zoom * point[1], 1)


def _arc(a: Point, b: Point, rad: float) -> list[Point]:
    """The figure's ``arc3`` ends and, if curved, a control point at most :data:`ARC_MAX` high."""
    if rad == 0:
        return [a, b]
    (x1, y1), (x2, y2) = a, b
    rad = math.copysign(min(abs(rad), ARC_MAX / math.hypot(x2 - x1, y2 - y1)), rad)
    return [a, ((x1 + x2) / 2 + rad * (y2 - y1), (y1 + y2) / 2 - rad * (x2 - x1)), b]


def _phone_transform(g: int, nodes: int) -> tuple[float, float, float]:
    """``k``, ``bx``, ``by``: a wide pixel ``p`` of this size lands at ``k * p + b`` on a phone.

    Both views draw cells at ``pixel = offset + zoom * cell``, so ``k`` is the ratio of the zooms
    (one for both axes) and ``b = offset_phone - k * offset_wide``, in the phone view's pixels.
    """
    zoom, ox, oy, _ = _zoom(g, nodes)
    phone_zoom, phone_ox, phone_oy, _ = _zoom(g, nodes, PHONE_WIDTH)
    k = phone_zoom / zoom
    return k, phone_ox - k * ox, phone_oy - k * oy


def _view_transforms() -> list[list[list[float]]]:
    """:func:`_phone_transform` of every cluster size, in the x scale's domain."""
    to_domain = VIEW_WIDTH / PHONE_WIDTH
    return [
        [
            [round(k * to_domain, 5), round(bx * to_domain, 3), round(k, 5), round(by, 3)]
            for k, bx, by in (_phone_transform(g, nodes) for nodes in NODE_VALUES)
        ]
        for g in GPUS_PER_NODE_VALUES
    ]


def chart_params() -> tuple[dict[str, Any], ...]:
    """The chart's parameters besides the controls: phone, view transform and diagram height.

    Returns
    -------
    tuple of dict
        ``phone``; ``view_t``, the identity or, on a phone, the size's :func:`_phone_transform`;
        ``diagram_fit``, the height the size's drawing needs (``tools/site/explorers.js`` gives
        the view ``diagram`` that height).
    """
    size = f"[indexof({list(GPUS_PER_NODE_VALUES)}, gpus_per_node)][indexof({list(NODE_VALUES)}, nodes)]"
    pick = f"{json.dumps(_view_transforms(), separators=(',', ':'))}{size}"
    fits = [
        [[_zoom(g, n)[3], _zoom(g, n, PHONE_WIDTH)[3]] for n in NODE_VALUES]
        for g in GPUS_PER_NODE_VALUES
    ]
    return (
        {"name": PHONE_PARAM, "value": False},
        {"name": VIEW_TRANSFORM, "expr": f"{PHONE_PARAM} ? {pick} : [1, 0, 1, 0]"},
        {"name": "diagram_fit", "expr": f"{json.dumps(fits)}{size}[{PHONE_PARAM} ? 1 : 0]"},
    )


def _frame(
    g: int,
    nodes: int,
    kind: str,
    corners: tuple[Point, Point],
    node: Any = "",
    cell: Any = "",
    zoom: Any = "",
) -> dict[str, Any]:
    """One box, cell or wire of a cluster size, its corners moved into the view's pixels."""
    (x, y), (x2, y2) = _at(g, nodes, corners[0]), _at(g, nodes, corners[1])
    return {"gpus_per_node": g, "nodes": nodes, "kind": kind, "node": node, "cell": cell,
            "x": x, "y": y, "x2": x2, "y2": y2, "zoom": zoom}  # fmt: skip


def frames() -> list[dict[str, Any]]:
    """Node boxes, GPU cells and the network band of every cluster size, in pixels.

    Returns
    -------
    list of dict
        ``kind`` (``"node"``, ``"cell"``, ``"band"`` or ``"wire"``, a node's band link), a box's,
        cell's or wire's ``node``, a ``cell``'s index and ``zoom``, its size's pixels per cell.
    """
    rows: list[dict[str, Any]] = []
    inset = (CELL - GPU) / 2
    for g in GPUS_PER_NODE_VALUES:
        grid = ClusterGrid(g)
        for nodes in NODE_VALUES:
            top, zoom = grid.rows * CELL, round(_zoom(g, nodes)[0], 2)
            for node in range(nodes):
                x0 = grid.node_x(node)
                box = ((x0, -PAD - FOOT), (x0 + grid.cols * CELL + 2 * PAD, top + PAD))
                rows.append(_frame(g, nodes, "node", box, node=node))
                for slot in range(g):
                    x, y = grid.cell(node, slot)
                    square = ((x + inset, y + inset), (x + CELL - inset, y + CELL - inset))
                    cell = node * g + slot
                    rows.append(_frame(g, nodes, "cell", square, node=node, cell=cell, zoom=zoom))
            if nodes > 1:
                band = ((0.0, BAND - 0.45), (grid.width(nodes), BAND))
                rows.append(_frame(g, nodes, "band", band))
                for node in range(nodes):
                    cx = grid.node_x(node) + PAD + grid.cols * CELL / 2
                    wire = ((cx, -PAD - FOOT), (cx, BAND))
                    rows.append(_frame(g, nodes, "wire", wire, node=node))
    return rows


def _gpu_label(plan: ClusterPlan, s: GpuSlot) -> str:
    """A GPU's text, lines split by ``|``: its TP or EP rank, then its stage and replica if any."""
    second = [f"S{s.stage}"] if plan.pp > 1 else []
    second += [f"R{s.replica}"] if plan.dp > 1 else []
    rank = f"EP{s.tp_rank}" if plan.ep > 1 else f"TP{s.tp_rank}"
    return rank + ("|" + " ".join(second) if second else "")


@dataclass
class DiagramTables:
    """The diagram's data: one table per kind of mark, each row keyed by its state.

    A row starts with its state's controls' values (``model``, ``gpus_per_node``, ``nodes``,
    ``group``, ``pp``); a cell is a GPU's index, ``node x gpus_per_node + slot``; places are the
    view's pixels (y up); ``across_nodes`` is 1 for what the network splits or crosses, or 0.
    """

    #: Each placed GPU's ``cell``, ``stage`` (``"S0"`` ...) and ``label`` (lines split by ``|``).
    gpus: list[dict[str, Any]] = field(default_factory=list)
    #: The pipeline stages in use, in order, for the key (``stage``).
    stages: list[dict[str, Any]] = field(default_factory=list)
    #: A TP group's run of GPUs in a row (``first_cell``, ``last_cell``, ``across_nodes``).
    tp_outlines: list[dict[str, Any]] = field(default_factory=list)
    #: The line from ``x``, ``y`` to ``x2``, ``y2`` joining a TP group's pieces across the network.
    tp_links: list[dict[str, Any]] = field(default_factory=list)
    #: Each pipeline hand-off's points, ``path``, ``point`` (its order), ``across_nodes``,
    #: ``head_angle`` (the arrowhead's, degrees, last point), ``x``, ``y``; four points are a
    #: route through the network band, two or three an arc.
    pp_paths: list[dict[str, Any]] = field(default_factory=list)
    #: Each arc's points between replicas on different nodes, ``path``, ``point``, ``x``, ``y``.
    dp_paths: list[dict[str, Any]] = field(default_factory=list)
    #: The list's lines under the diagram, ``line`` (its place), ``note`` (its text's index in
    #: :attr:`note_texts`), ``note_kind`` (:data:`PROBLEM`, :data:`FLAG` or :data:`NOTHING`) and
    #: ``para`` (its problem or flag, from 0; a phone shows each as one paragraph).
    notes: list[dict[str, Any]] = field(default_factory=list)
    #: Each placed state's ``key`` (its controls' values joined by ``|``) and ``placed`` GPUs.
    placed: list[dict[str, Any]] = field(default_factory=list)
    _note_ids: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def note_texts(self) -> list[str]:
        """Each line of the notes once, in order of first use (many states share a line)."""
        return list(self._note_ids)

    def add_state(
        self,
        state: dict[str, Any],
        plan: ClusterPlan | None,
        paragraphs: list[tuple[str, tuple[str, ...]]],
    ) -> None:
        """Append every mark of one state; a layout that cannot exist, or is not placed
        (``plan`` None), gets its notes only, its node boxes drawn empty.

        Parameters
        ----------
        state, plan, paragraphs
            The controls' values, the state's plan, each problem's or flag's kind and list lines.
        """
        lines = [
            (p, kind, line) for p, (kind, wrapped) in enumerate(paragraphs) for line in wrapped
        ]
        for i, (para, kind, line) in enumerate(lines):
            note = self._note_ids.setdefault(line, len(self._note_ids))
            self.notes.append({**state, "line": i, "note": note, "note_kind": kind, "para": para})
        if plan is None or plan.problems:
            return
        g = plan.gpus_per_node
        key = "|".join(map(str, state.values()))
        self.placed.append({"key": key, "placed": len(plan.placement)})
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
            self._add_groups(state, plan)
        self._add_links(state, plan)

    def _add_groups(self, state: dict[str, Any], plan: ClusterPlan) -> None:
        """Outline each TP or EP group row by row; join the pieces of one split by the network."""
        g, nodes, grid = plan.gpus_per_node, plan.nodes, ClusterGrid(plan.gpus_per_node)
        for group in tp_groups(plan.placement).values():
            across = spans_nodes(group)
            runs = grid.runs(group)
            for run in runs:
                cells = [s.node * g + s.slot for s in run]
                outline = {"first_cell": min(cells), "last_cell": max(cells)}
                self.tp_outlines.append({**state, **outline, "across_nodes": int(across)})
            if across:
                for start, end in grid.network_links(runs):
                    (x, y), (x2, y2) = _at(g, nodes, start), _at(g, nodes, end)
                    self.tp_links.append({**state, "x": x, "y": y, "x2": x2, "y2": y2})

    def _add_links(self, state: dict[str, Any], plan: ClusterPlan) -> None:
        """The pipeline hand-offs, their arrowheads' angles, and the arcs between replicas."""
        g, nodes, grid = plan.gpus_per_node, plan.nodes, ClusterGrid(plan.gpus_per_node)
        hand_offs = stage_hand_offs(tp_groups(plan.placement))
        for path, (_, here, there, across) in enumerate(hand_offs, start=1):
            # Through the network band as the figure draws it where it can, else the figure's arc.
            route = grid.pp_band_route(here, there) or _arc(*grid.pp_ends(here, there))
            (ax, ay), (bx, by) = route[-2], route[-1]
            angle = round(math.degrees(math.atan2(bx - ax, by - ay)), 3)
            for i, point in enumerate(route):
                x, y = _at(g, nodes, point)
                head = angle if i == len(route) - 1 else ""
                mark = {"across_nodes": int(across), "head_angle": head, "x": x, "y": y}
                self.pp_paths.append({**state, "path": path, "point": i, **mark})
        for path, (here, there) in enumerate(dp_neighbours(plan), start=1):
            route = _arc(grid.edge(here, "top"), grid.edge(there, "top"), -0.45)
            for i, point in enumerate(route):
                x, y = _at(g, nodes, point)
                self.dp_paths.append({**state, "path": path, "point": i, "x": x, "y": y})
