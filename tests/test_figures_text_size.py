"""Every figure the book shows is legible at the size it is shown.

A chapter's figure is an SVG sized as a PNG at 100 dpi would be, shown at
its natural width or scaled down to the article column
(:data:`~lesson_lib.figures._style.COLUMN_PX`). Its smallest text, once
shown, must be at least the site's smallest body text
(:data:`~lesson_lib.figures._style.TEXT_FLOOR_PX`). The browser test
``tests/browser/test_browser_figure_text.py`` ties both constants to the
built page.

The figures are listed in :data:`BOOK_FIGURES`, keyed by the chapter and
the very call its code cell makes; a test reads the chapters and fails when
a call is missing from the table (a new figure, or new arguments), so no
figure escapes the check.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from lesson_lib.figures import (
    algorithms,
    allreduce,
    batching,
    cluster,
    experts,
    kv_transfer,
    lab,
    latency,
    measured,
    payloads,
    prefill,
    sizing,
    tails,
)
from lesson_lib.figures._style import (
    COLUMN_PX,
    PHONE_COLUMN_PX,
    PHONE_TEXT_FLOOR_PX,
    TEXT_FLOOR_PX,
    _shown_texts,
    _smallest_shown_text_px,
    new_figure,
)
from lesson_lib.model.specimen import FAST, SLOW

BOOK = Path(__file__).resolve().parents[1] / "book"


@cache
def _lab_runs() -> dict[str, object]:
    """What the lab chapter passes its figures, from the shipped reference measurements.

    The chapter measures live while the book is built and falls back to
    these same references when MPI cannot start; its four-rank sweep stops
    at 64 KiB.
    """
    from lesson_lib.lab.fit import fit_measurement
    from lesson_lib.lab.pingpong import load_reference_pingpong
    from lesson_lib.lab.records import load_reference

    two, four = load_reference(2), load_reference(4)
    return {
        "two": two,
        "fit": fit_measurement(two),
        "four": four,
        "pingpong": load_reference_pingpong().latency_s,
    }


def _measured_vs_model() -> Figure:
    runs = _lab_runs()
    return lab.measured_vs_model(runs["two"], runs["fit"], pingpong_latency=runs["pingpong"])


def _compare_ranks() -> Figure:
    runs = _lab_runs()
    return lab.compare_ranks([runs["two"], runs["four"]])


#: (chapter, call as its code cell writes it) -> the same figure, built here.
BOOK_FIGURES: dict[tuple[str, str], Callable[[], Figure]] = {
    ("index", "breakdown_figure(title=None, include_bandwidth=False)"): lambda: (
        latency.breakdown_figure(title=None, include_bandwidth=False)
    ),
    ("sizing", "kv_context_figure()"): sizing.kv_context_figure,
    ("sizing", "tp_budget_figure()"): sizing.tp_budget_figure,
    ("allreduce", "ring_topology_figure(4)"): lambda: allreduce.ring_topology_figure(4),
    ("allreduce", "ring_schedule_figure(4)"): lambda: allreduce.ring_schedule_figure(4),
    ("allreduce", "ring_bytes_figure(16)"): lambda: allreduce.ring_bytes_figure(16),
    ("payloads", "payload_vs_bandwidth_figure()"): payloads.payload_vs_bandwidth_figure,
    ("latency", "token_timeline_figure()"): latency.token_timeline_figure,
    ("latency", "breakdown_figure()"): latency.breakdown_figure,
    ("latency", "speedup_curves_figure()"): latency.speedup_curves_figure,
    ("measured", "fixed_vs_hop_figure()"): latency.fixed_vs_hop_figure,
    ("tails", "tails_figure()"): tails.tails_figure,
    ("algorithms", "latency_by_n_figure()"): algorithms.latency_by_n_figure,
    ("algorithms", "time_by_size_figure()"): algorithms.time_by_size_figure,
    ("measured", "measured_latency_figure()"): measured.measured_latency_figure,
    ("batching", "batch_figure()"): batching.batch_figure,
    ("experts", "collectives_figure()"): experts.collectives_figure,
    ("experts", "tp_vs_ep_figure()"): experts.tp_vs_ep_figure,
    ("prefill", "prefill_breakdown_figure((FAST, SLOW), 4)"): lambda: (
        prefill.prefill_breakdown_figure((FAST, SLOW), 4)
    ),
    ("prefill", "alpha_beta_figure((FAST, SLOW), 2)"): lambda: prefill.alpha_beta_figure(
        (FAST, SLOW), 2
    ),
    ("kv_transfer", "handoff_vs_context_figure()"): kv_transfer.handoff_vs_context_figure,
    ("kv_transfer", "handoff_timeline_figure()"): kv_transfer.handoff_timeline_figure,
    ("cluster", "layout_figure()"): cluster.layout_figure,
    (
        "lab",
        "measured_vs_model(run2.measurement, run2.fit, pingpong_latency=pingpong.latency_s)",
    ): _measured_vs_model,
    ("lab", "compare_ranks([run2.measurement, run4.measurement])"): _compare_ranks,
}

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)


def _figure_calls(source: str) -> list[str]:
    """Calls, in a chapter's code cells, of a name the chapter imports from ``lesson_lib.figures``."""
    trees = []
    for cell in _CELL.findall(source):
        code = re.sub(r"\A---\n.*?^---\n", "", cell, flags=re.S | re.M)  # cell options
        code = "\n".join(line for line in code.splitlines() if not line.startswith(":"))
        trees.append((code, ast.parse(code)))
    names = {
        alias.asname or alias.name
        for _, tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lesson_lib.figures")
        for alias in node.names
    }
    return [
        ast.get_source_segment(code, node)
        for code, tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
    ]


def _book_calls() -> set[tuple[str, str]]:
    return {
        (path.stem, " ".join(call.split()))
        for path in sorted(BOOK.glob("*.md"))
        for call in _figure_calls(path.read_text(encoding="utf-8"))
    }


def test_the_table_holds_every_figure_the_book_shows():
    """Each figure call in book/*.md is in BOOK_FIGURES, and the table holds nothing else."""
    found = _book_calls()
    assert len(found) >= 15, "the chapters' figure cells were not found"
    missing = found - set(BOOK_FIGURES)
    assert not missing, f"add these chapters' figures to BOOK_FIGURES: {sorted(missing)}"
    stale = set(BOOK_FIGURES) - found
    assert not stale, f"no chapter makes these figures any more: {sorted(stale)}"


def test_figure_calls_are_found_in_a_cell():
    """Calls of builders the page imports are found in any cell, with or without cell options."""
    source = (
        "```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    name: x\n---\n"
        "from lesson_lib.figures.allreduce import ring_bytes_figure as rb\n\nrb(\n    16,\n)\n```\n"
        "```{code-cell} ipython3\n:tags: [hide-input]\nprint(len([1]))\nrb(2)\n```\n"
    )
    assert _figure_calls(source) == ["rb(\n    16,\n)", "rb(2)"]


@pytest.mark.parametrize("key", sorted(BOOK_FIGURES), ids=lambda key: f"{key[0]}:{key[1][:40]}")
def test_every_text_is_at_least_the_body_text(key):
    """Once scaled to the column, no text of the figure is smaller than the page's smallest text."""
    fig = BOOK_FIGURES[key]()
    natural, texts = _shown_texts(fig)
    small = [f"{t.text!r} {t.points:g} pt = {t.px:.1f} px" for t in texts if t.px < TEXT_FLOOR_PX]
    assert not small, (
        f"{key[0]}: {key[1]} is {natural:.0f} px wide, shown at "
        f"{min(1, COLUMN_PX / natural):.0%}; under {TEXT_FLOOR_PX} px: {small}"
    )


@pytest.mark.parametrize("key", sorted(BOOK_FIGURES), ids=lambda key: f"{key[0]}:{key[1][:40]}")
def test_every_text_is_readable_on_a_phone(key):
    """Scaled to a 390 px phone's column, no text of the figure is under PHONE_TEXT_FLOOR_PX.

    The figure is shown at PHONE_COLUMN_PX / natural width there, so a text
    of p points is p x 100/72 x 342 / natural px: 10 pt needs a natural
    width of at most 528 px.
    """
    fig = BOOK_FIGURES[key]()
    natural, texts = _shown_texts(fig, column_px=PHONE_COLUMN_PX)
    small = [f"{t.text!r} {t.points:g} pt = {t.px:.1f} px" for t in texts]
    small = [s for s, t in zip(small, texts, strict=True) if t.px < PHONE_TEXT_FLOOR_PX]
    assert not small, (
        f"{key[0]}: {key[1]} is {natural:.0f} px wide, shown on a phone at "
        f"{PHONE_COLUMN_PX / natural:.0%}; under {PHONE_TEXT_FLOOR_PX} px: {small}"
    )


def test_the_phone_measure_fails_a_book_width_figure():
    """A 6.5 in figure with 10 pt text, 661 px wide, shows it at 13.9 x 342/661 = 7.2 px."""
    fig, ax = new_figure(6.5, 3.0)
    ax.tick_params(labelsize=10)
    natural, texts = _shown_texts(fig, column_px=PHONE_COLUMN_PX)
    assert 640 < natural < 670
    assert texts[0].px == pytest.approx(10 * 100 / 72 * 342 / natural)
    assert texts[0].px < PHONE_TEXT_FLOOR_PX
    fig, ax = new_figure(5.0, 3.0)  # 10 pt on about 500 px: 9.5 px
    ax.tick_params(labelsize=10)
    assert _smallest_shown_text_px(fig, column_px=PHONE_COLUMN_PX) >= PHONE_TEXT_FLOOR_PX


def test_the_measure_fails_small_text():
    """A 6 pt text on a narrow figure is too small; 10 pt is not."""
    fig, ax = new_figure(5.0, 3.0)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    assert _smallest_shown_text_px(fig) == pytest.approx(6 * 100 / 72)
    assert _smallest_shown_text_px(fig) < TEXT_FLOOR_PX
    fig, ax = new_figure(5.0, 3.0)
    ax.set_title("ten", fontsize=10)
    ax.tick_params(labelsize=10)
    assert _smallest_shown_text_px(fig) == pytest.approx(10 * 100 / 72)
    assert _smallest_shown_text_px(fig) >= TEXT_FLOOR_PX


def test_the_measure_fails_a_wide_figure():
    """A 12 in figure is shown at 672 / about 1,200 px, so its 10 pt text falls under the floor."""
    fig, ax = new_figure(12.0, 3.0)
    ax.tick_params(labelsize=10)
    natural, texts = _shown_texts(fig)
    assert natural > 1150
    assert texts[0].px == pytest.approx(10 * 100 / 72 * COLUMN_PX / natural)
    assert _smallest_shown_text_px(fig) < TEXT_FLOOR_PX
    # The same figure in a column as wide as itself is not scaled.
    assert _smallest_shown_text_px(fig, column_px=natural) == pytest.approx(10 * 100 / 72)


def test_the_measure_counts_only_drawn_text():
    """Invisible and empty texts and tick labels outside the limits do not count."""
    fig, ax = new_figure(5.0, 3.0)
    ax.text(0.1, 0.1, "hidden", fontsize=4, visible=False)
    ax.text(0.1, 0.2, " ", fontsize=4)
    ax.set_xticks([0, 0.5, 1, 5], ["0", "0.5", "1", "out"])
    ax.set_xlim(0, 1)
    _, texts = _shown_texts(fig)
    shown = [t.text for t in texts]
    assert "hidden" not in shown and " " not in shown and "out" not in shown
    assert {"0", "0.5", "1"} <= set(shown)
    assert _smallest_shown_text_px(Figure()) == float("inf")
    with pytest.raises(ValueError, match="column_px must be > 0"):
        _smallest_shown_text_px(fig, column_px=0)
