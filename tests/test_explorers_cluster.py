"""The cluster explorer: every state is plan_cluster's, invalid layouts say why in its words.

A layout that cannot exist, or that the explorer does not place (PP with EP),
prices nothing and draws no GPU.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
import time

import pytest

from lesson_lib.chapters.cluster import _cluster_numbers
from lesson_lib.explorers.cluster import CONTROLS, NOT_MODELLED, NOT_PRICED, cluster_explorer
from lesson_lib.explorers.cluster_chart import _key_height, phone_layout
from lesson_lib.explorers.cluster_diagram import (
    FLAG,
    GPUS_PER_NODE_VALUES,
    NODE_VALUES,
    NOTHING,
    PHONE_WIDTH,
    PROBLEM,
    VIEW_HEIGHT,
    VIEW_WIDTH,
    _phone_transform,
    _view_transforms,
    _zoom,
    frames,
)
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL
from lesson_lib.model.units import format_count, format_seconds

NAMES = [c.name for c in CONTROLS]
#: The models offered, written out: the specimen and Qwen3-235B-A22B.
MODELS = {"specimen": MODEL, "qwen3_235b": PRESETS["Qwen3-235B-A22B"]}
QWEN = {"model": "qwen3_235b", "pp": 1}


@pytest.fixture(scope="module")
def explorer():
    return cluster_explorer()


def _plan(state):
    """plan_cluster for a state: the group is TP for the specimen, EP for the MoE.

    None for PP with the MoE, which the explorer does not place.
    """
    model, g, n, group, pp = (state[n] for n in NAMES)
    if model == "specimen":
        return plan_cluster(MODEL, GPU, g, n, group, pp, intra=FAST, inter=INTER_NODE)
    if pp > 1:
        return None
    spec = MODELS[model]
    return plan_cluster(spec, GPU, g, n, 1, 1, intra=FAST, inter=INTER_NODE, ep=group)


def _flat(text: str) -> str:
    return text.replace("\n", " ")


def _sample(explorer, k=80, seed=3):
    """A random sample of states plus both ends of every control."""
    rows = random.Random(seed).sample(explorer.rows, k)
    for control in CONTROLS:
        rows += [explorer.row(**{control.name: v}) for v in (control.values[0], control.values[-1])]
    return [{n: r[n] for n in NAMES} for r in rows]


def _read_csv(data):
    """Rows of an inline CSV data object, its number columns as numbers, empty fields None."""
    numbers = {c for c, kind in data["format"]["parse"].items() if kind == "number"}
    rows = []
    for row in csv.DictReader(io.StringIO(data["values"])):
        rows.append(
            {c: None if v == "" else float(v) if c in numbers else v for c, v in row.items()}
        )
    return rows


def _shipped(explorer):
    """The spec's named data, read back from its CSV: {name: (columns, rows)} (built once)."""
    tables = explorer.__dict__.setdefault("_test_tables", {})
    if not tables:

        def walk(node):
            if isinstance(node, dict):
                data = node.get("data")
                if isinstance(data, dict) and "name" in data:
                    header = data["values"].split("\n", 1)[0].split(",")
                    tables[data["name"]] = (header, _read_csv(data))
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(explorer.spec())
    return tables


def _table(explorer, name, state):
    """The rows of the shipped table ``name`` for one state."""
    key = tuple(state[n] if n == "model" else float(state[n]) for n in NAMES)
    index = explorer.__dict__.setdefault("_test_index", {})
    if name not in index:
        index[name] = {}
        for row in _shipped(explorer)[name][1]:
            index[name].setdefault(tuple(row[n] for n in NAMES), []).append(row)
    return index[name].get(key, [])


def test_worked_example_at_the_defaults(explorer):
    """Two nodes of four as TP 4 x PP 2: valid, 5.34 ms alone, 36 sequences at 1,254 tokens/s."""
    assert explorer.defaults == {
        "model": "specimen",
        "gpus_per_node": 4,
        "nodes": 2,
        "group": 4,
        "pp": 2,
    }
    text = explorer.message_for()
    glued = _cluster_numbers()
    assert text.startswith("Qwen3.8-27B, 8 GPUs (2 x 4), TP 4 x PP 2 x DP 1: valid;")
    assert "5.34 ms per token" in text and glued["pp2_token_time"] == "5.34 ms"
    assert f"1 PP send {glued['pp_send']}, 1 across nodes" in text
    assert f"Batched, {glued['pp2_sequences']} full-length sequences per replica" in text
    assert f"{glued['pp2_batched_time']} a token each" in text
    assert f"{glued['pp2_tokens_per_s']} tokens/s from 1 replica" in text
    assert f"weights {glued['pp2_weights'].removesuffix(' GB')} of" in text


def test_controls_offer_the_candidates_sizes_and_refused_cuts():
    """Sizes of the candidate layouts, up to 8 GPUs x 4 nodes, with TP 3 and PP 3; EP to 32."""
    values = {c.name: c.values for c in CONTROLS}
    assert values["model"] == ("specimen", "qwen3_235b")
    assert values["gpus_per_node"] == (1, 2, 4, 8) and values["nodes"] == (1, 2, 3, 4)
    assert values["group"] == (1, 2, 3, 4, 8, 16, 32) and 3 in values["pp"]
    assert all(c.input == "radio" for c in CONTROLS)


def _priced(plan):
    """Whether the explorer should price this state: placed, and no problem."""
    return plan is not None and not plan.problems


def test_every_state_is_plan_clusters(explorer):
    """Verdict, times, throughput and memory in the message equal plan_cluster's."""
    for state in _sample(explorer):
        plan, row = _plan(state), explorer.row(**state)
        text = _flat(explorer.message_for(**state))
        if plan is None:
            assert "not placed: PP is not modelled with EP" in text
            continue
        assert row["dp"] == plan.dp
        degrees = f"EP {plan.ep}" if plan.ep > 1 else f"TP {plan.tp} x PP {plan.pp}"
        gpus = plan.tp * plan.pp * plan.ep  # one replica's, when not one fits
        assert f", {degrees} {f'x DP {plan.dp}' if plan.dp else f'needs {gpus} GPUs'}:" in text
        if plan.problems:
            assert "cannot exist" in text
            assert f"Problem: {plan.problems[0]}" in text
            continue
        assert f"One sequence: {format_seconds(plan.token_time_s, 'ms')} per token" in text
        if plan.tp > 1:
            assert f"TP all-reduces {format_seconds(plan.step.communication_s, 'ms')}" in text
        if plan.ep > 1:
            assert f"EP all-to-alls {format_seconds(plan.step.communication_s, 'ms')}" in text
        if plan.pp > 1:
            assert f"{format_seconds(plan.pp_send_s, 'us', decimals=1)}, " in text
            assert f"{plan.pp_network_boundaries} across nodes" in text
        assert ": valid" in text
        if plan.flags:
            assert f"Flag: {plan.flags[0]}" in text
        if plan.batch:
            assert f"{format_seconds(plan.batched_token_time_s, 'ms')} a token each" in text
            assert f"{format_count(plan.tokens_per_s_total)} tokens/s from" in text


def test_layouts_that_cannot_exist_price_nothing_and_draw_no_gpu(explorer):
    """Every state with a problem, or not placed, has no time, no rate and no GPU drawn."""
    unpriced = 0
    for row in explorer.rows:
        state = {n: row[n] for n in NAMES}
        text = explorer.message_for(**state)
        if _priced(_plan(state)):
            assert NOT_PRICED not in text and "per token" in text, state
            assert _table(explorer, "gpus", state), state
            continue
        unpriced += 1
        # not placed (PP with EP) is not modelled; a placed layout with a problem cannot be built
        assert text.endswith(NOT_MODELLED if _plan(state) is None else NOT_PRICED), state
        assert " ms" not in text and "tokens/s" not in text and "One sequence" not in text
        for name in ("gpus", "stages", "tp_outlines", "tp_links", "pp_paths", "dp_paths"):
            assert _table(explorer, name, state) == [], (name, state)
    # the specimen's TP 3 or PP 4 x 2 GPUs, the MoE's PP, EP 1 to 4: far more than 100 states
    assert unpriced > 100


def test_the_no_replica_layout_of_the_reader_prices_nothing(explorer):
    """TP 4 x PP 2 on one GPU: "no complete replica fits" and no time per token beside it."""
    text = _flat(explorer.message_for(gpus_per_node=1, nodes=1))
    assert "cannot exist" in text and "but the cluster has only 1" in text
    assert "One sequence" not in text and text.endswith(NOT_PRICED)
    # says why (4 x 2 = 8 GPUs a replica), never "DP 0"
    assert "1 GPU (1 x 1), TP 4 x PP 2 needs 8 GPUs: cannot exist" in text
    assert "DP 0" not in text
    assert "TP 4 x PP 4 needs 16 GPUs: cannot exist" in _flat(explorer.message_for(pp=4))
    assert "EP 32 needs 32 GPUs" in _flat(explorer.message_for(model="qwen3_235b", group=32, pp=1))


def test_ep_inside_the_nvlink_domain_and_across_nodes(explorer):
    """Qwen3-235B-A22B as EP 8: on one node of eight its all-to-alls ride NVLink, on two
    nodes of four the network.

    By hand from its config: 94 layers, all MoE, two all-to-alls each (dispatch and
    combine) = 188 per token. Their latency alone is 188 x 10 us = 1.88 ms on the
    lesson's NVLink-class fabric and 188 x 25 us = 4.70 ms on the assumed network, so
    the two layouts differ by at least 4.70 - 1.88 = 2.82 ms per token.
    """
    inside = _flat(explorer.message_for(**QWEN, gpus_per_node=8, nodes=1, group=8))
    across = _flat(explorer.message_for(**QWEN, gpus_per_node=4, nodes=2, group=8))
    assert "Qwen3-235B-A22B, 8 GPUs (1 x 8), EP 8 x DP 1: valid;" in inside
    assert "188 EP all-to-alls" in inside and "on NVLink" in inside and "Flag" not in inside
    assert "valid, 1 flag below" in across and "188 EP all-to-alls" in across
    assert "across nodes" in across and "run on the network" in across
    p_in = _plan({**QWEN, "gpus_per_node": 8, "nodes": 1, "group": 8})
    p_across = _plan({**QWEN, "gpus_per_node": 4, "nodes": 2, "group": 8})
    assert p_in.step.latency_s == pytest.approx(188 * 10e-6)
    assert p_across.step.latency_s == pytest.approx(188 * 25e-6)
    assert p_across.token_time_s - p_in.token_time_s >= 2.82e-3
    # the diagram: one EP group, outlined green inside the node, dashed across two
    state_in = {**QWEN, "gpus_per_node": 8, "nodes": 1, "group": 8}
    state_across = {**QWEN, "gpus_per_node": 4, "nodes": 2, "group": 8}
    labels = sorted(d["label"] for d in _table(explorer, "gpus", state_in))
    assert labels == [f"EP{i}" for i in range(8)]
    assert {d["across_nodes"] for d in _table(explorer, "tp_outlines", state_in)} == {0}
    assert {d["across_nodes"] for d in _table(explorer, "tp_outlines", state_across)} == {1}
    assert len(_table(explorer, "tp_links", state_across)) == 1


def test_group_lines_across_nodes_pass_no_gpu(explorer):
    """EP 32 on 4 nodes of 8: three lines, node to node, none over a GPU's square (its label).

    Drawn centre to centre they ran through EP5, EP9, EP14 ...; now each starts at the right
    edge of the group's piece on one node and ends at the left edge of its piece on the next.
    """
    links = _table(explorer, "tp_links", {**QWEN, "gpus_per_node": 8, "nodes": 4, "group": 32})
    squares = [
        f for f in frames() if f["kind"] == "cell" and (f["gpus_per_node"], f["nodes"]) == (8, 4)
    ]
    assert len(links) == 3 and len(squares) == 32
    for link in links:
        assert link["x2"] > link["x"]
        for t in (i / 100 for i in range(101)):
            x = link["x"] + t * (link["x2"] - link["x"])
            y = link["y"] + t * (link["y2"] - link["y"])
            assert not any(f["x"] < x < f["x2"] and f["y"] < y < f["y2"] for f in squares), link


def test_ep_refusals_name_their_reason(explorer):
    """Too few experts' GPUs, an EP that does not divide 128 experts, and PP with EP.

    By hand: 128 experts over EP 3 leave 128 mod 3 = 2 over; EP 4 holds 128 / 4 = 32
    experts per GPU, more than 84.93 GB of weights.
    """
    three = _flat(explorer.message_for(**QWEN, group=3))
    assert "cannot exist" in three and "EP = 3 does not divide the 128 experts" in three
    four = _flat(explorer.message_for(**QWEN, gpus_per_node=4, nodes=1, group=4))
    assert "cannot exist" in four and "more than the card's 84.93 GB" in four
    pp = _flat(explorer.message_for(model="qwen3_235b", group=8, pp=2))
    assert "EP 8 x PP 2: not placed: PP is not modelled with EP; set PP 1" in pp
    assert pp.endswith(NOT_MODELLED) and "cannot be built" not in pp
    notes = _notes(explorer, {**explorer.defaults, "model": "qwen3_235b"})
    assert {kind for kind, _ in notes} == {PROBLEM}


def test_the_diagram_keeps_one_frame(explorer):
    """Its scales are the view's pixels in every state: nothing rescales between states.

    Marks sit at ``vx``, ``vy``: the tables' pixels, moved only on a phone. The y domain ends at
    the view's top (250) and is as tall as the view, whose height follows the drawing.
    """
    diagram = explorer.spec()["vconcat"][1]["vconcat"][0]
    domains = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "quantitative" and isinstance(node.get("scale"), dict):
                ends = [
                    d.get("expr", d) if isinstance(d, dict) else d for d in node["scale"]["domain"]
                ]
                domains.append((node["field"], tuple(ends)))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(diagram)
    fixed = {("vx", (0, VIEW_WIDTH)), ("mid", (0, VIEW_WIDTH))}
    tall = (f"{VIEW_HEIGHT} - diagram_height", VIEW_HEIGHT)
    fixed |= {("vy", tall), ("mid_y", tall), ("text_y", tall)}
    assert domains and set(domains) <= fixed


def test_the_diagram_is_the_plans_placement(explorer):
    """GPUs, their stages, TP or EP groups, hand-offs and DP links follow plan_cluster's
    placement, in every state that is priced."""
    priced = [s for s in _sample(explorer, k=len(explorer.rows)) if _priced(_plan(s))]
    assert len(priced) > 40
    for state in priced:
        plan = _plan(state)
        g = state["gpus_per_node"]
        gpus = _table(explorer, "gpus", state)
        cells = sorted(s.node * g + s.slot for s in plan.placement)
        assert sorted(d["cell"] for d in gpus) == cells
        stages = {s.node * g + s.slot: f"S{s.stage}" for s in plan.placement}
        assert all(d["stage"] == stages[d["cell"]] for d in gpus)
        key = [d["stage"] for d in _table(explorer, "stages", state)]
        assert key == sorted(set(stages.values()))
        outlines = _table(explorer, "tp_outlines", state)
        if plan.tp == 1 and plan.ep == 1:
            assert outlines == []
        else:
            split = {d["across_nodes"] for d in outlines}
            assert split <= {0, 1} and split
            assert (1 in split) == (plan.tp_crosses_nodes or plan.ep_crosses_nodes)
        arrows = {d["path"] for d in _table(explorer, "pp_paths", state)}
        assert len(arrows) == plan.dp * (plan.pp - 1)
        links = {d["path"] for d in _table(explorer, "dp_paths", state)}
        assert len(links) <= max(plan.dp - 1, 0)


def test_the_lessons_layout_is_drawn_as_by_hand(explorer):
    """TP 4 x PP 2 on two nodes of four: eight GPUs, stage 0 on node 0 and stage 1 on node 1,
    two green outlines, no DP arc, and one hand-off across the network routed as the figure's:
    from node 0's group down into the band, along it and up into node 1's, pointing up (0
    degrees). In cells (the figure's test) it runs x 3.05, 3.05, 8.7, 8.7 and y 0.04, -2.025,
    -2.025, 0.04; in the wide view's pixels, 48.506 a cell (test_phone_transform_of_the_lessons_
    layout_by_hand) from x 60.494 and y 148.138: x 60.494 + 48.506 x 3.05 = 208.4 and
    60.494 + 48.506 x 8.7 = 482.5, y 148.138 - 48.506 x 2.025 = 49.9 and
    148.138 + 48.506 x 0.04 = 150.1."""
    state = explorer.defaults
    gpus = {d["cell"]: d for d in _table(explorer, "gpus", state)}
    assert sorted(gpus) == list(range(8))
    assert [gpus[c]["stage"] for c in range(8)] == ["S0"] * 4 + ["S1"] * 4
    assert gpus[0]["label"] == "TP0|S0" and gpus[7]["label"] == "TP3|S1"
    assert [d["stage"] for d in _table(explorer, "stages", state)] == ["S0", "S1"]
    outlines = _table(explorer, "tp_outlines", state)
    assert [(d["first_cell"], d["last_cell"], d["across_nodes"]) for d in outlines] == [
        (0, 3, 0),
        (4, 7, 0),
    ]
    assert _table(explorer, "tp_links", state) == []
    hand_off = sorted(_table(explorer, "pp_paths", state), key=lambda d: d["point"])
    assert {d["path"] for d in hand_off} == {1}
    assert [(d["x"], d["y"]) for d in hand_off] == [
        (208.4, 150.1), (208.4, 49.9), (482.5, 49.9), (482.5, 150.1)
    ]  # fmt: skip
    assert [d["across_nodes"] for d in hand_off] == [1, 1, 1, 1]
    assert [d["head_angle"] for d in hand_off] == [None, None, None, 0]
    assert _table(explorer, "dp_paths", state) == []


def test_only_a_hand_off_between_whole_nodes_is_routed_through_the_band(explorer):
    """Four points (the band's route) where each stage fills a node and hands off to the next,
    else the figure's line or arc of two or three points (ClusterGrid.pp_band_route)."""
    for state, points in (
        ({"gpus_per_node": 2, "nodes": 2, "group": 2, "pp": 2}, [4]),  # a whole node of 2
        ({"pp": 2}, [4]),  # the lesson's layout, node 0 to node 1
        ({"nodes": 4, "pp": 2}, [2, 2]),  # node 0 to 2 and 1 to 3: routes would share the band
        ({"group": 2, "pp": 2}, [2, 2]),  # a stage is half a node
    ):
        rows = _table(explorer, "pp_paths", {**explorer.defaults, **state})
        paths = sorted({d["path"] for d in rows})
        assert [sum(d["path"] == p for d in rows) for p in paths] == points, state


def _note_texts(explorer):
    """The notes' texts by id, read from the spec's lookup table (built once)."""
    texts = explorer.__dict__.setdefault("_test_notes", {})
    if not texts:
        notes_view = explorer.spec()["vconcat"][1]["vconcat"][2]
        table = notes_view["transform"][-1]["from"]["data"]["values"]
        for row in csv.DictReader(io.StringIO(table)):
            texts[int(row["id"])] = row["text"]
    return texts


def _notes(explorer, state):
    """The lines listed under the diagram for a state, with their kinds, in order."""
    texts = _note_texts(explorer)
    notes = sorted(_table(explorer, "notes", state), key=lambda d: d["line"])
    return [(d["note_kind"], texts[d["note"]]) for d in notes]


def test_every_problem_and_flag_is_listed_under_the_diagram(explorer):
    """The notes are lesson_lib's problems then flags, whole, in order."""
    for state in _sample(explorer, k=60, seed=11):
        plan = _plan(state)
        notes = _notes(explorer, state)
        joined = " ".join(text for _, text in notes)
        if plan is None:
            assert joined.startswith("Not placed: PP is not modelled with EP")
            assert {kind for kind, _ in notes} == {PROBLEM}
            continue
        for problem in plan.problems:
            assert f"Problem: {problem}" in joined
        for flag in plan.flags:
            assert f"Flag: {flag}" in joined
        kinds = [kind for kind, _ in notes]
        if plan.problems or plan.flags:
            assert kinds == sorted(kinds, key=[PROBLEM, FLAG].index)
        else:
            assert notes == [(NOTHING, "No problems and no flags.")]


def test_invalid_layouts_say_why_in_lesson_libs_words(explorer):
    """TP 3 x PP 3 on 8 GPUs: the head groups and the GPU count are each refused."""
    state = {**explorer.defaults, "group": 3, "pp": 3}
    text = _flat(explorer.message_for(**state))
    plan = _plan(state)
    assert len(plan.problems) >= 3
    assert f"cannot exist ({len(plan.problems)} problems, all listed below)" in text
    assert f"Problem: {plan.problems[0]}" in text and "KV heads" in text
    assert text.endswith(NOT_PRICED)
    listed = " ".join(t for kind, t in _notes(explorer, state) if kind == PROBLEM)
    for needle in ("KV heads", "FFN intermediate channels", "only 8"):
        assert needle in listed


def test_flags_and_single_gpu(explorer):
    """TP 8 on two nodes of four is flagged twice; one GPU has no all-reduces."""
    text = _flat(explorer.message_for(group=8, pp=1))
    assert ": valid, 2 flags below" in text and "4 KV heads" in text
    single = _flat(explorer.message_for(gpus_per_node=1, nodes=1, group=1, pp=1))
    assert "no TP all-reduces" in single and "Batched, 1 full-length sequence per" in single
    assert "x DP 2" in explorer.message_for(nodes=4)
    assert "from 2 replicas" in explorer.message_for(nodes=4)


def test_every_cell_a_state_draws_is_in_the_frames(explorer):
    """Each GPU and TP outline looks up its cells: every cell it names exists."""
    tables = _shipped(explorer)
    frames = tables["frames"][1]
    keys = {(f["gpus_per_node"], f["nodes"], f["cell"]) for f in frames if f["kind"] == "cell"}
    named = [(d, d["cell"]) for d in tables["gpus"][1]]
    named += [(d, d[c]) for d in tables["tp_outlines"][1] for c in ("first_cell", "last_cell")]
    for d, cell in named:
        assert (d["gpus_per_node"], d["nodes"], cell) in keys


def test_every_state_lists_its_notes(explorer):
    """The list under the diagram has a line for every state, numbered from 0 without gaps."""
    for row in explorer.rows:
        lines = sorted(d["line"] for d in _table(explorer, "notes", row))
        assert lines == list(range(len(lines))) and lines, row


#: What each shipped table holds, written out: the controls, then named columns.
STATE = ["model", "gpus_per_node", "nodes", "group", "pp"]
HEADERS = {
    "frames": ["gpus_per_node", "nodes", "kind", "node", "cell", "x", "y", "x2", "y2", "zoom"],
    "gpus": [*STATE, "cell", "stage", "label"],
    "stages": [*STATE, "stage"],
    "tp_outlines": [*STATE, "first_cell", "last_cell", "across_nodes"],
    "tp_links": [*STATE, "x", "y", "x2", "y2"],
    "pp_paths": [*STATE, "path", "point", "across_nodes", "head_angle", "x", "y"],
    "dp_paths": [*STATE, "path", "point", "x", "y"],
    "notes": [*STATE, "line", "note", "note_kind", "para"],
}


def test_the_diagram_ships_one_named_table_per_kind_of_mark(explorer):
    """Each table has the documented columns and every column is filled in every row."""
    tables = _shipped(explorer)
    assert {name: header for name, (header, _) in tables.items()} == HEADERS
    for name, (header, rows) in tables.items():
        assert rows, name
        optional = {"frames": {"node", "cell", "zoom"}, "pp_paths": {"head_angle"}}.get(name, ())
        for column in set(header) - set(optional):
            assert all(r[column] is not None for r in rows), (name, column)


def test_message_and_spec_stay_small(explorer):
    """Lines of at most ~106 characters (the page's column), no doubled spaces; spec < 500 KB.

    The page's own budget is 1.5 MB (test_explorer_pages.py); this explorer's two models
    and seven group sizes take about 450 KB.
    """
    lines = [line for r in explorer.rows for line in explorer.message.render(r).split("\n")]
    assert max(map(len, lines)) <= 106
    assert not any("  " in line or line != line.strip() for line in lines)
    assert max(explorer.message.render(r).count("\n") + 1 for r in explorer.rows) <= 5
    assert len(json.dumps(explorer.spec())) < 500_000
    assert len(explorer.rows) == len(list(itertools.product(*(c.values for c in CONTROLS))))


def test_builds_fast():
    start = time.perf_counter()
    cluster_explorer().spec()
    assert time.perf_counter() - start < 3.0  # about 0.15 s on a quiet machine


def test_phone_transform_of_the_lessons_layout_by_hand():
    """Two nodes of four GPUs: the phone draws the wide view's pixels 0.5943 times as large.

    In cells the layout is 2 x (4 + 2 x 0.35) + 1.3 = 10.7 wide, 11.1 with the
    margins, and 4.35 tall (2.1 over the GPUs' base, 2.25 under it to the network band's
    bottom); the view keeps 250 - 24 (stage key) - 15 (the band's 11 px name under it, 4 px
    of room) = 211 px of height.
    Wide: min(60, 640 / 11.1 = 57.66, 211 / 4.35 = 48.506) = 48.506 px a cell.
    Phone: min(60, 320 / 11.1 = 28.829, 48.506) = 28.829 px a cell; k = 0.5943.
    Offsets centre the cells' middle along x, 5.35, and put their top, 2.1, at the view's top:
    x: 320 - 48.506 x 5.35 = 60.494 wide, 160 - 28.829 x 5.35 = 5.766 phone,
    b = 5.766 - 0.5943 x 60.494 = -30.19; y: 250 - 48.506 x 2.1 = 148.138 wide,
    250 - 28.829 x 2.1 = 189.459 phone, b = 189.459 - 0.5943 x 148.138 = 101.42.
    Heights the views need: 48.506 x 4.35 = 211 + 15 + 24 = 250 wide; on the phone
    28.829 x 4.35 = 125.4, so 126, + 15 + 24 = 165.
    """
    k, bx, by = _phone_transform(4, 2)
    assert k == pytest.approx(0.5943, abs=1e-4)
    assert bx == pytest.approx(-30.19, abs=0.01)
    assert by == pytest.approx(101.42, abs=0.01)
    assert (_zoom(4, 2)[3], _zoom(4, 2, PHONE_WIDTH)[3]) == (250, 165)
    # One GPU on one node is as tall-limited on the phone as wide (60 px a cell):
    # same size, moved left by half the difference of the widths, (640 - 320) / 2.
    assert _phone_transform(1, 1) == pytest.approx((1.0, -160.0, 0.0))


def test_every_cluster_size_fits_the_phone_view(explorer):
    """Every node box, cell and band, moved by its size's phone transform, lies in 0..320 px."""
    frames = _shipped(explorer)["frames"][1]
    transforms = _view_transforms()
    assert len(transforms) == len(GPUS_PER_NODE_VALUES)
    for f in frames:
        g, n = int(f["gpus_per_node"]), int(f["nodes"])
        k, bx, by = _phone_transform(g, n)
        for x in (f["x"], f["x2"]):
            assert 0 <= k * x + bx <= PHONE_WIDTH, f
        for y in (f["y"], f["y2"]):
            assert 0 <= k * y + by <= VIEW_HEIGHT, f
        # the chart's row: x in the x scale's domain, 640 wide drawn 320 wide (x 2)
        row = transforms[GPUS_PER_NODE_VALUES.index(g)][NODE_VALUES.index(n)]
        assert row == pytest.approx([2 * k, 2 * bx, k, by], abs=2e-3)


def test_key_rows_on_a_phone_by_hand():
    """The key's five entries, 40 px + 6.2 px a character each, in 640 and in 320 px.

    Widths 176.4, 232.2, 219.8, 170.2 and 89.6 px: 640 px holds the first
    three (628.4) then the last two, 2 rows, 40 px tall; 320 px holds one a
    row but the last two (259.8), 4 rows, 80 px tall.
    """
    assert _key_height(VIEW_WIDTH) == 40
    assert _key_height(PHONE_WIDTH) == 80
    assert phone_layout()["views"]["key"] == {"width": PHONE_WIDTH, "height": 80}


def test_the_phone_layout_names_views_and_params_the_spec_has(explorer):
    """What explorers.js sets on a phone exists in the spec: the views by name, the param."""
    spec = explorer.spec()
    names = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("name"), str) and ("mark" in node or "layer" in node):
                names.append(node["name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    narrow = spec["usermeta"]["narrow"]
    assert narrow == phone_layout()
    for view in [*narrow["views"], *(a["view"] for a in narrow["asText"])]:
        assert names.count(view) == 1, view
    params = {p["name"]: p for p in spec["params"]}
    assert params["phone"] == {"name": "phone", "value": False}
    assert set(narrow["params"]) == {"phone"}
    assert params["view_t"]["expr"].startswith("phone ? ")


def test_notes_paragraphs_are_one_problem_or_flag_each(explorer):
    """A phone joins a note's lines by ``para``: each paragraph is one whole problem or flag."""
    for state in [{**explorer.defaults, "group": 3, "pp": 3}, {**explorer.defaults, "group": 8,
                                                                 "pp": 1}]:  # fmt: skip
        plan = _plan(state)
        rows = sorted(_table(explorer, "notes", state), key=lambda d: d["line"])
        texts = _note_texts(explorer)
        paragraphs: dict[float, list[str]] = {}
        for d in rows:
            paragraphs.setdefault(d["para"], []).append(texts[d["note"]])
        joined = [" ".join(lines) for _, lines in sorted(paragraphs.items())]
        want = [f"Problem: {p}" for p in plan.problems] + [f"Flag: {f}" for f in plan.flags]
        assert joined == want and len(want) >= 2
