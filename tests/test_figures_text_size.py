"""Every figure the book shows is legible at the size it is shown, and no text collides.

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

Each figure is drawn once (:func:`_book_figure`); the same drawing gives
the sizes of its texts and the boxes they take, in pixels of the whole
figure as drawn before the tight crop. No two texts may overlap or run
together on a line, a label in the data area may not leave its axes or
sit on a line's marker, a label inside a bar or an image's cell may not
leave it, and no text may leave the figure: a text that only fits because
the PNG is cropped to its ink is cut as soon as the crop is not made.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from figure_texts import ShownText, shown_texts
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

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
    overlap,
    payloads,
    prefill,
    sizing,
    tails,
)
from lesson_lib.figures._style import (
    BOOK_DPI,
    COLUMN_PX,
    PHONE_COLUMN_PX,
    PHONE_TEXT_FLOOR_PX,
    TEXT_FLOOR_PX,
    new_figure,
    note,
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
    ("index", "breakdown_figure(title=None, include_bandwidth=False, width=4.2)"): lambda: (
        latency.breakdown_figure(title=None, include_bandwidth=False, width=4.2)
    ),
    ("sizing", "kv_context_figure()"): sizing.kv_context_figure,
    ("sizing", "tp_budget_figure()"): sizing.tp_budget_figure,
    ("allreduce", "ring_topology_figure(4)"): lambda: allreduce.ring_topology_figure(4),
    ("allreduce", "ring_schedule_figure(4)"): lambda: allreduce.ring_schedule_figure(4),
    ("allreduce", "ring_bytes_figure(16)"): lambda: allreduce.ring_bytes_figure(16),
    ("payloads", "payload_vs_bandwidth_figure()"): payloads.payload_vs_bandwidth_figure,
    ("latency", "token_timeline_figure()"): latency.token_timeline_figure,
    ("latency", "breakdown_figure(include_bandwidth=False)"): lambda: latency.breakdown_figure(
        include_bandwidth=False
    ),
    ("latency", "speedup_curves_figure()"): latency.speedup_curves_figure,
    ("measured", "fixed_vs_hop_figure()"): latency.fixed_vs_hop_figure,
    ("tails", "tails_figure()"): tails.tails_figure,
    ("algorithms", "latency_by_n_figure()"): algorithms.latency_by_n_figure,
    ("algorithms", "time_by_size_figure()"): algorithms.time_by_size_figure,
    ("algorithms", "allreduce_anatomy_figure()"): algorithms.allreduce_anatomy_figure,
    ("measured", "measured_latency_figure()"): measured.measured_latency_figure,
    ("batching", "batch_figure()"): batching.batch_figure,
    ("experts", "collectives_figure()"): experts.collectives_figure,
    ("experts", "tp_vs_ep_figure()"): experts.tp_vs_ep_figure,
    ("overlap", "overlap_figure()"): overlap.overlap_figure,
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


#: Pixels two boxes may share, or a box may pass its bound by, before it counts: rounding.
SLACK_PX = 2.0
#: Least gap between two texts on one line, px: about a space of 10 pt text (0.32 em of
#: 13.9 px); closer, "32 KiB" and "256 KiB" read as "32 KiB256 KiB".
GAP_PX = 4.0


@dataclass(frozen=True)
class _Placed:
    """Where a text was drawn and what must hold it, px of the whole figure."""

    box: Bbox
    #: The axes of a label in the data area (an annotation, ``ax.text``), else None.
    axes: Bbox | None
    #: The bar or image cell the label's centre lies in, else None.
    cell: Bbox | None


def _cell(text: Text, box: Bbox, renderer: object) -> Bbox | None:
    """The bar, or the cell of an image, that holds the centre of a data-area label."""
    ax = text.axes
    x, y = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
    bars = [bar for c in ax.containers if isinstance(c, BarContainer) for bar in c.patches]
    for bar in bars:
        if bar.get_window_extent(renderer).contains(x, y):
            return bar.get_window_extent(renderer)
    data_x, data_y = ax.transData.inverted().transform((x, y))
    for image in ax.images:
        left, right, bottom, top = image.get_extent()
        rows, cols = image.get_array().shape[:2]
        across, down = (
            (data_x - left) / (right - left) * cols,
            (data_y - top) / (bottom - top) * rows,
        )
        if 0 <= across < cols and 0 <= down < rows:
            width, height = (right - left) / cols, (bottom - top) / rows
            corner = (left + math.floor(across) * width, top + math.floor(down) * height)
            far = (corner[0] + width, corner[1] + height)
            points = ax.transData.transform([corner, far])
            return Bbox([points.min(axis=0), points.max(axis=0)])
    return None


@contextmanager
def _placed_texts() -> Iterator[dict[Text, _Placed]]:
    """Each visible, non-empty text's place the first time it draws meanwhile.

    The first draw is of the whole figure: a tight crop draws it again, shifted.
    """
    placed: dict[Text, _Placed] = {}
    original = Text.draw

    def draw(self: Text, renderer: object) -> None:
        if self.get_visible() and self.get_text().strip() and self not in placed:
            box = Text.get_window_extent(self, renderer)  # the text alone, no arrow
            inside = self.axes is not None and self in self.axes.texts
            placed[self] = _Placed(
                box.frozen(),
                self.axes.bbox.frozen() if inside else None,
                _cell(self, box, renderer) if inside else None,
            )
        original(self, renderer)

    Text.draw = draw  # type: ignore[method-assign]
    try:
        yield placed
    finally:
        Text.draw = original  # type: ignore[method-assign]


def _outside(box: Bbox, bound: Bbox) -> bool:
    return bool(
        box.x0 < bound.x0 - SLACK_PX
        or box.y0 < bound.y0 - SLACK_PX
        or box.x1 > bound.x1 + SLACK_PX
        or box.y1 > bound.y1 + SLACK_PX
    )


def _on_a_marker(text: Text, box: Bbox) -> str | None:
    """The label of the first line of ``text``'s axes with a marker under ``box``, else None.

    A marker counts by its drawn square, size plus edge, px; the box is shrunk by
    :data:`SLACK_PX`, so a label may graze a marker but not sit on it.
    """
    inner = Bbox.from_extents(
        box.x0 + SLACK_PX, box.y0 + SLACK_PX, box.x1 - SLACK_PX, box.y1 - SLACK_PX
    )
    for line in text.axes.lines:
        if not line.get_visible() or line.get_marker() in (None, "None", "", " "):
            continue
        half = (line.get_markersize() + line.get_markeredgewidth()) * BOOK_DPI / 72 / 2
        for x, y in line.get_transform().transform(line.get_xydata()):
            if inner.x0 - half < x < inner.x1 + half and inner.y0 - half < y < inner.y1 + half:
                return line.get_label()
    return None


def _collisions(fig: Figure, placed: dict[Text, _Placed]) -> list[str]:
    """Texts that overlap or run together, sit on a marker, leave their axes, bar or cell or figure."""
    width, height = fig.get_size_inches() * BOOK_DPI
    page = Bbox.from_bounds(0, 0, width, height)
    found = []
    items = [(text.get_text(), where) for text, where in placed.items()]
    for i, (artist, (text, where)) in enumerate(zip(placed, items, strict=True)):
        for bound, name in (
            (page, "the figure"),
            (where.axes, "its axes"),
            (where.cell, "its bar or cell"),
        ):
            if bound is not None and _outside(where.box, bound):
                found.append(f"{text!r} leaves {name}")
        if where.axes is not None and (line := _on_a_marker(artist, where.box)):
            found.append(f"{text!r} is on a marker of {line!r}")
        for other, there in items[i + 1 :]:
            a, b = where.box, there.box
            shared = min(a.y1, b.y1) - max(a.y0, b.y0)
            gap = max(a.x0, b.x0) - min(a.x1, b.x1)
            if shared > SLACK_PX and gap < GAP_PX:
                found.append(
                    f"{text!r} and {other!r} "
                    + ("overlap" if gap < 0 else f"are {gap:.1f} px apart")
                )
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    for legend in legends:
        frame, own = legend.get_window_extent(), {*legend.get_texts(), legend.get_title()}
        for text, where in placed.items():
            box = where.box
            across = min(box.x1, frame.x1) - max(box.x0, frame.x0)
            down = min(box.y1, frame.y1) - max(box.y0, frame.y0)
            if text not in own and across > SLACK_PX and down > SLACK_PX:
                found.append(f"{text.get_text()!r} is under the legend")
    return found


@dataclass(frozen=True)
class _Drawn:
    """One drawing of a figure: the PNG's width, its texts' sizes, its collisions."""

    natural: float
    texts: list[ShownText]
    collisions: list[str]


def _draw(fig: Figure) -> _Drawn:
    with _placed_texts() as placed:
        natural, texts = shown_texts(fig)
    return _Drawn(natural, texts, _collisions(fig, placed))


@cache
def _book_figure(key: tuple[str, str]) -> _Drawn:
    """The book's figure ``key`` drawn once for all the tests of this module (one worker runs it)."""
    return _draw(BOOK_FIGURES[key]())


_KEYS = pytest.mark.parametrize(
    "key", sorted(BOOK_FIGURES), ids=lambda key: f"{key[0]}:{key[1][:40]}"
)


@_KEYS
def test_every_text_is_at_least_the_body_text(key):
    """Once scaled to the column, no text of the figure is smaller than the page's smallest text."""
    drawn = _book_figure(key)
    small = [
        f"{t.text!r} {t.points:g} pt = {t.px:.1f} px" for t in drawn.texts if t.px < TEXT_FLOOR_PX
    ]
    assert not small, (
        f"{key[0]}: {key[1]} is {drawn.natural:.0f} px wide, shown at "
        f"{min(1, COLUMN_PX / drawn.natural):.0%}; under {TEXT_FLOOR_PX} px: {small}"
    )


@_KEYS
def test_every_text_is_readable_on_a_phone(key):
    """Scaled to a 390 px phone's column, no text of the figure is under PHONE_TEXT_FLOOR_PX.

    The figure is shown at PHONE_COLUMN_PX / natural width there, so a text
    of p points is p x 100/72 x 342 / natural px: 10 pt needs a natural
    width of at most 528 px.
    """
    drawn = _book_figure(key)
    scale = min(1, PHONE_COLUMN_PX / drawn.natural)
    small = [
        f"{t.text!r} {t.points:g} pt = {t.points * BOOK_DPI / 72 * scale:.1f} px"
        for t in drawn.texts
        if t.points * BOOK_DPI / 72 * scale < PHONE_TEXT_FLOOR_PX
    ]
    assert not small, (
        f"{key[0]}: {key[1]} is {drawn.natural:.0f} px wide, shown on a phone at "
        f"{scale:.0%}; under {PHONE_TEXT_FLOOR_PX} px: {small}"
    )


@_KEYS
def test_no_text_collides(key):
    """No two texts overlap or run together; none leaves its axes, its bar or cell, or the figure."""
    collisions = _book_figure(key).collisions
    assert not collisions, f"{key[0]}: {key[1]}: {collisions}"


def test_the_collision_check_finds_each_kind():
    """Tick labels run together, a label over the frame, one out of its bar or off the figure."""
    fig, ax = new_figure(5.0, 3.0)
    ax.set_xticks([0, 1], ["6 sequences", "16 sequences"])  # 96 px apart, 98 px wide together
    ax.set_xlim(-0.5, 3.5)
    note(ax, "32 KiB", (2.5, 0.5), 0, 0, ha="right")
    note(ax, "256 KiB", (2.5, 0.5), 1.5, 0, ha="left")  # 2 px after it
    ax.text(1.0, 0.5, "lesson: slow", transform=ax.transAxes)  # starts on the right frame
    bars = ax.bar([0, 1], [1, 1], 0.1)
    ax.bar_label(bars, ["13.5 GB", "8"], label_type="center")
    fig.text(0.0, 0.98, "cropped", ha="right")
    found = _draw(fig).collisions
    assert any(f.startswith("'6 sequences' and '16 sequences' ") for f in found), found
    assert "'32 KiB' and '256 KiB' are 2.1 px apart" in found
    assert "'lesson: slow' leaves its axes" in found
    assert "'13.5 GB' leaves its bar or cell" in found and "'8' leaves its bar or cell" not in found
    assert "'cropped' leaves the figure" in found
    fig, ax = new_figure(5.0, 3.0)
    ax.imshow([[1, 2, 3, 4]], aspect="auto")
    ax.text(0, 0, "0+1+2+3+4+5", ha="center")  # wider than its cell of the image
    ax.text(2, 0, "2", ha="center")
    assert _draw(fig).collisions == [
        "'0+1+2+3+4+5' leaves its axes",
        "'0+1+2+3+4+5' leaves its bar or cell",
    ]
    fig, ax = new_figure(5.0, 3.0)
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="upper left")
    ax.text(0.02, 0.95, "2.68 ms", transform=ax.transAxes, va="top")  # where the legend sits
    assert "'2.68 ms' is under the legend" in _draw(fig).collisions
    # A 6 pt marker with a 1 pt edge reaches (6 + 1) / 2 pt = 4.9 px from its centre: a label
    # starting 1 pt (1.4 px) right of the centre is on it, one 8 pt (11.1 px) right is clear.
    fig, ax = new_figure(5.0, 3.0)
    ax.plot([0, 2], [0.5, 0.5], "o", ms=6, mew=1, label="dots")
    ax.set_xlim(-1, 4)
    note(ax, "N=16", (0, 0.5), 1, -4)
    note(ax, "N=2", (2, 0.5), 8, -4)
    assert _draw(fig).collisions == ["'N=16' is on a marker of 'dots'"]


def _smallest_px(fig: Figure, column_px: float = COLUMN_PX) -> float:
    """The smallest shown text of ``fig`` in CSS px once in a column ``column_px`` wide."""
    texts = shown_texts(fig, column_px)[1]
    return texts[0].px if texts else float("inf")


def test_the_phone_measure_fails_a_book_width_figure():
    """A 6.5 in figure with 10 pt text, 661 px wide, shows it at 13.9 x 342/661 = 7.2 px."""
    fig, ax = new_figure(6.5, 3.0)
    ax.tick_params(labelsize=10)
    natural, texts = shown_texts(fig, column_px=PHONE_COLUMN_PX)
    assert 640 < natural < 670
    assert texts[0].px == pytest.approx(10 * 100 / 72 * 342 / natural)
    assert texts[0].px < PHONE_TEXT_FLOOR_PX
    fig, ax = new_figure(5.0, 3.0)  # 10 pt on about 500 px: 9.5 px
    ax.tick_params(labelsize=10)
    assert _smallest_px(fig, column_px=PHONE_COLUMN_PX) >= PHONE_TEXT_FLOOR_PX


def test_the_measure_fails_small_text():
    """A 6 pt text on a narrow figure is too small; 10 pt is not."""
    fig, ax = new_figure(5.0, 3.0)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    assert _smallest_px(fig) == pytest.approx(6 * 100 / 72)
    assert _smallest_px(fig) < TEXT_FLOOR_PX
    fig, ax = new_figure(5.0, 3.0)
    ax.set_title("ten", fontsize=10)
    ax.tick_params(labelsize=10)
    assert _smallest_px(fig) == pytest.approx(10 * 100 / 72)
    assert _smallest_px(fig) >= TEXT_FLOOR_PX


def test_the_measure_fails_a_wide_figure():
    """A 12 in figure is shown at 672 / about 1,200 px, so its 10 pt text falls under the floor."""
    fig, ax = new_figure(12.0, 3.0)
    ax.tick_params(labelsize=10)
    natural, texts = shown_texts(fig)
    assert natural > 1150
    assert texts[0].px == pytest.approx(10 * 100 / 72 * COLUMN_PX / natural)
    assert _smallest_px(fig) < TEXT_FLOOR_PX
    # The same figure in a column as wide as itself is not scaled.
    assert _smallest_px(fig, column_px=natural) == pytest.approx(10 * 100 / 72)


def test_the_measure_counts_only_drawn_text():
    """Invisible and empty texts and tick labels outside the limits do not count."""
    fig, ax = new_figure(5.0, 3.0)
    ax.text(0.1, 0.1, "hidden", fontsize=4, visible=False)
    ax.text(0.1, 0.2, " ", fontsize=4)
    ax.set_xticks([0, 0.5, 1, 5], ["0", "0.5", "1", "out"])
    ax.set_xlim(0, 1)
    _, texts = shown_texts(fig)
    shown = [t.text for t in texts]
    assert "hidden" not in shown and " " not in shown and "out" not in shown
    assert {"0", "0.5", "1"} <= set(shown)
    assert _smallest_px(Figure()) == float("inf")
    with pytest.raises(ValueError, match="column_px must be > 0"):
        _smallest_px(fig, column_px=0)
