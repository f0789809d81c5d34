"""Designing the cluster: place TP, PP and DP on the wires and price the layout.

The rule: the more often a form of parallelism must synchronise, the faster the
link it needs.
Tensor parallelism (TP) all-reduces twice per layer for every token, so it
belongs inside a node on NVLink; pipeline parallelism (PP) passes one
activation point to point at each stage boundary per token, and data
parallelism (DP) needs no per-token communication when serving (once per
step when training), so both can cross the network between nodes.

GPUs are numbered TP first, then DP, then PP (Megatron-LM's ``tp-dp-pp``
order) and filled into nodes in order: a TP group stays inside a node
whenever its degree divides the GPUs per node, and PP stages are the first
to spill onto the network.

Throughput is batched. Decode streams a replica's weights once per step
whatever the batch, so a replica decodes many sequences together and its
tokens/s is ``batch / time per step``. A pipeline keeps one micro-batch in
flight per stage (``pp`` of them, ``batch / pp`` sequences each), so every
stage is always busy: each micro-batch's token takes one full pass over the
layers, and the replica delivers ``batch`` tokens per pass. With the same
sequences, PP 2 and DP 2 then reach the same tokens/s; PP stores the weights
once, so it holds more sequences. Pipeline bubbles at start-up and uneven
stages are not modelled.

Every quantity is SI: bytes, seconds, bytes/second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lesson_lib.chapters import overview
from lesson_lib.chapters.experts import experts_numbers
from lesson_lib.chapters.glue import glue_numbers
from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int
from lesson_lib.model.collectives import get_algorithm
from lesson_lib.model.kv_transfer import Handoff, handoff
from lesson_lib.model.layout import (
    check_layout,
    layout_cautions,
    stage_layer_kinds,
    stage_layers,
)
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.moe import MoEStep, moe_decode_step, sequences_that_fit, weights_per_gpu
from lesson_lib.model.specimen import (
    FAST,
    GPU,
    INTER_NODE,
    INTER_NODE_MEASURED_LATENCY,
    MODEL,
    NODE_ETHERNET,
    PROMPT_TOKENS,
)
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import MAX_BATCH, StepBreakdown, decode_step
from lesson_lib.model.units import format_bytes, format_count, format_ratio, format_seconds


@dataclass(frozen=True)
class GpuSlot:
    """Where one GPU sits and what it holds.

    Attributes
    ----------
    rank : int
        Global rank, 0-based.
    node : int
        Node index.
    slot : int
        Position inside the node.
    replica : int
        Data-parallel replica (DP rank).
    stage : int
        Pipeline stage (PP rank).
    tp_rank : int
        Rank inside its tensor-parallel group.
    """

    rank: int
    node: int
    slot: int
    replica: int
    stage: int
    tp_rank: int


def _slot(rank: int, tp: int, dp: int, gpus_per_node: int) -> GpuSlot:
    return GpuSlot(
        rank=rank,
        node=rank // gpus_per_node,
        slot=rank % gpus_per_node,
        replica=(rank // tp) % dp,
        stage=rank // (tp * dp),
        tp_rank=rank % tp,
    )


@dataclass(frozen=True)
class ClusterPlan:
    """A layout of one model on a cluster, checked and priced.

    Attributes
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    gpus_per_node : int
        GPUs in each node.
    nodes : int
        Nodes in the cluster.
    tp : int
        Tensor-parallel degree.
    pp : int
        Pipeline-parallel degree.
    dp : int
        Data-parallel degree, ``gpus // (tp * pp)`` (0 when one replica
        needs more GPUs than there are).
    intra : Fabric
        The wire inside a node.
    inter : Fabric
        The network between nodes.
    context_tokens : int
        Sequence length used to count the sequences that fit.
    problems : tuple of str
        Why the layout is invalid; empty when it is valid.
    flags : tuple of str
        Cautions that do not forbid the layout (e.g. TP across nodes).
    placement : tuple of GpuSlot
        The GPUs in use, in rank order (idle GPUs are left out).
    tp_fabric : Fabric
        The wire the TP all-reduces (or, under EP, the all-to-alls) run on:
        ``inter`` if any TP or EP group spans two nodes, else ``intra``.
    step : StepBreakdown or MoEStep
        One sequence alone, one decoded token on a TP group, all layers, on
        ``tp_fabric``, weights only (the lesson's heuristic); under EP the
        :class:`~lesson_lib.model.moe.MoEStep` of the EP group.
    pp_send_s : float
        Seconds per token of the ``pp - 1`` stage-boundary sends (one hidden
        vector each), each on ``inter`` if it crosses nodes, else ``intra``.
    pp_network_boundaries : int
        Stage boundaries that cross the network.
    weights_per_gpu_bytes : float
        The busiest GPU's share of the weights, bytes.
    sequences_per_replica : int
        Sequences of ``context_tokens`` tokens that fit beside the weights.
    batch : int
        Sequences each replica decodes together (0 when none fits).
    batched_step : StepBreakdown or MoEStep or None
        One micro-batch (``ceil(batch / pp)`` sequences at ``context_tokens``)
        through all layers, KV reads included (under EP, the whole batch over
        the EP group, weights only); None when ``batch`` is 0.
    batched_send_s : float
        The stage-boundary sends of one micro-batch, seconds.
    stage_imbalance : float
        The largest stage's layers over an even share, ``max(stage_layers) *
        pp / num_layers``: 1 when PP divides the layers, 22 x 3 / 64 = 1.03
        for the specimen at PP 3.
    ep : int
        Expert-parallel degree: 1, or the GPUs of each replica's EP group
        (then ``tp`` and ``pp`` are 1 and attention is data-parallel).
    """

    model: ModelSpec
    accel: Accelerator
    gpus_per_node: int
    nodes: int
    tp: int
    pp: int
    dp: int
    intra: Fabric
    inter: Fabric
    context_tokens: int
    problems: tuple[str, ...]
    flags: tuple[str, ...]
    placement: tuple[GpuSlot, ...]
    tp_fabric: Fabric
    step: StepBreakdown | MoEStep
    pp_send_s: float
    pp_network_boundaries: int
    weights_per_gpu_bytes: float
    sequences_per_replica: int
    batch: int = 0
    batched_step: StepBreakdown | MoEStep | None = None
    batched_send_s: float = 0.0
    stage_imbalance: float = 1.0
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

        One micro-batch's pass over all stages, stretched by
        ``stage_imbalance`` when the stages are uneven (the ``pp``
        micro-batches then advance at the pace of the largest stage), plus its
        hand-offs; ``inf`` when no sequence fits.
        """
        if self.batched_step is None:
            return math.inf
        return self.batched_step.total_s * self.stage_imbalance + self.batched_send_s

    @property
    def tokens_per_s_replica(self) -> float:
        """One replica's decode throughput with ``batch`` sequences, tokens/second.

        ``batch / batched_token_time_s``: the ``pp`` micro-batches in flight
        each advance one token per pass. 0 when no sequence fits.
        """
        if self.batch == 0:
            return 0.0
        return self.batch / self.batched_token_time_s

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
        if self.flags:
            return f"valid, flagged: {self.flags[0]}"
        return "valid"

    @property
    def short_verdict(self) -> str:
        """The verdict for a table cell, with the first problem or every flag in a few words.

        ``"valid"``, ``"valid, flagged: each KV head on 2 GPUs; TP all-reduces on
        the network"`` or ``"invalid: ..."`` (the first problem, as in
        :attr:`verdict`).
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
        if self.stage_imbalance > 1:
            stages = stage_layers(self.model, self.pp)
            notes.append(f"stages of {', '.join(str(s) for s in stages)} layers")
        if self.tp_crosses_nodes:
            notes.append("TP all-reduces on the network")
        if self.ep_crosses_nodes:
            notes.append("EP all-to-alls on the network")
        if self.weights_fit and self.sequences_per_replica == 0:
            notes.append("no sequence fits beside the weights")
        return notes


def plan_cluster(
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    gpus_per_node: int = 4,
    nodes: int = 1,
    tp: int = 4,
    pp: int = 1,
    *,
    intra: Fabric = FAST,
    inter: Fabric = INTER_NODE,
    context_tokens: int | None = None,
    batch: int | None = None,
    algorithm: str = "ring",
    ep: int = 1,
) -> ClusterPlan:
    """Check and price a TP x PP x DP (or, for an MoE model, EP x DP) layout on ``nodes`` nodes.

    Parameters
    ----------
    model : ModelSpec, default MODEL
        The model.
    accel : Accelerator, default GPU
        One card (all alike).
    gpus_per_node : int, default 4
        GPUs in each node (>= 1).
    nodes : int, default 1
        Nodes (>= 1).
    tp : int, default 4
        Tensor-parallel degree (>= 1).
    pp : int, default 1
        Pipeline-parallel degree (>= 1).
    intra : Fabric, default FAST
        The wire inside a node.
    inter : Fabric, default INTER_NODE
        The network between nodes.
    context_tokens : int, optional
        Sequence length for counting sequences that fit and for the KV reads
        of the batched step, from 1 to ``model.max_context`` (the default).
    batch : int, optional
        Sequences each replica decodes together, from 1 to
        :data:`~lesson_lib.model.step_time.MAX_BATCH`; default as many as fit. A
        batch larger than what fits is listed as a problem.
    algorithm : str, default "ring"
        The TP all-reduce algorithm (see :mod:`lesson_lib.model.collectives`).
    ep : int, default 1
        Expert-parallel degree, from 1 to the model's routed experts. Above 1
        (an MoE model only, with ``tp = pp = 1``) each replica is an EP group
        of ``ep`` GPUs with data-parallel attention, priced by
        :func:`~lesson_lib.model.moe.moe_decode_step`; ranks are numbered as
        for TP, so a group stays inside a node when ``ep`` divides the GPUs
        per node. An MoE model with ``ep = 1`` is a TP group of ``tp`` GPUs
        (``pp = 1``), priced by the same function under TP, which reads only
        the routed experts' weights.

    Returns
    -------
    ClusterPlan
        Problems (``check_layout``, GPU count, memory), flags (TP or EP across
        nodes, no sequence fits), placement, time per token and memory.

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or range; the message names it.

    Examples
    --------
    >>> plan = plan_cluster(gpus_per_node=4, nodes=2, tp=4, pp=2)
    >>> plan.valid, plan.dp, plan.pp_network_boundaries
    (True, 1, 1)
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    require_instance("intra", intra, Fabric)
    require_instance("inter", inter, Fabric)
    gpus_per_node = require_int("gpus_per_node", gpus_per_node, maximum=MAX_RANKS)
    nodes = require_int("nodes", nodes, maximum=MAX_RANKS)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    pp = require_int("pp", pp, maximum=MAX_RANKS)
    for what, product in (("gpus_per_node x nodes", gpus_per_node * nodes), ("tp x pp", tp * pp)):
        if product > MAX_RANKS:
            raise ValueError(f"{what} must be at most {MAX_RANKS} GPUs, got {product}")
    if batch is not None:
        batch = require_int("batch", batch, maximum=MAX_BATCH)
    get_algorithm(algorithm)
    if context_tokens is None:
        context_tokens = model.max_context
    context_tokens = require_int(
        "context_tokens", context_tokens, minimum=1, maximum=model.max_context
    )
    ep = require_int("ep", ep, maximum=MAX_RANKS)
    if ep > 1 and not model.is_moe:
        raise ValueError(f"ep must be 1 for a dense model ({model.name}), got {ep}")
    if model.is_moe:
        # decode_step would read every expert's weights each token; an MoE
        # reads only the routed ones, which moe_decode_step prices.
        return _plan_moe(
            model, accel, gpus_per_node, nodes, ep, tp, pp, intra, inter, context_tokens, batch
        )
    gpus = gpus_per_node * nodes
    per_replica = tp * pp
    dp = gpus // per_replica

    problems = list(check_layout(model, tp, pp))
    if per_replica > gpus:
        problems.append(
            f"TP x PP = {per_replica} GPUs per replica, but the cluster has only {gpus} "
            f"({nodes} x {gpus_per_node})"
        )
    elif gpus % per_replica:
        problems.append(
            f"TP x PP x DP must equal the {gpus} GPUs, but TP x PP = {per_replica} "
            f"does not divide them ({gpus % per_replica} would sit idle)"
        )

    # One replica's positions, even if the cluster is too small to hold it.
    replicas = max(dp, 1)
    slots = [_slot(r, tp, replicas, gpus_per_node) for r in range(replicas * per_replica)]
    groups: dict[tuple[int, int], list[GpuSlot]] = {}
    for s in slots:
        groups.setdefault((s.replica, s.stage), []).append(s)
    tp_crosses = any(len({s.node for s in g}) > 1 for g in groups.values())
    tp_fabric = inter if tp_crosses and tp > 1 else intra

    # Each stage boundary of a replica, on the wire it crosses.
    boundary_wires: list[Fabric] = []
    worst_network = -1
    for d in range(replicas):
        wires = []
        for p in range(pp - 1):
            here, there = groups[(d, p)], groups[(d, p + 1)]
            crosses = any(a.node != b.node for a, b in zip(here, there, strict=True))
            wires.append(inter if crosses else intra)
        network = sum(w is inter for w in wires)
        if network > worst_network:
            boundary_wires, worst_network = wires, network

    def sends(vectors: int) -> float:
        return sum(
            w.latency + vectors * model.hidden_vector_bytes / w.bandwidth for w in boundary_wires
        )

    step = decode_step(model, accel, tp_fabric, tp, algorithm=algorithm)

    # Each stage holds its own layers' weights, KV cache and state; the stage
    # that fits the fewest sequences bounds the replica (vLLM's uneven split).
    weights, fits_per_stage = 0.0, []
    pp_layers = min(pp, model.num_layers)  # more stages than layers is a problem above
    for attention, linear in stage_layer_kinds(model, pp_layers):
        stage_weights = model.weight_bytes / tp * (attention + linear) / model.num_layers
        per_sequence = 0.0
        if model.num_attention_layers:
            per_sequence += (
                model.kv_bytes(context_tokens)
                * kv_share(model, tp)
                * attention
                / model.num_attention_layers
            )
        if model.num_linear_layers:
            per_sequence += (
                model.state_bytes * state_share(model, tp) * linear / model.num_linear_layers
            )
        free = accel.memory_bytes - stage_weights
        fits_per_stage.append(int(free // per_sequence) if free > 0 else 0)
        weights = max(weights, stage_weights)
    sequences = min(fits_per_stage)
    # the pipeline moves at the pace of its largest stage: 1 when the layers divide evenly
    imbalance = max(stage_layers(model, pp_layers)) * pp_layers / model.num_layers
    if weights > accel.memory_bytes:
        problems.append(
            f"the weights need {format_bytes(weights, 'GB')} per GPU, more than the card's "
            f"{format_bytes(accel.memory_bytes, 'GB')}"
        )
    if batch is None:
        batch = min(sequences, MAX_BATCH)
    elif batch > sequences:
        problems.append(
            f"a batch of {format_count(batch)} sequences needs more memory than the "
            f"{format_count(sequences)} that fit per replica"
        )
    micro = math.ceil(batch / pp)
    batched = (
        decode_step(
            model, accel, tp_fabric, tp, batch=micro, context=context_tokens, algorithm=algorithm
        )
        if batch
        else None
    )

    flags = list(layout_cautions(model, tp, pp_layers))
    if tp_crosses and tp > 1:
        flags.append(
            f"a TP group spans nodes, so its {model.allreduces_per_token} all-reduces per "
            "token run on the network"
        )
    if weights <= accel.memory_bytes and sequences == 0:
        flags.append(
            f"no sequence of {format_count(context_tokens)} tokens fits beside the weights"
        )

    return ClusterPlan(
        model=model,
        accel=accel,
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        tp=tp,
        pp=pp,
        dp=dp,
        intra=intra,
        inter=inter,
        context_tokens=context_tokens,
        problems=tuple(problems),
        flags=tuple(flags),
        placement=tuple(s for s in slots if s.rank < dp * per_replica),
        tp_fabric=tp_fabric,
        step=step,
        pp_send_s=sends(1),
        pp_network_boundaries=max(worst_network, 0),
        weights_per_gpu_bytes=weights,
        sequences_per_replica=sequences,
        batch=batch,
        batched_step=batched,
        batched_send_s=sends(micro) if batch else 0.0,
        stage_imbalance=imbalance,
    )


def _plan_moe(
    model: ModelSpec,
    accel: Accelerator,
    gpus_per_node: int,
    nodes: int,
    ep: int,
    tp: int,
    pp: int,
    intra: Fabric,
    inter: Fabric,
    context_tokens: int,
    batch: int | None,
) -> ClusterPlan:
    """:func:`plan_cluster` for an MoE model: one EP group (``ep > 1``) or TP group per replica."""
    if ep > 1:
        ep = require_int("ep", ep, maximum=min(model.num_experts, MAX_RANKS))
        if tp != 1 or pp != 1:
            raise ValueError(
                f"ep > 1 is modelled with tp = 1 and pp = 1 (data-parallel attention), "
                f"got tp = {tp} and pp = {pp}"
            )
    elif pp != 1:
        raise ValueError(f"an MoE model is modelled with pp = 1, got pp = {pp}")
    parallelism, n = ("ep", ep) if ep > 1 else ("tp", tp)
    name = parallelism.upper()
    gpus = gpus_per_node * nodes
    dp = gpus // n
    problems = [] if ep > 1 else list(check_layout(model, tp, 1))
    if ep > 1 and model.num_experts % ep:
        problems.append(
            f"EP = {ep} does not divide the {model.num_experts} experts: the ranks would hold "
            "unequal shares"
        )
    if n > gpus:
        problems.append(
            f"{name} = {n} GPUs per replica, but the cluster has only {gpus} "
            f"({nodes} x {gpus_per_node})"
        )
    elif gpus % n:
        problems.append(
            f"{name} x DP must equal the {gpus} GPUs, but {name} = {n} does not divide them "
            f"({gpus % n} would sit idle)"
        )
    replicas = max(dp, 1)
    slots = [_slot(r, n, replicas, gpus_per_node) for r in range(replicas * n)]
    groups: dict[int, set[int]] = {}
    for slot in slots:
        groups.setdefault(slot.replica, set()).add(slot.node)
    crosses = n > 1 and any(len(spanned) > 1 for spanned in groups.values())
    fabric = inter if crosses else intra
    weights = weights_per_gpu(model, n, parallelism)
    fit = sequences_that_fit(model, accel, n, parallelism, context_tokens)
    if weights > accel.memory_bytes:
        problems.append(
            f"the weights need {format_bytes(weights, 'GB')} per GPU, more than the card's "
            f"{format_bytes(accel.memory_bytes, 'GB')}"
        )
    if batch is None:
        batch = min(fit, MAX_BATCH)
    elif batch > fit:
        problems.append(
            f"a batch of {format_count(batch)} sequences needs more memory than the "
            f"{format_count(fit)} that fit per replica"
        )
    flags = []
    if crosses and ep > 1:
        flags.append(
            f"an EP group spans nodes, so its {model.alltoalls_per_token} all-to-alls per token "
            "run on the network"
        )
    elif crosses:
        flags.append(
            f"a TP group spans nodes, so its {model.allreduces_per_token} all-reduces per "
            "token run on the network"
        )
    if weights <= accel.memory_bytes and fit == 0:
        flags.append(
            f"no sequence of {format_count(context_tokens)} tokens fits beside the weights"
        )
    step = moe_decode_step(model, accel, fabric, n, parallelism=parallelism)
    batched = (
        moe_decode_step(model, accel, fabric, n, parallelism=parallelism, batch=batch)
        if batch
        else None
    )
    return ClusterPlan(
        model=model,
        accel=accel,
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        tp=tp,
        pp=1,
        dp=dp,
        intra=intra,
        inter=inter,
        context_tokens=context_tokens,
        problems=tuple(problems),
        flags=tuple(flags),
        placement=tuple(s for s in slots if s.rank < dp * n),
        tp_fabric=fabric,
        step=step,
        pp_send_s=0.0,
        pp_network_boundaries=0,
        weights_per_gpu_bytes=weights,
        sequences_per_replica=fit,
        batch=batch,
        batched_step=batched,
        batched_send_s=0.0,
        ep=ep,
    )


#: The layouts lesson 9.10 prices; (gpus_per_node, nodes, tp, pp).
CANDIDATES: tuple[tuple[int, int, int, int], ...] = (
    (1, 1, 1, 1),
    (2, 1, 2, 1),
    (4, 1, 4, 1),
    (8, 1, 4, 1),
    (8, 1, 8, 1),
    (4, 2, 4, 2),
    (4, 2, 4, 1),
    (2, 2, 4, 1),
    (4, 2, 8, 1),
    (4, 3, 4, 3),
)


def candidate_configurations(
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    *,
    intra: Fabric = FAST,
    inter: Fabric = INTER_NODE,
    candidates: Sequence[tuple[int, int, int, int]] = CANDIDATES,
) -> list[ClusterPlan]:
    """Plan every candidate layout: valid ones, flagged ones and invalid ones.

    Parameters
    ----------
    model : ModelSpec, default MODEL
        The model.
    accel : Accelerator, default GPU
        One card.
    intra : Fabric, default FAST
        The wire inside a node.
    inter : Fabric, default INTER_NODE
        The network between nodes.
    candidates : sequence of (int, int, int, int), default CANDIDATES
        ``(gpus_per_node, nodes, tp, pp)`` for each layout.

    Returns
    -------
    list of ClusterPlan
        In the order given.
    """
    return [
        plan_cluster(model, accel, g, n, tp, pp, intra=intra, inter=inter)
        for g, n, tp, pp in candidates
    ]


# No-break space: keeps "4 x 1 x 2" on one line in a narrow table column.
_NBSP = "\u00a0"

#: Columns of :func:`candidate_rows`.
CANDIDATE_HEADER: tuple[str, ...] = (
    "nodes x GPUs",
    "TP x PP x DP",
    "one sequence: ms per token",
    "full-length sequences",
    "batched: ms per token",
    "batched tokens/s",
    "verdict",
)


def _table_verdicts(plans: Sequence[ClusterPlan]) -> list[str]:
    """The verdict column: ``"valid"``, or ``"flagged, note 1"`` numbered as the notes."""
    verdicts, note = [], 0
    for p in plans:
        if p.valid and not p.flags:
            verdicts.append("valid")
            continue
        note += 1
        verdicts.append(f"{'flagged' if p.valid else 'invalid'}, note{_NBSP}{note}")
    return verdicts


def candidate_rows(plans: Sequence[ClusterPlan]) -> list[tuple[str, ...]]:
    """One table row per plan, formatted, in :data:`CANDIDATE_HEADER` order.

    Parameters
    ----------
    plans : sequence of ClusterPlan
        The layouts.

    Returns
    -------
    list of tuple of str
        Times per token in ms (numbers only, the header names the unit),
        rates in tokens/s, sequences over all replicas, and a short verdict,
        ``"valid"`` or ``"flagged, note 1"`` (the reasons are
        :func:`candidate_notes`). The degrees are joined by no-break spaces,
        so each stays on one line.
    """
    rows = []
    for p, verdict in zip(plans, _table_verdicts(plans), strict=True):
        batched = "-" if p.batch == 0 else f"{p.batched_token_time_s * 1e3:.2f}"
        rows.append(
            (
                f"{p.nodes}{_NBSP}x{_NBSP}{p.gpus_per_node}",
                f"{p.tp}{_NBSP}x{_NBSP}{p.pp}{_NBSP}x{_NBSP}{p.dp}",
                f"{p.token_time_s * 1e3:.2f}",
                format_count(p.sequences_total),
                batched,
                format_count(p.tokens_per_s_total),
                verdict,
            )
        )
    return rows


def _across_note(p: ClusterPlan) -> str:
    """Why a TP group split by the network is as fast as it is, against TP inside each node.

    The comparison is the rule's layout on the same GPUs: TP over each node's
    GPUs, one replica per node.
    """
    rule = plan_cluster(
        p.model, p.accel, p.gpus_per_node, p.nodes, p.gpus_per_node, 1, intra=p.intra,
        inter=p.inter, context_tokens=p.context_tokens,
    )  # fmt: skip
    ms = "ms"
    rule_name = f"TP {rule.tp} x DP {rule.dp} inside each node"
    alone = (
        f"Alone, {format_seconds(p.token_time_s, ms)} per token against "
        f"{format_seconds(rule.token_time_s, ms)} for {rule_name}"
    )
    if p.token_time_s < rule.token_time_s:
        why = (
            f": with {p.tp} GPUs each reads 1/{p.tp} of the weights "
            f"({format_seconds(p.step.compute_s, ms)} instead of "
            f"{format_seconds(rule.step.compute_s, ms)}), more than paying for its all-reduces "
            f"on the network ({format_seconds(p.step.communication_s, ms)} instead of "
            f"{format_seconds(rule.step.communication_s, ms)}) at the assumed "
            f"{format_seconds(p.inter.latency, 'us')} per message; more network latency narrows and then reverses it"
        )
    else:
        why = (
            f": its all-reduces on the network take {format_seconds(p.step.communication_s, ms)} "
            f"instead of {format_seconds(rule.step.communication_s, ms)}"
        )
    batched = (
        f"Batched, {format_count(p.tokens_per_s_total)} tokens/s against "
        f"{format_count(rule.tokens_per_s_total)}."
    )
    return f"{alone}{why}. {batched}"


def candidate_notes(plans: Sequence[ClusterPlan]) -> list[str]:
    """The notes under the candidates' table, one per flagged or invalid row, in order.

    Parameters
    ----------
    plans : sequence of ClusterPlan
        The layouts, as given to :func:`candidate_rows`.

    Returns
    -------
    list of str
        ``"2 nodes x 4 GPUs: TP 8: each KV head on 2 GPUs; ..."``: the
        layout, its flags in a few words (the first problem of an invalid
        one) and, for a TP group split by the network, how it compares with
        TP inside each node on the same GPUs, alone and batched.
    """
    notes = []
    for p in plans:
        if p.valid and not p.flags:
            continue
        if not p.valid:
            notes.append(f"{p.label}: {p.problems[0]}.")
            continue
        summaries = p.flag_summaries if len(p.flag_summaries) == len(p.flags) else p.flags
        note = f"{p.label}: {'; '.join(summaries)}."
        if p.tp_crosses_nodes:
            note += f" {_across_note(p)}"
        notes.append(note)
    return notes


def candidate_table(plans: Sequence[ClusterPlan] | None = None, caption: str | None = None) -> str:
    """The candidate layouts as an HTML table, its numbered notes in its footer.

    Parameters
    ----------
    plans : sequence of ClusterPlan, optional
        Default :func:`candidate_configurations`.
    caption : str, optional
        Table caption.

    Returns
    -------
    str
        An HTML ``<table>`` (see :func:`lesson_lib.chapters.tables.html_table`)
        whose footer is an ``<ol>`` of :func:`candidate_notes`, numbered as
        the verdict column says.
    """
    import html

    from lesson_lib.chapters.tables import html_table

    plans = candidate_configurations() if plans is None else plans
    table = html_table(CANDIDATE_HEADER, candidate_rows(plans), caption)
    items = "".join(f"<li>{html.escape(n)}</li>" for n in candidate_notes(plans))
    if not items:
        return table
    # The notes are the table's own footer: they belong to its rows, as a caption does.
    foot = (
        f'<tfoot><tr><td colspan="{len(CANDIDATE_HEADER)}">'
        f'<ol class="table-notes">{items}</ol></td></tr></tfoot>'
    )
    head, _, _ = table.rpartition("</table>")
    return f"{head}{foot}\n</table>"


def communication_per_token(
    model: ModelSpec = MODEL, tp: int = 4, pp: int = 2
) -> list[tuple[str, str, str, str]]:
    """What each form of parallelism sends per decoded token, and how often.

    Parameters
    ----------
    model : ModelSpec, default MODEL
        The model.
    tp : int, default 4
        Tensor-parallel degree, from 2 to 4096.
    pp : int, default 2
        Pipeline-parallel degree, from 2 to 4096.

    Returns
    -------
    list of (str, str, str, str)
        Rows ``(form, events per token, bytes per event, kind)`` for TP,
        PP and DP, formatted.
    """
    require_instance("model", model, ModelSpec)
    tp = require_int("tp", tp, minimum=2, maximum=MAX_RANKS)
    pp = require_int("pp", pp, minimum=2, maximum=MAX_RANKS)
    vector = format_bytes(model.hidden_vector_bytes, "KiB")
    return [
        (
            f"tensor (TP {tp})",
            f"{model.allreduces_per_token} (two per layer)",
            f"{vector} payload",
            "blocking all-reduce among the TP group",
        ),
        (
            f"pipeline (PP {pp})",
            f"{pp - 1} (one per stage boundary)",
            vector,
            "point-to-point send to the next stage",
        ),
        (
            "data (DP)",
            "0 when serving",
            "-",
            "replicas are independent; training all-reduces gradients once per step",
        ),
    ]


def cluster_numbers() -> dict[str, str]:
    """Numbers the cluster chapter glues, formatted.

    Returns
    -------
    dict of str to str
        For example ``"inter_bandwidth": "50 GB/s"`` and
        ``"pp2_token_time": "5.34 ms"``.
    """
    m = MODEL
    in_node = plan_cluster(m, GPU, 4, 1, 4)
    pp2 = plan_cluster(m, GPU, 4, 2, 4, 2)
    dp2 = plan_cluster(m, GPU, 4, 2, 4, 1)
    across = plan_cluster(m, GPU, 2, 2, 4)
    tp8 = plan_cluster(m, GPU, 8, 1, 8)
    one_gpu = plan_cluster(m, GPU, 1, 1, 1)
    pp3 = plan_cluster(m, GPU, 4, 3, 4, 3)
    pp3_stages = stage_layers(m, 3)
    # The second exercise's network: five times worse than assumed in both numbers.
    worse = Fabric(
        "network five times worse",
        latency=5 * INTER_NODE.latency,
        bandwidth=INTER_NODE.bandwidth / 5,
    )
    worse_pp2 = plan_cluster(m, GPU, 4, 2, 4, 2, inter=worse)
    worse_across = plan_cluster(m, GPU, 2, 2, 4, inter=worse)
    ms = "ms"
    tp4_only = plan_cluster(m, GPU, 4, 1, 4, batch=1)
    sixteen_pp = plan_cluster(m, GPU, 4, 2, 4, 2, batch=16)
    sixteen_dp = plan_cluster(m, GPU, 4, 2, 4, 1, batch=8)
    return {
        "pp2_batched_time": format_seconds(pp2.batched_token_time_s, ms),
        "dp2_batched_time": format_seconds(dp2.batched_token_time_s, ms),
        "pp2_vs_dp2": format_ratio(pp2.tokens_per_s_total / dp2.tokens_per_s_total),
        "pp2_sequences_total": format_count(pp2.sequences_total),
        "single_sequence_tokens_per_s": format_count(tp4_only.tokens_per_s_total),
        "tp8_tokens_per_s": format_count(tp8.tokens_per_s_total),
        "tp8_copies": str(tp8.tp // m.num_kv_heads),
        "sixteen_pp_tokens_per_s": format_count(sixteen_pp.tokens_per_s_total),
        "sixteen_dp_tokens_per_s": format_count(sixteen_dp.tokens_per_s_total),
        "kv_heads": str(m.num_kv_heads),
        "query_heads": str(m.num_query_heads),
        "deltanet_key_heads": str(m.linear_num_key_heads),
        "deltanet_value_heads": str(m.linear_num_value_heads),
        "ffn_size": format_count(m.ffn_size or 0),
        "super_blocks": str(m.super_blocks),
        "num_layers": str(m.num_layers),
        "pp3_stages": ", ".join(str(s) for s in pp3_stages[:-1]) + f" and {pp3_stages[-1]}",
        "pp3_slower": format_count(100 * (pp3.stage_imbalance - 1), decimals=0) + " %",
        "pp3_sequences": format_count(pp3.sequences_per_replica),
        "pp3_tokens_per_s": format_count(pp3.tokens_per_s_total),
        "inter_latency": format_seconds(INTER_NODE.latency, "us"),
        "inter_bandwidth": format_bytes(INTER_NODE.bandwidth, "GB") + "/s",
        "in_node_token_time": format_seconds(in_node.token_time_s, ms),
        "across_token_time": format_seconds(across.token_time_s, ms),
        "across_latency": format_seconds(across.step.latency_s, ms),
        "pp_send": format_seconds(pp2.pp_send_s, "us"),
        "pp2_token_time": format_seconds(pp2.token_time_s, ms),
        "pp2_tokens_per_s": format_count(pp2.tokens_per_s_total),
        "pp2_weights": format_bytes(pp2.weights_per_gpu_bytes, "GB"),
        "pp2_sequences": format_count(pp2.sequences_per_replica),
        "dp2_token_time": format_seconds(dp2.token_time_s, ms),
        "dp2_tokens_per_s": format_count(dp2.tokens_per_s_total),
        "dp2_weights": format_bytes(dp2.weights_per_gpu_bytes, "GB"),
        "dp2_sequences": format_count(dp2.sequences_per_replica),
        "dp2_sequences_total": format_count(dp2.dp * dp2.sequences_per_replica),
        "tp8_token_time": format_seconds(tp8.token_time_s, ms),
        "tp8_sequences": format_count(tp8.sequences_per_replica),
        "in_node_sequences": format_count(in_node.sequences_per_replica),
        "inter_measured_latency": format_seconds(INTER_NODE_MEASURED_LATENCY, "us"),
        "one_gpu_token_time": format_seconds(one_gpu.token_time_s, ms),
        "worse_latency": format_seconds(worse.latency, "us"),
        "worse_bandwidth": format_bytes(worse.bandwidth, "GB") + "/s",
        "worse_pp2_token_time": format_seconds(worse_pp2.token_time_s, ms),
        "worse_across_token_time": format_seconds(worse_across.token_time_s, ms),
        # prefill and decode on separate instances: one request's hand-off
        **{
            f"handoff_{key.replace(' ', '_')}_full": format_seconds(
                plan_disaggregated(placement=key, prompt_tokens=m.max_context).shipped_s, ms
            )
            for key in PLACEMENTS
        },
        "handoff_rail_full_streamed": format_seconds(
            plan_disaggregated(placement="rail", prompt_tokens=m.max_context).streamed_s, ms
        ),
    }


def numbers() -> dict[str, str]:
    """Every value the cluster page glues: the worked example's numbers and the chapter's own.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {
        **overview.numbers(),
        **cluster_numbers(),
        "ds_alltoalls": experts_numbers()["ds_alltoalls"],
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/cluster.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())


#: Where a disaggregated server's prefill and decode instances can sit, by key, which
#: decides the wire their hand-off of each request's KV cache takes (``book/kv_transfer.md``).
PLACEMENTS: dict[str, str] = {
    "one node": "both instances in one node, on NVLink",
    "rail": "separate nodes, a NIC per GPU on the compute fabric",
    "shared port": "separate nodes, through each node's shared Ethernet port",
}


@dataclass(frozen=True)
class DisaggregatedPlan:
    """A prefill instance and a decode instance, placed, checked and priced per request.

    Attributes
    ----------
    prefill : ClusterPlan
        The prefill instance on its own GPUs (TP only).
    decode : ClusterPlan
        The decode instance on its own GPUs (TP only).
    placement : str
        A key of :data:`PLACEMENTS`.
    handoff : Handoff
        One request's prefill and the hand-off of its cache, shipped after the
        prefill and streamed layer by layer
        (:func:`lesson_lib.model.kv_transfer.handoff`).
    problems : tuple of str
        Why the plan is invalid: either instance's problems, and instances
        that do not fit in one node when placed there.
    """

    prefill: ClusterPlan
    decode: ClusterPlan
    placement: str
    handoff: Handoff
    problems: tuple[str, ...]

    @property
    def valid(self) -> bool:
        """True when ``problems`` is empty."""
        return not self.problems

    @property
    def shipped_s(self) -> float:
        """Seconds the hand-off adds to a request's first token, shipped after the prefill."""
        return self.handoff.bulk.time_s

    @property
    def streamed_s(self) -> float:
        """Seconds the hand-off adds to a request's first token, streamed by layer."""
        return self.handoff.streamed.exposed_s


def plan_disaggregated(
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    gpus_per_node: int = 8,
    prefill_tp: int = 4,
    decode_tp: int = 4,
    *,
    placement: str = "rail",
    prompt_tokens: int = PROMPT_TOKENS,
    intra: Fabric = FAST,
    inter: Fabric = INTER_NODE,
    shared: Fabric = NODE_ETHERNET,
) -> DisaggregatedPlan:
    """Place a prefill and a decode instance and price one request's hand-off between them.

    Parameters
    ----------
    model : ModelSpec, default MODEL
        The model.
    accel : Accelerator, default GPU
        One card.
    gpus_per_node : int, default 8
        GPUs in each node, from 1 to 4096.
    prefill_tp, decode_tp : int, default 4
        Tensor-parallel degrees of the instances, from 1 to 4096.
    placement : str, default "rail"
        A key of :data:`PLACEMENTS`: ``"one node"`` hands over on ``intra``,
        ``"rail"`` on ``inter`` with a NIC per GPU, ``"shared port"`` on
        ``shared``, one port per node.
    prompt_tokens : int, default PROMPT_TOKENS
        The request's prompt, from 1 to ``model.max_context``.
    intra, inter, shared : Fabric
        NVLink inside a node, one GPU's NIC, and a node's shared port.

    Returns
    -------
    DisaggregatedPlan
        Both instances' plans, the hand-off and the problems.

    Examples
    --------
    >>> plan = plan_disaggregated(placement="rail")
    >>> plan.valid, round(plan.shipped_s * 1e3, 2)
    (True, 2.14)
    """
    require_instance("shared", shared, Fabric)
    if placement not in PLACEMENTS:
        valid = ", ".join(repr(k) for k in PLACEMENTS)
        raise ValueError(f"placement must be one of {valid}, got {placement!r}")
    gpus_per_node = require_int("gpus_per_node", gpus_per_node, maximum=MAX_RANKS)
    prefill_tp = require_int("prefill_tp", prefill_tp, maximum=MAX_RANKS)
    decode_tp = require_int("decode_tp", decode_tp, maximum=MAX_RANKS)
    prefill = plan_cluster(model, accel, prefill_tp, 1, prefill_tp, intra=intra, inter=inter)
    decode = plan_cluster(model, accel, decode_tp, 1, decode_tp, intra=intra, inter=inter)
    link, shared_port = {
        "one node": (intra, False),
        "rail": (inter, False),
        "shared port": (shared, True),
    }[placement]
    request = handoff(
        model, accel, intra, link, prompt_tokens, prefill_tp, decode_tp, shared_port=shared_port
    )
    problems = [f"prefill instance: {p}" for p in prefill.problems]
    problems += [f"decode instance: {p}" for p in decode.problems]
    if placement == "one node" and prefill_tp + decode_tp > gpus_per_node:
        problems.append(
            f"TP {prefill_tp} + TP {decode_tp} = {prefill_tp + decode_tp} GPUs do not fit "
            f"in one node of {gpus_per_node}"
        )
    return DisaggregatedPlan(prefill, decode, placement, request, tuple(problems))


#: Columns of :func:`disaggregated_rows`.
DISAGGREGATED_HEADER: tuple[str, ...] = (
    "where the two instances sit",
    "hand-off per request, shipped: lesson's prompt",
    "streamed",
    "full length, shipped",
    "streamed",
)


def disaggregated_rows(prefill_tp: int = 4, decode_tp: int = 4) -> list[tuple[str, ...]]:
    """Each placement of :data:`PLACEMENTS`: what the hand-off adds to a request's first token.

    Parameters
    ----------
    prefill_tp, decode_tp : int, default 4
        Tensor-parallel degrees of the instances, from 1 to 4096.

    Returns
    -------
    list of tuple of str
        Rows in :data:`DISAGGREGATED_HEADER` order, in ms, at the lesson's
        prompt and at the specimen's full context.
    """
    rows = []
    for key, label in PLACEMENTS.items():
        short, full = (
            plan_disaggregated(
                prefill_tp=prefill_tp, decode_tp=decode_tp, placement=key, prompt_tokens=tokens
            )
            for tokens in (PROMPT_TOKENS, MODEL.max_context)
        )
        rows.append(
            (
                label,
                format_seconds(short.shipped_s, "ms"),
                format_seconds(short.streamed_s, "ms", decimals=3),
                format_seconds(full.shipped_s, "ms"),
                format_seconds(full.streamed_s, "ms", decimals=3),
            )
        )
    return rows
