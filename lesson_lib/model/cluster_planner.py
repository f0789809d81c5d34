"""Designing the cluster: place TP, PP and DP on the wires and price the layout.

GPUs are numbered TP first, then DP, then PP (Megatron-LM's ``tp-dp-pp`` order) and filled into
nodes in order, so a TP group stays inside a node whenever its degree divides the GPUs per node.
Throughput is batched: a replica decodes ``batch`` sequences per step, a pipeline keeps ``pp``
micro-batches in flight at its slowest stage's pace; bubbles are not modelled. SI units.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from lesson_lib.model._validate import MAX_RANKS, require_int
from lesson_lib.model.cluster_plan import (
    ClusterPlan,
    GpuSlot,
    Groups,
    spans_nodes,
    stage_hand_offs,
    tp_groups,
)
from lesson_lib.model.collectives import get_algorithm
from lesson_lib.model.context_parallel import context_parallel_max_sequences
from lesson_lib.model.layout import check_layout, layout_cautions, stage_models
from lesson_lib.model.moe import MoEStep, moe_decode_step, sequences_that_fit, weights_per_gpu
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL, PP_VECTORS_PER_TOKEN
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec, _require_hardware
from lesson_lib.model.step_time import MAX_BATCH, decode_step
from lesson_lib.model.units import format_bytes, format_count


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
    model, accel : ModelSpec, Accelerator, default MODEL, GPU
        The model and one card (all alike).
    gpus_per_node, nodes, tp, pp : int, default 4, 1, 4, 1
        GPUs in each node, nodes, tensor- and pipeline-parallel degrees, each
        from 1 to 4096 (``MAX_RANKS``), as are ``gpus_per_node x nodes`` and ``tp x pp``.
    intra, inter : Fabric, default FAST, INTER_NODE
        The wire inside a node and the network between nodes.
    context_tokens : int, optional
        Sequence length for counting sequences that fit and for the KV reads
        of the batched step, from 1 to ``model.max_context`` (the default).
    batch : int, optional
        Sequences per replica step, from 1 to :data:`~lesson_lib.model.step_time.MAX_BATCH`; default
        as many as fit (more is listed as a problem).
    algorithm : str, default "ring"
        The TP all-reduce algorithm (see :mod:`lesson_lib.model.collectives`).
    ep : int, default 1
        Expert-parallel degree, from 1 to the model's routed experts. Above 1
        (an MoE model only, ``tp = pp = 1``) each replica is an EP group with
        data-parallel attention; an MoE model with ``ep = 1`` is a TP group
        (``pp = 1``). Both are priced by :func:`~lesson_lib.model.moe.moe_decode_step`.

    Returns
    -------
    ClusterPlan
        Problems (``check_layout``, GPU count, memory), flags (TP or EP across
        nodes, no sequence fits), placement, time per token and memory. Two
        nodes of 4 at TP 4 x PP 2: valid, DP 1, one stage boundary on the network.
    """
    _require_hardware(model, accel, intra=intra, inter=inter)
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
    tokens = model.max_context if context_tokens is None else context_tokens
    context_tokens = require_int("context_tokens", tokens, maximum=model.max_context)
    ep = require_int("ep", ep, maximum=MAX_RANKS)
    if ep > 1 and not model.is_moe:
        raise ValueError(f"ep must be 1 for a dense model ({model.name}), got {ep}")
    cluster = _Cluster(model, accel, gpus_per_node, nodes, intra, inter, context_tokens)
    if model.is_moe:
        # decode_step would read every expert's weights each token; an MoE
        # reads only the routed ones, which moe_decode_step prices.
        return _plan_moe(cluster, tp, pp, ep, batch)
    return _plan_dense(cluster, tp, pp, batch, algorithm)


class _Cluster(NamedTuple):
    """The cluster, its wires and the sequence length: what every plan on it shares."""

    model: ModelSpec
    accel: Accelerator
    gpus_per_node: int
    nodes: int
    intra: Fabric
    inter: Fabric
    context_tokens: int


def _placed(group: int, dp: int, stages: int, gpus_per_node: int) -> list[GpuSlot]:
    """Every rank of ``max(dp, 1)`` replicas, so one replica has places even on too few GPUs."""
    replicas = max(dp, 1)
    return [
        GpuSlot(
            rank=rank,
            node=rank // gpus_per_node,
            slot=rank % gpus_per_node,
            replica=(rank // group) % replicas,
            stage=rank // (group * replicas),
            tp_rank=rank % group,
        )
        for rank in range(group * replicas * stages)
    ]


def _count_problems(name: str, per_replica: int, gpus_per_node: int, nodes: int) -> list[str]:
    """Why the cluster's GPUs do not hold whole replicas of ``per_replica`` GPUs each."""
    gpus = gpus_per_node * nodes
    if per_replica > gpus:
        return [
            f"{name} = {per_replica} GPUs per replica, but the cluster has only {gpus} "
            f"({nodes} x {gpus_per_node})"
        ]
    if gpus % per_replica:
        return [
            f"{name} x DP must equal the {gpus} GPUs, but {name} = {per_replica} "
            f"does not divide them ({gpus % per_replica} would sit idle)"
        ]
    return []


def _flags(model: ModelSpec, crossing: str | None, fits: bool, context_tokens: int) -> list[str]:
    """The cautions of a group split by the network (``"tp"`` or ``"ep"``) and of no room."""
    flags = []
    if crossing == "ep":
        flags.append(
            f"an EP group spans nodes, so its {model.alltoalls_per_token} all-to-alls per token "
            "run on the network"
        )
    elif crossing == "tp":
        flags.append(
            f"a TP group spans nodes, so its {model.allreduces_per_token} all-reduces per "
            "token run on the network"
        )
    if not fits:
        flags.append(
            f"no sequence of {format_count(context_tokens)} tokens fits beside the weights"
        )
    return flags


def _memory_problems(
    weights: float, accel: Accelerator, batch: int | None, fit: int
) -> tuple[int, list[str]]:
    """The batch (``None``: as many as ``fit``, to ``MAX_BATCH``) and why memory forbids it."""
    problems = []
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
    return batch, problems


def _boundary_wires(groups: Groups, intra: Fabric, inter: Fabric) -> list[Fabric]:
    """The stage-boundary wires of the replica with the most of them on the network."""
    by_replica: dict[int, list[Fabric]] = {}
    for d, _, _, across in stage_hand_offs(groups):
        by_replica.setdefault(d, []).append(inter if across else intra)
    return max(by_replica.values(), key=lambda ws: sum(w is inter for w in ws), default=[])


def _plan_dense(c: _Cluster, tp: int, pp: int, batch: int | None, algorithm: str) -> ClusterPlan:
    """:func:`plan_cluster` for a dense model: ``dp`` replicas of ``pp`` stages of TP ``tp``."""
    model, accel = c.model, c.accel
    dp = c.gpus_per_node * c.nodes // (tp * pp)
    slots = _placed(tp, dp, pp, c.gpus_per_node)
    groups = tp_groups(slots)
    tp_crosses = any(spans_nodes(g) for g in groups.values())
    tp_fabric = c.inter if tp_crosses else c.intra
    wires = _boundary_wires(groups, c.intra, c.inter)

    def sends(vectors: int) -> float:
        message = vectors * PP_VECTORS_PER_TOKEN * model.hidden_vector_bytes
        return sum(w.latency + message / w.bandwidth for w in wires)

    # each stage holds its own layers' weights and cache; the one fitting the fewest sequences binds
    stages = stage_models(model, min(pp, model.num_layers))
    weights = max(stage.weight_bytes for stage in stages) / tp
    sequences = min(
        context_parallel_max_sequences(stage, accel, c.context_tokens, tp) for stage in stages
    )
    batch, memory = _memory_problems(weights, accel, batch, sequences)
    problems = list(check_layout(model, tp, pp))
    problems += _count_problems("TP x PP", tp * pp, c.gpus_per_node, c.nodes)
    micro = math.ceil(batch / pp)
    # one sequence's micro-batch prices the stages when none fits
    options = {"batch": max(micro, 1), "context": c.context_tokens, "algorithm": algorithm}
    batched = decode_step(model, accel, tp_fabric, tp, **options)
    slowest = max(decode_step(stage, accel, tp_fabric, tp, **options).total_s for stage in stages)
    fits = weights > accel.memory_bytes or sequences > 0
    flags = list(layout_cautions(model, tp, min(pp, model.num_layers)))
    flags += _flags(model, "tp" if tp_crosses else None, fits, c.context_tokens)
    return ClusterPlan(
        **c._asdict(),
        tp=tp,
        pp=pp,
        dp=dp,
        problems=tuple(problems + memory),
        flags=tuple(flags),
        placement=tuple(s for s in slots if s.rank < dp * tp * pp),
        tp_fabric=tp_fabric,
        step=decode_step(model, accel, tp_fabric, tp, algorithm=algorithm),
        pp_send_s=sends(1),
        pp_network_boundaries=sum(w is c.inter for w in wires),
        weights_per_gpu_bytes=weights,
        sequences_per_replica=sequences,
        batch=batch,
        batched_step=batched if batch else None,
        batched_send_s=sends(micro) if batch else 0.0,
        stage_imbalance=slowest * len(stages) / batched.total_s,
    )


def _plan_moe(c: _Cluster, tp: int, pp: int, ep: int, batch: int | None) -> ClusterPlan:
    """:func:`plan_cluster` for an MoE model: one EP group (``ep > 1``) or TP group per replica."""
    model, accel = c.model, c.accel
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
    dp = c.gpus_per_node * c.nodes // n
    problems = [] if ep > 1 else list(check_layout(model, tp, 1))
    if ep > 1 and model.num_experts % ep:
        problems.append(
            f"EP = {ep} does not divide the {model.num_experts} experts: the ranks would hold "
            "unequal shares"
        )
    problems += _count_problems(parallelism.upper(), n, c.gpus_per_node, c.nodes)
    slots = _placed(n, dp, 1, c.gpus_per_node)
    crosses = any(spans_nodes(g) for g in tp_groups(slots).values())
    fabric = c.inter if crosses else c.intra
    weights = weights_per_gpu(model, n, parallelism)
    fit = sequences_that_fit(model, accel, n, parallelism, c.context_tokens)
    batch, memory = _memory_problems(weights, accel, batch, fit)
    fits = weights > accel.memory_bytes or fit > 0

    def step(batch: int = 1) -> MoEStep:
        # each sequence holds the plan's context, as the memory above counts it
        return moe_decode_step(
            model, accel, fabric, n, parallelism=parallelism, batch=batch, context=c.context_tokens
        )

    return ClusterPlan(
        **c._asdict(),
        tp=tp,
        pp=1,
        dp=dp,
        problems=tuple(problems + memory),
        flags=tuple(_flags(model, parallelism if crosses else None, fits, c.context_tokens)),
        placement=tuple(s for s in slots if s.rank < dp * n),
        tp_fabric=fabric,
        step=step(),
        pp_send_s=0.0,
        pp_network_boundaries=0,
        weights_per_gpu_bytes=weights,
        sequences_per_replica=fit,
        batch=batch,
        batched_step=step(batch) if batch else None,
        batched_send_s=0.0,
        ep=ep,
    )
