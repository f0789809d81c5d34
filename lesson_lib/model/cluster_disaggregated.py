"""A disaggregated server: a prefill and a decode instance, placed, and each request's hand-off.

Where the two sit decides the wire of each request's KV cache (``book/kv_transfer.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int
from lesson_lib.model.cluster_plan import ClusterPlan
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.kv_transfer import Handoff, handoff
from lesson_lib.model.specimen import FAST, GPU, INTER_NODE, MODEL, NODE_ETHERNET, PROMPT_TOKENS
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec

#: Where the prefill and decode instances can sit, by key; each decides the hand-off's wire.
PLACEMENTS: dict[str, str] = {
    "one node": "both instances in one node, on NVLink",
    "rail": "separate nodes, a NIC per GPU on the compute fabric",
    "shared port": "separate nodes, through each node's shared Ethernet port",
}


@dataclass(frozen=True)
class DisaggregatedPlan:
    """A prefill instance and a decode instance, placed, checked and priced per request."""

    #: The prefill instance on its own GPUs (TP only).
    prefill: ClusterPlan
    #: The decode instance on its own GPUs (TP only).
    decode: ClusterPlan
    #: A key of :data:`PLACEMENTS`.
    placement: str
    #: One request's prefill and hand-off (:func:`lesson_lib.model.kv_transfer.handoff`).
    handoff: Handoff
    #: Why the plan is invalid (either instance's problems; under ``"one node"``, one not fitting).
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
    model, accel : ModelSpec, Accelerator, default MODEL, GPU
    gpus_per_node : int, default 8
        GPUs in each node, from 1 to 4096.
    prefill_tp, decode_tp : int, default 4
        Tensor-parallel degrees of the instances, from 1 to 4096.
    placement : str, default "rail"
        A key of :data:`PLACEMENTS`: ``"one node"`` hands over on ``intra``, ``"rail"`` on ``inter``
        with a NIC per GPU, ``"shared port"`` on ``shared``, one port per node.
    prompt_tokens : int, default PROMPT_TOKENS
        The request's prompt, from 1 to ``model.max_context``.
    intra, inter, shared : Fabric
        NVLink inside a node, one GPU's NIC, and a node's shared port.

    Returns
    -------
    DisaggregatedPlan
        Both instances' plans, the hand-off (2.14 ms shipped on ``"rail"``) and the problems.
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
