"""The ring stepper: its states are the simulated ring all-reduce's, step by step."""

from __future__ import annotations

import json
import time

import pytest

from lesson_lib.explorers.allreduce import (
    CELL_FORM_EXPR,
    CONTROLS,
    DETAIL_COLUMNS,
    MAX_STEP,
    _cell_form,
    ring_explorer,
)
from lesson_lib.model.collectives import allreduce_wire_bytes
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.tensor_parallel import simulate_hidden_allreduce
from lesson_lib.model.units import KiB

N_VALUES = CONTROLS[0].values


@pytest.fixture(scope="module")
def explorer():
    return ring_explorer()


@pytest.fixture(scope="module")
def rings():
    return {n: simulate_hidden_allreduce(MODEL, n) for n in N_VALUES}


def _details(explorer, n, step):
    return [d for d in explorer.details if d["n"] == n and d["step"] == step]


def test_worked_example_at_the_defaults(explorer):
    """N = 4, step 3: each rank has sent 3 chunks of 2,560 B = 7,680 B; the whole is 15,360 B."""
    assert explorer.defaults == {"n": 4, "step": 3}
    text = explorer.message_for()
    assert "after step 3 of 6 (reduce-scatter done)" in text
    assert "7,680 B (7.5 KiB), 0.75 x the payload of 10,240 B" in text
    assert "1.5 x payload = 15,360 B (15 KiB) per rank" in text
    assert text.count("\n") == 2


def test_controls_cover_the_old_ranges():
    """N from 2 to 8, and the step slider through every step of the largest ring."""
    assert N_VALUES == tuple(range(2, 9))
    assert CONTROLS[1].values == tuple(range(2 * (max(N_VALUES) - 1) + 1)) == tuple(range(15))
    assert MAX_STEP == 14


def test_every_state_is_the_simulators(explorer, rings):
    """Every N and every step (both ends included): bytes, holdings, senders, bars."""
    for n, result in rings.items():
        last = len(result.steps)
        payload = float(sum(result.chunk_bytes))
        for step in CONTROLS[1].values:
            at = min(step, last)
            row = explorer.row(n=n, step=step)
            sent = result.bytes_sent_after(at)
            span = f"{max(sent):,}" if min(sent) == max(sent) else f"{min(sent):,} to {max(sent):,}"
            assert row["so_far"].startswith(f"{span} B (")
            assert row["sim_total"] == f"{max(result.bytes_sent):,} B"
            whole = allreduce_wire_bytes(payload, n)
            assert row["total"].startswith(f"{whole:,.2f}".removesuffix(".00"))
            received = {(t.dst, t.chunk): t.src for t in result.steps[at - 1]} if at else {}
            cells = [d for d in _details(explorer, n, step) if d["chunk"] != ""]
            bars = [d for d in _details(explorer, n, step) if d["chunk"] == ""]
            assert len(cells) == n * n and len(bars) == n
            for d in cells:
                held = result.holdings[at][d["rank"]][d["chunk"]]
                assert d["k"] == len(held)
                assert d["src"] == received.get((d["rank"], d["chunk"]), "")
                if n <= 5 and len(held) < n:
                    assert d["label"].split("\n")[0] == "+".join(map(str, sorted(held)))
            for d in bars:
                assert d["kib"] == pytest.approx(sent[d["rank"]] / KiB, abs=1e-4)
                assert d["whole"] == pytest.approx(allreduce_wire_bytes(payload, n) / KiB, abs=1e-4)


def test_phases_follow_the_schedule(explorer, rings):
    """Each message names the phase of the simulator's transfers at that step."""
    for n, result in rings.items():
        for step in range(1, len(result.steps) + 1):
            phase = result.steps[step - 1][0].phase
            assert f"({phase}" in explorer.message_for(n=n, step=step)
    assert "before any transfer" in explorer.message_for(step=0)
    assert "every rank holds the whole sum" in explorer.message_for(step=6)


def test_steps_past_the_end_show_the_final_state_and_say_so(explorer, rings):
    """N = 2 at step 14 (the slider's far end) is the state after its last step, said plainly."""
    for n, result in rings.items():
        last = len(result.steps)
        final = [{**d, "step": None} for d in _details(explorer, n, last)]
        for step in range(last + 1, MAX_STEP + 1):
            text = explorer.message_for(n=n, step=step)
            assert (
                f"step {step} is past the last step ({last}): the state after step {last}" in text
            )
            assert [{**d, "step": None} for d in _details(explorer, n, step)] == final
            assert text.split("\n")[1:] == explorer.message_for(n=n, step=last).split("\n")[1:]
    assert "past the last step" not in explorer.message_for(n=8, step=14)


def test_uneven_chunks_show_a_range(explorer, rings):
    """N = 3 splits 5120 elements 1707/1707/1706: the message gives the min..max per rank."""
    sent = rings[3].bytes_sent_after(4)
    assert min(sent) != max(sent)
    text = explorer.message_for(n=3, step=4)
    assert f"{min(sent):,} to {max(sent):,} B (13.33 KiB)" in text
    assert "13,653.33 B" in text  # the formula's fractional bytes


def test_details_have_one_shape_and_the_spec_stays_small(explorer):
    """Every detail row has every column (the CSV header is the first row's), spec < 350 KB."""
    assert all(tuple(d) == DETAIL_COLUMNS for d in explorer.details)
    spec = explorer.spec()
    header = spec["vconcat"][1]["data"]["values"].split("\n", 1)[0]
    assert header.split(",") == list(DETAIL_COLUMNS)
    assert len(json.dumps(spec)) < 350_000
    lines = [line for r in explorer.rows for line in explorer.message.render(r).split("\n")]
    assert max(map(len, lines)) <= 102


def test_builds_fast():
    start = time.perf_counter()
    ring_explorer().spec()
    assert time.perf_counter() - start < 2.0  # 0.1 s on a quiet machine


def test_the_cells_form_is_said_where_it_changes(explorer):
    """Up to 5 ranks a cell lists its contributors, above that it counts them, and says so.

    N = 5 after step 2: rank 2's chunk 0 has its own part and ranks 0's and 1's
    (the ring sends chunk c from rank c onwards), so the listing reads 0+1+2; at
    N = 6 the same copy reads 3/6.
    """
    assert "(0+1+2)" in _cell_form(5) and "(4/8)" in _cell_form(6)
    assert "above 5 ranks" in _cell_form(8)
    assert CELL_FORM_EXPR.startswith("n <= 5 ? ")
    small = {d["label"].split("\n")[0] for d in _details(explorer, 5, 2) if d["chunk"] != ""}
    large = {d["label"].split("\n")[0] for d in _details(explorer, 6, 2) if d["chunk"] != ""}
    assert any("+" in label for label in small) and not any("/" in label for label in small)
    assert any("/" in label for label in large) and not any("+" in label for label in large)
    grid = explorer.spec()["vconcat"][1]["vconcat"][1]["hconcat"][0]
    assert any(
        t.get("calculate") == CELL_FORM_EXPR for layer in grid["layer"]
        for t in layer.get("transform", [])
    )  # fmt: skip


def test_the_step_is_a_row_of_buttons_and_the_axes_stay(explorer):
    """One button per step (a phone wraps them); the bars' axis is the same in every state:
    2.05 x the 10,240 B payload = 20.5 KiB, above the whole 2 x 7/8 = 1.75 x of N = 8."""
    step = next(c for c in CONTROLS if c.name == "step")
    assert step.input == "radio" and step.values == tuple(range(15))
    bars = explorer.spec()["vconcat"][1]["vconcat"][1]["hconcat"][1]
    assert bars["layer"][0]["encoding"]["y"]["scale"] == {"domain": [0, 20.5]}
