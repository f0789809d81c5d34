"""Where the cluster drawing puts each node, GPU and link, in GPU cells (y up).

The figure (:mod:`lesson_lib.figures.cluster`) and the explorer
(:mod:`lesson_lib.explorers.cluster`) draw the same layout from this grid:
nodes side by side, each GPU a cell in rows of at most four, row 0 on top.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from lesson_lib.model.cluster_plan import GpuSlot

CELL = 1.0  # one GPU cell
GPU = 0.78  # drawn square inside the cell
PAD = 0.35  # node box padding
FOOT = 0.55  # extra room at the bottom of a node box for its name
GAP = 1.3  # between node boxes
MAX_COLS = 4
#: Top of the network band under the nodes.
BAND = -PAD - FOOT - 0.9

Point = tuple[float, float]


@dataclass(frozen=True)
class ClusterGrid:
    """The cells of a cluster with ``gpus_per_node`` GPUs in each node."""

    #: GPUs in each node.
    gpus_per_node: int

    @property
    def cols(self) -> int:
        """GPU cells across a node."""
        return min(self.gpus_per_node, MAX_COLS)

    @property
    def rows(self) -> int:
        """GPU cells down a node."""
        return math.ceil(self.gpus_per_node / self.cols)

    def node_x(self, node: int) -> float:
        """Left side of a node's box."""
        return node * (self.cols * CELL + 2 * PAD + GAP)

    def width(self, nodes: int) -> float:
        """Width of ``nodes`` boxes side by side."""
        return self.node_x(nodes - 1) + self.cols * CELL + 2 * PAD

    def cell(self, node: int, slot: int) -> Point:
        """Lower-left corner of a GPU cell; row 0 is the top row."""
        col, row = slot % self.cols, slot // self.cols
        return self.node_x(node) + PAD + col * CELL, (self.rows - 1 - row) * CELL

    def center(self, slots: Sequence[GpuSlot]) -> Point:
        """Middle of a group's cells."""
        xs, ys = zip(*(self.cell(s.node, s.slot) for s in slots), strict=True)
        return sum(xs) / len(xs) + CELL / 2, sum(ys) / len(ys) + CELL / 2

    def edge(self, slots: Sequence[GpuSlot], side: str) -> Point:
        """Middle of the ``"top"``, ``"left"`` or ``"right"`` edge of a group's cells."""
        x, y = self.center(slots)
        xs = [self.cell(s.node, s.slot)[0] for s in slots]
        if side == "left":
            return min(xs), y
        if side == "right":
            return max(xs) + CELL, y
        return x, max(self.cell(s.node, s.slot)[1] for s in slots) + CELL

    def runs(self, group: Sequence[GpuSlot]) -> list[list[GpuSlot]]:
        """A group's GPUs by row of a node: one outline each."""
        runs: dict[tuple[int, int], list[GpuSlot]] = {}
        for s in group:
            runs.setdefault((s.node, s.slot // self.cols), []).append(s)
        return list(runs.values())

    def network_links(self, runs: Sequence[Sequence[GpuSlot]]) -> list[tuple[Point, Point]]:
        """Lines joining a group's pieces on consecutive nodes, box edge to box edge (past no GPU)."""
        return [
            (self.edge(a, "right"), self.edge(b, "left"))
            for a, b in pairwise(runs)
            if a[0].node != b[0].node
        ]

    def pp_band_route(
        self, here: Sequence[GpuSlot], there: Sequence[GpuSlot]
    ) -> list[Point] | None:
        """A hand-off to the next node as the network carries it, else None.

        From the sending group's bottom edge down into the network band, along its middle and up
        to the receiving group's bottom edge, right of each node's wire to the band (its name is at
        the left): sent 0.7 cells right of the wire, received 0.35, so a node's two never meet.
        None unless each group is the whole of a one-row node at least two GPUs wide (nothing
        lies below it) and the receiving node is the next one (no two routes share the band).
        """
        whole = all(
            len(g) == self.gpus_per_node and len({s.node for s in g}) == 1 for g in (here, there)
        )
        if not whole or self.rows > 1 or self.cols < 2 or there[0].node != here[0].node + 1:
            return None
        (x1, _), (x2, _) = self.center(here), self.center(there)
        y, band = 0.04, BAND - 0.225  # the TP outline's bottom edge; the band's middle
        return [(x1 + 0.7, y), (x1 + 0.7, band), (x2 + 0.35, band), (x2 + 0.35, y)]

    def pp_ends(
        self, here: Sequence[GpuSlot], there: Sequence[GpuSlot]
    ) -> tuple[Point, Point, float]:
        """Ends and curvature of a hand-off: straight between side-by-side groups, else an arc."""
        same_row = len({self.cell(s.node, s.slot)[1] for s in [*here, *there]}) == 1
        if same_row and here[0].node < there[0].node:
            return self.edge(here, "right"), self.edge(there, "left"), 0.0
        a, b = self.edge(here, "top"), self.edge(there, "top")
        if abs(a[0] - b[0]) < CELL:  # stacked in one node: loop out on the right
            return self.edge(here, "right"), self.edge(there, "right"), -0.6
        return a, b, -0.3
