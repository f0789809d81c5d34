"""The cluster explorer's chart in Vega-Lite: the diagram, its key and the list of notes.

It keeps the chosen state's rows of :class:`~lesson_lib.explorers.cluster_diagram.DiagramTables`
and, on a phone, moves them by the phone's transform.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lesson_lib.explorers._base import csv_data
from lesson_lib.explorers.cluster_diagram import (
    BAND_TEXT_PX,
    PHONE_PARAM,
    PHONE_WIDTH,
    PP_VALUES,
    PROBLEM,
    STAGE_KEY,
    VIEW_HEIGHT,
    VIEW_TRANSFORM,
    VIEW_WIDTH,
    DiagramTables,
    frames,
)
from lesson_lib.figures._style import PHONE_TEXT_FLOOR_PX, ROLE_COLORS
from lesson_lib.figures.cluster import STAGE_COLORS, TP_NETWORK_COLOR, TP_NVLINK_COLOR
from lesson_lib.figures.cluster_geometry import CELL, GPU

#: Smallest text the diagram draws on a phone, pixels: the figures' phone floor.
PHONE_TEXT_PX: float = PHONE_TEXT_FLOOR_PX
#: Width of a GPU label's character, in ems: wide enough for "TP", "S", "R"
#: and digits in a sans-serif face (Helvetica's T is 0.61 em, R 0.72, digits 0.56).
LABEL_EM = 0.62
#: Room a GPU label keeps to the edges of its square, pixels, across and down
#: (its group's outline is drawn just outside the square).
LABEL_MARGIN_PX = 3
#: Side of a GPU's square, pixels, below which a phone leaves out "idle"
#: (four letters of PHONE_TEXT_PX text are about 14 px wide).
IDLE_ROOM_PX = 16
#: Text colour of a problem in the list (the explorers' error colour, AA on white).
PROBLEM_COLOR = "#a14a00"
#: Colour of the network band, its wires and its name, the figure's.
NETWORK_COLOR = ROLE_COLORS["network"]
#: Text colour of the diagram's names, keys and notes.
INK = "#1a1a1a"
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
#: The key under the diagram, what each line and box means (the figure's key).
KEY: tuple[tuple[str, str], ...] = (
    ("nvlink", "TP or EP group, NVLink"),
    ("network", "TP or EP group split by network"),
    ("pp", "PP: hidden vector + residual"),
    ("dp", "DP: nothing per token"),
    ("idle", "idle GPU"),
)


def _calc(expression: str, name: str) -> dict[str, str]:
    return {"calculate": expression, "as": name}


def _filter(test: str) -> dict[str, str]:
    return {"filter": test}


def _axis(field: str, extent: int) -> dict[str, Any]:
    scale = {"domain": [0, extent], "nice": False, "zero": False}
    return {"field": field, "type": "quantitative", "axis": None, "scale": scale}


def _pixels(field: str) -> dict[str, Any]:
    """A field already in the view's pixels."""
    return {"field": field, "type": "quantitative", "scale": None}


def _text(**props: Any) -> dict[str, Any]:
    return {"type": "text", **props}


X, Y = _axis("vx", VIEW_WIDTH), _axis("vy", VIEW_HEIGHT)
# The diagram's height follows its drawing (diagram_fit); its y scale keeps one unit a pixel.
Y["scale"]["domain"] = [{"expr": f"{VIEW_HEIGHT} - diagram_height"}, VIEW_HEIGHT]
BOX = {"x": X, "y": Y, "x2": {"field": "vx2"}, "y2": {"field": "vy2"}}
AT_MID = {"x": {**X, "field": "mid"}, "y": {**Y, "field": "mid_y"}}
PATH = {"x": X, "y": Y, "detail": {"field": "path"},
        "order": {"field": "point", "type": "quantitative"}}  # fmt: skip
# Marks sit at (vx, vy): the wide view's pixels as they are, or on a phone moved by _phone_transform
# (VIEW_TRANSFORM) into a view PHONE_WIDTH wide whose x scale keeps the domain 0..VIEW_WIDTH.
TO_VIEW = [
    *(_calc(f"{VIEW_TRANSFORM}[0] * datum.{c} + {VIEW_TRANSFORM}[1]", f"v{c}") for c in ("x", "x2")),
    *(_calc(f"{VIEW_TRANSFORM}[2] * datum.{c} + {VIEW_TRANSFORM}[3]", f"v{c}") for c in ("y", "y2")),
]  # fmt: skip
MID = [_calc("(datum.vx + datum.vx2) / 2", "mid"), _calc("(datum.vy + datum.vy2) / 2", "mid_y")]


def _on_frame(kind: str) -> list[dict[str, Any]]:
    size = "datum.gpus_per_node == gpus_per_node && datum.nodes == nodes"
    return [_filter(f"{size} && datum.kind == '{kind}'"), *TO_VIEW]


def _frame_layers(placed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Node boxes and names, band and wires, empty GPU cells, "idle" past the ``placed`` GPUs."""
    idle_room = f"!{PHONE_PARAM} || {GPU} * datum.zoom * {VIEW_TRANSFORM}[2] >= {IDLE_ROOM_PX}"
    name = _text(align="left", baseline="bottom", dx=4, dy=-3, fontWeight="bold", fontSize=11,
                 color=INK)  # fmt: skip
    return [
        {"transform": _on_frame("node"), "encoding": BOX,
         "mark": {"type": "rect", "fill": "#f4f4f4", "stroke": "black", "cornerRadius": 5}},
        {"transform": [*_on_frame("node"), _calc("'node ' + datum.node", "name")], "mark": name,
         "encoding": {"x": X, "y": Y, "text": {"field": "name"}}},
        {"transform": _on_frame("wire"), "encoding": BOX,
         "mark": {"type": "rule", "stroke": NETWORK_COLOR, "strokeWidth": 3}},
        {"transform": _on_frame("band"), "mark": {"type": "rect", "fill": NETWORK_COLOR}, "encoding": BOX},
        {
            # Under the band, as in the figure: a hand-off between nodes runs along its middle.
            "transform": [*_on_frame("band"), *MID],
            "mark": _text(fontWeight="bold", fontSize=BAND_TEXT_PX, baseline="top", dy=2,
                          color=NETWORK_COLOR),
            "encoding": {"x": AT_MID["x"], "y": Y, "text": {"value": "network (InfiniBand / RoCE)"}},
        },
        {"transform": _on_frame("cell"), "encoding": BOX,
         "mark": {"type": "rect", "fill": "white", "stroke": "#767676", "strokeDash": [3, 2]}},
        {
            # On a phone "idle" is drawn at PHONE_TEXT_PX where its GPU's square has room.
            "transform": [*_on_frame("cell"), *MID, _filter(idle_room), *placed,
                          _filter("datum.cell >= toNumber(datum.placed)")],
            "mark": _text(color="#595959", baseline="middle",
                          fontSize={"expr": f"{PHONE_PARAM} ? {PHONE_TEXT_PX} : 8"}),
            "encoding": {**AT_MID, "text": {"value": "idle"}},
        },
    ]  # fmt: skip


def _cell_lookup(
    cells: dict[str, Any], column: str, corners: list[str], grow: dict[str, float] | None = None
) -> list[dict[str, Any]]:
    """The corners and zoom of the GPU cell named in ``column``, moved out by ``grow`` cells
    (``toNumber``: the lookup's inline CSV is not parsed)."""
    names = [f"_{column}_{c}" for c in (*corners, "zoom")]
    key = f"datum.gpus_per_node + '-' + datum.nodes + '-' + datum.{column}"
    found = {"data": cells, "key": "key", "fields": [*corners, "zoom"]}
    return [
        _calc(key, f"_key_{column}"),
        {"lookup": f"_key_{column}", "from": found, "as": names},
        *(
            _calc(f"toNumber(datum.{n}) + {(grow or {}).get(c, 0)} * toNumber(datum._{column}_zoom)", c)
            for c, n in zip(corners, names, strict=False)
        ),
    ]  # fmt: skip


def _label_fits() -> list[dict[str, Any]]:
    """``shown_label``: as much of a GPU's label as fits inside its square on a phone.

    A character is at most ``LABEL_EM`` ems wide, Vega's lines ``font + 2`` pixels apart,
    ``LABEL_MARGIN_PX`` to spare; the square is ``GPU`` cells at the view's zoom. A phone leaves out
    what does not fit rather than shrink it: the stage and replica line first (the stage is also the
    colour), then the rank's "TP" or "EP" (the key names the groups), its number up to the border.
    """
    parts = "split(datum.label, '|')"
    square = f"{GPU} * toNumber(datum._cell_zoom) * {VIEW_TRANSFORM}[2]"

    def fits(lines: int, chars: str, margin: float = LABEL_MARGIN_PX) -> str:
        width = f"{LABEL_EM} * datum.font * {chars} + {margin}"
        return f"{square} >= {width} && {square} >= {lines} * (datum.font + 2) + {margin}"

    both = fits(2, f"max(length({parts}[0]), length({parts}[1] || ''))")
    first = fits(1, "datum.widest")  # the state's longest rank: all its labels alike
    number = f"substring({parts}[0], 2)"
    short = f"{fits(1, f'length({number})', -2)} ? {number} : ''"
    shown = f"!{PHONE_PARAM} || datum.whole_fits ? datum.label : ({first} ? {parts}[0] : {short})"
    return [
        _calc(f"length({parts}[0])", "chars"),
        {"joinaggregate": [{"op": "max", "field": "chars", "as": "widest"}]},
        _calc(f"length({parts}) == 1 ? {first} : {both}", "whole_fits"),
        _calc(shown, "shown_label"),
    ]


def _gpu_layer(data: dict[str, Any], state: list, cells: dict[str, Any]) -> dict[str, Any]:
    """The placed GPUs: squares coloured by stage, their labels as far as they fit."""
    font = (
        f"clamp(toNumber(datum._cell_zoom) * {VIEW_TRANSFORM}[2] / 4.5, "
        f"{PHONE_PARAM} ? {PHONE_TEXT_PX} : 7, 12)"
    )
    colors = [STAGE_COLORS[s % len(STAGE_COLORS)] for s in range(max(PP_VALUES))]
    fill = {"field": "stage", "type": "nominal", "title": "pipeline stage",
            "scale": {"range": colors}, "legend": None}  # fmt: skip
    tooltip = [{"field": "label", "title": "GPU"}, {"field": "stage", "title": "stage"}]
    label = _text(lineBreak="|", baseline="middle", color="black")
    return {
        "data": data,
        "transform": [*state, *_cell_lookup(cells, "cell", ["x", "y", "x2", "y2"]), *TO_VIEW,
                      *MID, _calc(font, "font"), *_label_fits()],
        "layer": [
            {"mark": {"type": "rect", "stroke": "black", "strokeWidth": 1.2},
             "encoding": {**BOX, "fill": fill, "tooltip": tooltip}},
            {"transform": [_filter("datum.shown_label != ''")], "mark": label,
             "encoding": {**AT_MID, "text": {"field": "shown_label"},
                          "size": {"field": "font", "type": "quantitative", "scale": None}}},
        ],
    }  # fmt: skip


def _tp_layers(outlines: dict, links: dict, state: list, cells: dict) -> list[dict[str, Any]]:
    """The TP or EP groups' outlines, and the line joining a group split by the network."""
    grow = round((CELL - GPU) / 2 - 0.04, 3)  # an outline sits just outside its GPUs
    corners = [*_cell_lookup(cells, "first_cell", ["x", "y", "y2"], {"x": -grow, "y": -grow, "y2": grow}),
               *_cell_lookup(cells, "last_cell", ["x2"], {"x2": grow})]  # fmt: skip
    outline = {"type": "rect", "fill": None, "strokeWidth": 2.2}
    dashed = {"stroke": TP_NETWORK_COLOR, "strokeDash": [6, 3]}
    return [
        {"data": outlines, "transform": [*state, *corners, *TO_VIEW], "encoding": BOX, "layer": [
            {"transform": [_filter("datum.across_nodes == 0")],
             "mark": {**outline, "stroke": TP_NVLINK_COLOR}},
            {"transform": [_filter("datum.across_nodes == 1")], "mark": {**outline, **dashed}},
        ]},
        {"data": links, "transform": [*state, *TO_VIEW], "encoding": BOX,
         "mark": {"type": "rule", "strokeWidth": 1.5, **dashed}},
    ]  # fmt: skip


def _pp_layer(data: dict[str, Any], state: list) -> dict[str, Any]:
    """The pipeline hand-offs, thicker across the network, and their arrowheads: a route of four
    points through the network band straight, with a white edge on the band as in the figure,
    an arc of two or three points curved."""
    width = {"condition": {"test": "datum.across_nodes == 1", "value": 2.2}, "value": 1.3}
    head = {"type": "point", "shape": "triangle-up", "filled": True, "color": "black",
            "size": 70, "opacity": 1}  # fmt: skip
    routed = _filter("datum.points == 4")
    line = {"type": "line", "color": "black"}
    return {"data": data, "transform": [*state, *TO_VIEW,
            {"joinaggregate": [{"op": "count", "as": "points"}], "groupby": ["path"]}], "layer": [
        {"transform": [routed], "mark": {**line, "color": "white", "strokeWidth": 5},
         "encoding": PATH},
        {"transform": [routed], "mark": line, "encoding": {**PATH, "strokeWidth": width}},
        {"transform": [_filter("datum.points != 4")], "mark": {**line, "interpolate": "basis"},
         "encoding": {**PATH, "strokeWidth": width}},
        {"transform": [_filter("isValid(datum.head_angle)")], "mark": head,
         "encoding": {"x": X, "y": Y, "angle": _pixels("head_angle")}},
    ]}  # fmt: skip


def _dp_layer(data: dict[str, Any], state: list) -> dict[str, Any]:
    """The dashed arcs between data-parallel replicas on different nodes."""
    mark = {"type": "line", "interpolate": "basis", "color": "black", "strokeWidth": 1.2,
            "strokeDash": [3, 3]}  # fmt: skip
    return {"data": data, "transform": [*state, *TO_VIEW], "mark": mark, "encoding": PATH}


def _stage_key(data: dict[str, Any], state: list) -> dict[str, Any]:
    """The key of the pipeline stages in use, at the bottom of the view."""
    row = {"x": _pixels("kx"), "y": {"value": {"expr": f"diagram_height - {STAGE_KEY / 2}"}}}
    label = {"align": "left", "baseline": "middle", "fontSize": 11, "color": INK}
    swatch = {"type": "rect", "width": 14, "height": 12, "xOffset": 7, "stroke": "black",
              "strokeWidth": 0.6}  # fmt: skip
    return {
        "data": data,
        "transform": [*state, {"window": [{"op": "row_number", "as": "n"}], "sort": [{"field": "stage"}]},
                      _calc("90 + 44 * (datum.n - 1)", "kx")],
        "layer": [
            {"mark": swatch, "encoding": {**row, "fill": {"field": "stage", "type": "nominal", "legend": None}}},
            {"mark": _text(dx=18, **label), "encoding": {**row, "text": {"field": "stage"}}},
            {"transform": [_filter("datum.n == 1")], "mark": _text(**label),
             "encoding": {**row, "x": {"value": 0}, "text": {"value": "pipeline stage"}}},
        ],
    }  # fmt: skip


def _diagram(tables: dict[str, dict], state: list, placed: list) -> dict[str, Any]:
    """Every cluster size's frames, and the marks of the state chosen, in layers."""
    frame_rows = frames()
    frame_numbers = ("gpus_per_node", "nodes", "node", "cell", "x", "y", "x2", "y2", "zoom")
    cells = csv_data(
        [{"key": f"{f['gpus_per_node']}-{f['nodes']}-{f['cell']}",
          **{k: f[k] for k in ("x", "y", "x2", "y2", "zoom")}}
         for f in frame_rows if f["kind"] == "cell"],
        (),
    )  # fmt: skip
    layers = [
        {"data": {"name": "frames", **csv_data(frame_rows, frame_numbers)}, "layer": _frame_layers(placed)},
        _gpu_layer(tables["gpus"], state, cells),
        *_tp_layers(tables["tp_outlines"], tables["tp_links"], state, cells),
        _pp_layer(tables["pp_paths"], state),
        _stage_key(tables["stages"], state),
        _dp_layer(tables["dp_paths"], state),
    ]  # fmt: skip
    return _hidden({"name": "diagram", "width": VIEW_WIDTH, "height": VIEW_HEIGHT, "layer": layers})


def _notes(data: dict, texts: Sequence[str], state: list) -> dict[str, Any]:
    """The problems and flags under the diagram, a row a line (as many as shown), problems coloured."""
    text = csv_data([{"id": i, "text": t} for i, t in enumerate(texts)], ("id",))
    color = {"condition": {"test": f"datum.note_kind == '{PROBLEM}'", "value": PROBLEM_COLOR},
             "value": INK}  # fmt: skip
    y = {"field": "line", "type": "ordinal", "axis": None, "scale": {"padding": 0.5}}
    return {
        "name": "notes", "width": VIEW_WIDTH, "height": {"step": 16}, "data": data,
        "transform": [*state, {"lookup": "note", "from": {"data": text, "key": "id", "fields": ["text"]}}],
        "mark": _text(align="left", baseline="middle", fontSize=12),
        "encoding": {"x": {"value": 0}, "y": y, "text": {"field": "text"}, "color": color},
    }  # fmt: skip


def _hidden(view: dict[str, Any]) -> dict[str, Any]:
    """The view with every mark kept out of the accessibility tree.

    Description and message explain the shapes; as ARIA images they would be unnamed, and axe-core
    flags empty ones (no TP group split by the network). The problem and flag list stays readable.
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
        entries.append({"layout": layout, "kind": kind, "label": label, "x": x, "x2": x + 20,
                        "tx": x + 26, "y": y})  # fmt: skip
        x += size
    return entries


def _key_height(width: int) -> int:
    """Height of the key laid out ``width`` pixels wide: 20 px a row of entries."""
    return int(max(e["y"] for e in _key_entries(width, "")) + 10)


def _key() -> dict[str, Any]:
    """The static key, a swatch and a label per kind of line or box, wide and on a phone."""
    rect = {"type": "rect", "height": 12, "width": 20, "xOffset": 10, "fill": None}
    rule = {"type": "rule", "color": "black"}
    swatches = {
        "nvlink": {**rect, "stroke": TP_NVLINK_COLOR, "strokeWidth": 2.2},
        "network": {**rect, "stroke": TP_NETWORK_COLOR, "strokeWidth": 2.2, "strokeDash": [4, 2]},
        "idle": {**rect, "fill": "white", "stroke": "#767676", "strokeDash": [3, 2]},
        "pp": {**rule, "strokeWidth": 2},
        "dp": {**rule, "strokeWidth": 1.2, "strokeDash": [3, 3]},
    }
    at_ = {"x": _pixels("x"), "y": _pixels("y")}
    layers = [
        {"transform": [_filter(f"datum.kind == '{kind}'")], "mark": mark,
         "encoding": {**at_, "x2": {"field": "x2"}} if mark["type"] == "rule" else dict(at_)}
        for kind, mark in swatches.items()
    ]  # fmt: skip
    arrow = {"type": "point", "shape": "triangle-right", "filled": True, "color": "black",
             "size": 50, "opacity": 1}  # fmt: skip
    layers.append({"transform": [_filter("datum.kind == 'pp'")], "mark": arrow,
                   "encoding": {"x": _pixels("x2"), "y": at_["y"]}})  # fmt: skip
    layers.append({"mark": _text(align="left", baseline="middle", fontSize=11, color=INK),
                   "encoding": {"x": _pixels("tx"), "y": at_["y"], "text": {"field": "label"}}})  # fmt: skip
    entries = _key_entries(VIEW_WIDTH, "wide") + _key_entries(PHONE_WIDTH, "phone")
    return _hidden({
        "name": "key", "width": VIEW_WIDTH, "height": _key_height(VIEW_WIDTH),
        "data": {"values": entries},
        "transform": [_filter(f"datum.layout == ({PHONE_PARAM} ? 'phone' : 'wide')")],
        "layer": layers,
    })  # fmt: skip


def phone_layout() -> dict[str, Any]:
    """How ``tools/site/explorers.js`` draws the chart on a phone.

    Returns
    -------
    dict
        The ``narrow`` of :class:`~lesson_lib.explorers._base.Explorer`: ``phone`` set, the diagram
        and key :data:`PHONE_WIDTH` wide, problems and flags as page text, a paragraph each.
    """
    return {
        "params": {PHONE_PARAM: True},
        "views": {
            "diagram": {"width": PHONE_WIDTH},
            "key": {"width": PHONE_WIDTH, "height": _key_height(PHONE_WIDTH)},
            "notes": {"width": PHONE_WIDTH},
        },
        "asText": [{"view": "notes", "text": "text", "join": "para"}],
    }


def chart(tables: DiagramTables, controls: Sequence[str]) -> dict[str, Any]:
    """The explorer's chart: the diagram, its key, and the list of problems and flags.

    Parameters
    ----------
    tables, controls
        The marks of every state; the controls' names (the chart keeps their values' rows).

    Returns
    -------
    dict
        A Vega-Lite ``vconcat`` of the views ``diagram``, ``key`` and ``notes``.
    """
    state = [_filter(" && ".join(f"datum.{c} == {c}" for c in controls))]
    numbers = [c for c in controls if c != "model"]  # the model is a key, text

    def data(name: str) -> dict[str, Any]:
        return {"name": name, **csv_data(getattr(tables, name), (*numbers, *TABLE_NUMBERS[name]))}

    names = ("gpus", "stages", "tp_outlines", "tp_links", "pp_paths", "dp_paths")
    # Placed GPUs are the first cells (cluster_plan's rank order): "idle" only after them.
    by_state = {"data": csv_data(tables.placed), "key": "key", "fields": ["placed"], "default": "0"}
    placed = [_calc(" + '|' + ".join(controls), "key"), {"lookup": "key", "from": by_state}]
    diagram = _diagram({name: data(name) for name in names}, state, placed)
    notes = _notes(data("notes"), tables.note_texts, state)
    return {"vconcat": [diagram, _key(), notes], "spacing": 6}
