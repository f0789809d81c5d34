"""A cluster plan: where each GPU sits, what the layout costs, and the groups it forms.

:func:`~lesson_lib.model.cluster_planner.plan_cluster` builds a :class:`ClusterPlan`;
the helpers read its placement alike for the planner, the figure and the explorer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from lesson_lib.model.layout import layout_cautions, stage_layer_kinds
from lesson_lib.model.moe import MoEStep
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepBreakdown


@dataclass(frozen=True)
class GpuSlot:
    """Where one GPU sits and what it holds."""

    #: Global rank, 0-based.
    rank: int
    node: int
    #: Position inside the node.
    slot: int
    #: Data-parallel replica (DP rank).
    replica: int
    #: Pipeline stage (PP rank).
    stage: int
    #: Rank inside its tensor-parallel group.
    tp_rank: int


#: The GPUs of each TP (or EP) group, keyed by (replica, stage).
Groups = dict[tuple[int, int], list[GpuSlot]]


@dataclass(frozen=True)
class ClusterPlan:
    """A layout of one model on a cluster, checked and priced."""

    model: ModelSpec
    accel: Accelerator
    gpus_per_node: int
    nodes: int
    tp: int
    pp: int
    #: Data-parallel degree, ``gpus // (tp * pp)`` (0 when a replica does not fit).
    dp: int
    intra: Fabric
    inter: Fabric
    #: Sequence length used to count the sequences that fit.
    context_tokens: int
    #: Why the layout is invalid; empty when it is valid.
    problems: tuple[str, ...]
    #: Cautions that do not forbid the layout (e.g. TP across nodes).
    flags: tuple[str, ...]
    #: The GPUs in use, in rank order (idle GPUs are left out).
    placement: tuple[GpuSlot, ...]
    #: The wire of the TP all-reduces (EP all-to-alls), ``inter`` if a group spans nodes.
    tp_fabric: Fabric
    #: One sequence's decoded token on a TP (or EP) group, all layers, on ``tp_fabric``, weights
    #: only (the lesson's heuristic).
    step: StepBreakdown | MoEStep
    #: Seconds per token of the ``pp - 1`` sends of one hidden vector, each on the wire it crosses.
    pp_send_s: float
    #: Stage boundaries that cross the network.
    pp_network_boundaries: int
    #: The busiest GPU's share of the weights, bytes.
    weights_per_gpu_bytes: float
    #: Sequences of ``context_tokens`` tokens that fit beside the weights.
    sequences_per_replica: int
    #: Sequences each replica decodes together (0 when none fits).
    batch: int = 0
    #: One micro-batch (``ceil(batch / pp)`` sequences at ``context_tokens``, KV reads included;
    #: under EP the whole batch, weights only) through all layers; None when ``batch`` is 0.
    batched_step: StepBreakdown | MoEStep | None = None
    #: The stage-boundary sends of one micro-batch, seconds.
    batched_send_s: float = 0.0
    #: The slowest stage's time over an even share, ``pp`` x its micro-batch step (its weights, KV
    #: and state reads, FLOPs and all-reduces, :func:`.stage_models`) / ``batched_step``'s: 1.09 for
    #: the specimen at PP 3, whose 21-layer last stage holds 6 of the 16 attention layers' KV cache
    #: (1 for even stages).
    stage_imbalance: float = 1.0
    #: Expert-parallel degree, 1 or the GPUs of each replica's EP group.
    ep: int = 1

    @property
    def gpus(self) -> int:
        """GPUs in the cluster, ``gpus_per_node * nodes``."""
        return self.gpus_per_node * self.nodes

    @property
    def idle_gpus(self) -> int:
        """GPUs no replica uses."""
        return self.gpus - len(self.placement)

    @property
    def valid(self) -> bool:
        """True when ``problems`` is empty."""
        return not self.problems

    @property
    def tp_crosses_nodes(self) -> bool:
        """True when a TP group spans more than one node."""
        return self.tp_fabric is self.inter and self.tp > 1

    @property
    def ep_crosses_nodes(self) -> bool:
        """True when an EP group spans more than one node."""
        return self.tp_fabric is self.inter and self.ep > 1

    @property
    def weights_fit(self) -> bool:
        """True when the weights alone fit on each GPU."""
        return self.weights_per_gpu_bytes <= self.accel.memory_bytes

    @property
    def token_time_s(self) -> float:
        """Seconds per decoded token of one sequence (TP step plus PP sends)."""
        return self.step.total_s + self.pp_send_s

    @property
    def batched_token_time_s(self) -> float:
        """Seconds per token each sequence sees with ``batch`` sequences in flight.

        One micro-batch through all stages, stretched by ``stage_imbalance`` (``pp`` micro-batches
        move at the slowest stage's pace), plus its hand-offs; ``inf`` if no sequence fits.
        """
        if self.batched_step is None:
            return math.inf
        return self.batched_step.total_s * self.stage_imbalance + self.batched_send_s

    @property
    def tokens_per_s_replica(self) -> float:
        """``batch / batched_token_time_s`` (0 when none fits): one replica's tokens/second."""
        return 0.0 if self.batch == 0 else self.batch / self.batched_token_time_s

    @property
    def tokens_per_s_total(self) -> float:
        """``dp`` replicas' throughput, tokens/second."""
        return self.dp * self.tokens_per_s_replica

    @property
    def sequences_total(self) -> int:
        """Sequences in flight over all replicas, ``dp * batch``."""
        return self.dp * self.batch

    @property
    def label(self) -> str:
        """Short name, e.g. ``"2 nodes x 4 GPUs: TP 4 x PP 2"``."""
        nodes = f"{self.nodes} node{'s' if self.nodes > 1 else ''}"
        degrees = [f"TP {self.tp}"] if self.ep == 1 else [f"EP {self.ep}"]
        degrees += [f"PP {self.pp}"] if self.pp > 1 else []
        degrees += [f"DP {self.dp}"] if self.dp > 1 else []
        gpus = f"{self.gpus_per_node} GPU{'s' if self.gpus_per_node > 1 else ''}"
        return f"{nodes} x {gpus}: {' x '.join(degrees)}"

    @property
    def verdict(self) -> str:
        """``"valid"``, ``"valid, flagged: ..."`` or ``"invalid: ..."`` (first reason)."""
        if self.problems:
            return f"invalid: {self.problems[0]}"
        return f"valid, flagged: {self.flags[0]}" if self.flags else "valid"

    @property
    def short_verdict(self) -> str:
        """The verdict for a table cell, the first problem or every flag in a few words.

        ``"valid"``, ``"valid, flagged: each KV head on 2 GPUs; TP all-reduces on
        the network"`` or :attr:`verdict`'s ``"invalid: ..."``.
        """
        if self.problems:
            return self.verdict
        notes = self.flag_summaries
        if len(notes) != len(self.flags):  # a flag without a short form: say it in full
            return self.verdict
        return f"valid, flagged: {'; '.join(notes)}" if notes else "valid"

    @property
    def flag_summaries(self) -> list[str]:
        """Each flag in a few words (``"TP all-reduces on the network"``), as far as known."""
        notes = []
        if layout_cautions(self.model, self.tp):
            notes.append(f"each KV head on {self.tp // self.model.num_kv_heads} GPUs")
        kinds = stage_layer_kinds(self.model, min(self.pp, self.model.num_layers))
        if len(set(kinds)) > 1:  # as layout_cautions flags the stages
            notes.append(f"stages of {', '.join(str(sum(kind)) for kind in kinds)} layers")
        if self.tp_crosses_nodes:
            notes.append("TP all-reduces on the network")
        if self.ep_crosses_nodes:
            notes.append("EP all-to-alls on the network")
        if self.weights_fit and self.sequences_per_replica == 0:
            notes.append("no sequence fits beside the weights")
        return notes


def tp_groups(slots: Iterable[GpuSlot]) -> Groups:
    """The GPUs of each tensor-parallel (or expert-parallel) group, in rank order.

    Parameters
    ----------
    slots : iterable of GpuSlot
        Placed GPUs, e.g. a plan's ``placement``.

    Returns
    -------
    dict of (int, int) to list of GpuSlot
        One group per ``(replica, stage)``.
    """
    groups: Groups = {}
    for s in slots:
        groups.setdefault((s.replica, s.stage), []).append(s)
    return groups


def spans_nodes(group: Iterable[GpuSlot]) -> bool:
    """Whether a group of GPUs sits on more than one node, joined by the network.

    Parameters
    ----------
    group : iterable of GpuSlot

    Returns
    -------
    bool
    """
    return len({s.node for s in group}) > 1


def stage_hand_offs(groups: Groups) -> list[tuple[int, list[GpuSlot], list[GpuSlot], bool]]:
    """Each pipeline hand-off, replica by replica and stage by stage.

    Parameters
    ----------
    groups : dict of (int, int) to list of GpuSlot
        The TP groups, as :func:`tp_groups` gives them.

    Returns
    -------
    list of (int, list of GpuSlot, list of GpuSlot, bool)
        The replica, the sending and receiving stage's GPUs, and whether a send crosses the network.
    """
    hand_offs = []
    for d, p in sorted(groups):
        if (d, p + 1) in groups:
            here, there = groups[(d, p)], groups[(d, p + 1)]
            across = any(a.node != b.node for a, b in zip(here, there, strict=True))
            hand_offs.append((d, here, there, across))
    return hand_offs


def dp_neighbours(plan: ClusterPlan) -> list[tuple[list[GpuSlot], list[GpuSlot]]]:
    """The first stages of consecutive replicas that start on different nodes.

    Parameters
    ----------
    plan : ClusterPlan

    Returns
    -------
    list of (list of GpuSlot, list of GpuSlot)
        Stage-0 TP groups of replicas ``d`` and ``d + 1``.
    """
    groups = tp_groups(plan.placement)
    return [
        (groups[(d, 0)], groups[(d + 1, 0)])
        for d in range(plan.dp - 1)
        if groups[(d, 0)][0].node != groups[(d + 1, 0)][0].node
    ]
