"""The cluster explorer: every state is plan_cluster's, invalid layouts say why in its words."""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
import time

import pytest

from lesson_lib.cluster import cluster_numbers, plan_cluster
from lesson_lib.explorers.cluster import (
    CONTROLS,
    DETAIL_COLUMNS,
    FLAG,
    INSIDE,
    K_DP,
    K_GPU,
    K_NOTE,
    K_PP,
    K_TP_RUN,
    PROBLEM,
    SPLIT,
    _frames,
    cluster_explorer,
)
from lesson_lib.specimen import FAST, GPU, INTER_NODE, MODEL
from lesson_lib.units import format_count, format_seconds

NAMES = [c.name for c in CONTROLS]


@pytest.fixture(scope="module")
def explorer():
    return cluster_explorer()


def _plan(state):
    return plan_cluster(MODEL, GPU, *(state[n] for n in NAMES), intra=FAST, inter=INTER_NODE)


def _flat(text: str) -> str:
    return text.replace("\n", " ")


def _sample(explorer, k=80, seed=3):
    """A random sample of states plus both ends of every control."""
    rows = random.Random(seed).sample(explorer.rows, k)
    for control in CONTROLS:
        rows += [explorer.row(**{control.name: v}) for v in (control.values[0], control.values[-1])]
    return [{n: r[n] for n in NAMES} for r in rows]


def _by_state(explorer):
    """The details indexed by state (built once per explorer)."""
    index = explorer.__dict__.setdefault("_test_index", {})
    if not index:
        for d in explorer.details:
            index.setdefault(tuple(d[n] for n in NAMES), []).append(d)
    return index


def _details(explorer, state, kind):
    return [d for d in _by_state(explorer)[tuple(state[n] for n in NAMES)] if d["kind"] == kind]


def test_worked_example_at_the_defaults(explorer):
    """Two nodes of four as TP 4 x PP 2: valid, 5.34 ms alone, 36 sequences at 1,254 tokens/s."""
    assert explorer.defaults == {"gpus_per_node": 4, "nodes": 2, "tp": 4, "pp": 2}
    text = explorer.message_for()
    glued = cluster_numbers()
    assert text.startswith("8 GPUs (2 x 4) as TP 4 x PP 2 x DP 1: valid;")
    assert "5.34 ms per token" in text and glued["pp2_token_time"] == "5.34 ms"
    assert f"1 PP send {glued['pp_send']}, 1 across nodes" in text
    assert f"Batched, {glued['pp2_sequences']} full-length sequences per replica" in text
    assert f"{glued['pp2_batched_time']} per token each" in text
    assert f"{glued['pp2_tokens_per_s']} tokens/s in all (1 replica)" in text
    assert f"weights {glued['pp2_weights']} of" in text


def test_controls_offer_the_candidates_sizes_and_refused_cuts():
    """Sizes of the candidate layouts, up to 8 GPUs x 4 nodes, with TP 3 and PP 3."""
    values = {c.name: c.values for c in CONTROLS}
    assert values["gpus_per_node"] == (1, 2, 4, 8) and values["nodes"] == (1, 2, 3, 4)
    assert 3 in values["tp"] and 3 in values["pp"] and 8 in values["tp"]
    assert all(c.input == "radio" for c in CONTROLS)


def test_every_state_is_plan_clusters(explorer):
    """Verdict, times, throughput and memory in the message equal plan_cluster's."""
    for state in _sample(explorer):
        plan, row = _plan(state), explorer.row(**state)
        text = _flat(explorer.message_for(**state))
        assert row["dp"] == plan.dp
        assert f"as TP {plan.tp} x PP {plan.pp} x DP {plan.dp}:" in text
        assert f"One sequence: {format_seconds(plan.token_time_s, 'ms')} per token" in text
        if plan.tp > 1:
            assert f"TP all-reduces {format_seconds(plan.step.communication_s, 'ms')}" in text
        if plan.pp > 1:
            assert f"{format_seconds(plan.pp_send_s, 'us', decimals=1)}, " in text
            assert f"{plan.pp_network_boundaries} across nodes" in text
        if plan.problems:
            assert "not a valid layout" in text
            assert f"Problem: {plan.problems[0]}" in text
        else:
            assert f"{format_seconds(plan.token_time_s, 'ms')} per token" in text
            assert ": valid" in text
            if plan.flags:
                assert f"Flag: {plan.flags[0]}" in text
        if plan.dp and plan.batch:
            assert f"{format_seconds(plan.batched_token_time_s, 'ms')} per token each" in text
            assert f"{format_count(plan.tokens_per_s_total)} tokens/s in all" in text
        elif plan.dp == 0:
            assert "no complete replica fits in this cluster" in text


def test_the_diagram_is_the_plans_placement(explorer):
    """GPUs, their stages, TP groups, hand-offs and DP links follow plan_cluster's placement."""
    for state in _sample(explorer, k=40, seed=5):
        plan = _plan(state)
        g = state["gpus_per_node"]
        gpus = _details(explorer, state, K_GPU)
        assert sorted(d["a"] for d in gpus) == sorted(s.node * g + s.slot for s in plan.placement)
        stages = {s.node * g + s.slot: f"S{s.stage}" for s in plan.placement}
        assert all(d["v"] == stages[d["a"]] for d in gpus)
        runs = _details(explorer, state, K_TP_RUN)
        if plan.tp == 1:
            assert runs == []
        else:
            assert {d["v"] for d in runs} <= {INSIDE, SPLIT}
            assert (SPLIT in {d["v"] for d in runs}) == plan.tp_crosses_nodes or plan.dp == 0
        arrows = {d["a"] for d in _details(explorer, state, K_PP)}
        assert len(arrows) == plan.dp * (plan.pp - 1)
        links = {d["a"] for d in _details(explorer, state, K_DP)}
        assert len(links) <= max(plan.dp - 1, 0)


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
    notes = sorted(_details(explorer, state, K_NOTE), key=lambda d: d["a"])
    return [(d["v"], texts[d["b"]]) for d in notes]


def test_every_problem_and_flag_is_listed_under_the_diagram(explorer):
    """The notes are lesson_lib's problems then flags, whole, in order."""
    for state in _sample(explorer, k=60, seed=11):
        plan = _plan(state)
        notes = _notes(explorer, state)
        joined = " ".join(text for _, text in notes)
        for problem in plan.problems:
            assert f"Problem: {problem}" in joined
        for flag in plan.flags:
            assert f"Flag: {flag}" in joined
        kinds = [kind for kind, _ in notes]
        if plan.problems or plan.flags:
            assert kinds == sorted(kinds, key=[PROBLEM, FLAG].index)
        else:
            assert joined == "No problems and no flags."


def test_invalid_layouts_say_why_in_lesson_libs_words(explorer):
    """TP 3 x PP 3 on 8 GPUs: head groups, super-blocks and GPU count are each refused."""
    state = {"gpus_per_node": 4, "nodes": 2, "tp": 3, "pp": 3}
    text = _flat(explorer.message_for(**state))
    plan = _plan(state)
    assert len(plan.problems) >= 4
    assert f"not a valid layout ({len(plan.problems)} problems, all listed below)" in text
    assert f"Problem: {plan.problems[0]}" in text and "KV heads" in text
    assert "no complete replica fits in this cluster" in text
    listed = " ".join(t for kind, t in _notes(explorer, state) if kind == PROBLEM)
    for needle in ("KV heads", "16 super-blocks", "only 8"):
        assert needle in listed


def test_flags_and_single_gpu(explorer):
    """TP 8 on two nodes of four is flagged twice; one GPU has no all-reduces."""
    text = _flat(explorer.message_for(tp=8, pp=1))
    assert ": valid, 2 flags below" in text and "4 KV heads" in text
    single = _flat(explorer.message_for(gpus_per_node=1, nodes=1, tp=1, pp=1))
    assert "no TP all-reduces" in single and "Batched, 1 full-length sequence per" in single
    assert "x DP 2" in explorer.message_for(nodes=4) and "(2 replicas)" in explorer.message_for(
        nodes=4
    )


def test_every_cell_a_state_draws_is_in_the_frames(explorer):
    """Each GPU and TP run looks up its cell: every key it asks for exists."""
    keys = {(f["gpus_per_node"], f["nodes"], f["cell"]) for f in _frames() if f["kind"] == "cell"}
    for d in explorer.details:
        if d["kind"] in (K_GPU, K_TP_RUN):
            for cell in (d["a"], d["b"]) if d["kind"] == K_TP_RUN else (d["a"],):
                assert (d["gpus_per_node"], d["nodes"], cell) in keys


def test_message_and_spec_stay_small(explorer):
    """Lines of at most ~106 characters (the page's column), no doubled spaces; spec < 350 KB."""
    assert all(tuple(d) == DETAIL_COLUMNS for d in explorer.details)
    lines = [line for r in explorer.rows for line in explorer.message.render(r).split("\n")]
    assert max(map(len, lines)) <= 106
    assert not any("  " in line or line != line.strip() for line in lines)
    assert max(explorer.message.render(r).count("\n") + 1 for r in explorer.rows) <= 5
    assert len(json.dumps(explorer.spec())) < 350_000
    assert len(explorer.rows) == len(list(itertools.product(*(c.values for c in CONTROLS))))


def test_builds_fast():
    start = time.perf_counter()
    cluster_explorer().spec()
    assert time.perf_counter() - start < 3.0  # about 0.15 s on a quiet machine
