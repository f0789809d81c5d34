"""Problem q18: one decoded token's wait, EP across nodes against TP inside one."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fabric_of
from lesson_lib.coursework.variants import pick
from lesson_lib.model.collectives import allreduce_latency, alltoall_time
from lesson_lib.model.units import MS, format_seconds

#: GPUs per node, the TP degree; EP spans two such nodes.
GPUS_PER_NODE = 8


def _ep(p: Params, per_layer: int = 2, layers: int | None = None) -> float:
    """Seconds of all-to-all latency per token under EP over two nodes (one token: no bytes)."""
    layers = p["layers"] - p["dense"] if layers is None else layers
    return per_layer * layers * alltoall_time(0.0, 2 * GPUS_PER_NODE, fabric_of(p["network_us"]))


def _tp(p: Params, per_layer: int = 2) -> float:
    """Seconds of all-reduce latency per token under TP inside one node."""
    return per_layer * p["layers"] * allreduce_latency(GPUS_PER_NODE, fabric_of(p["nvlink_us"]))


def _reference(p: Params) -> float:
    return (_ep(p) - _tp(p)) / MS


def _facts(p: Params) -> dict[str, str]:
    moe = p["layers"] - p["dense"]
    return {
        "layers": str(p["layers"]),
        "dense": str(p["dense"]),
        "moe": str(moe),
        "gpus": str(GPUS_PER_NODE),
        "ep_gpus": str(2 * GPUS_PER_NODE),
        "nvlink": f"{p['nvlink_us']:g} us",
        "network": f"{p['network_us']:g} us",
        "alltoalls": str(2 * moe),
        "allreduces": str(2 * p["layers"]),
        "ep": format_seconds(_ep(p), "ms"),
        "tp": format_seconds(_tp(p), "ms"),
        "answer": format_seconds(_ep(p) - _tp(p), "ms"),
    }


def _mistakes(p: Params) -> list[Mistake]:
    ep, tp = _ep(p), _tp(p)
    return [
        Mistake(
            "one-alltoall",
            (_ep(p, per_layer=1) - tp) / MS,
            "Two all-to-alls per MoE layer, not one: the dispatch, then the combine.",
        ),
        Mistake(
            "dense-layers",
            (_ep(p, layers=p["layers"]) - tp) / MS,
            f"The first {p['dense']} layers are dense: their FFN has no experts and no all-to-all.",
        ),
        Mistake(
            "tp-one-allreduce",
            (ep - _tp(p, per_layer=1)) / MS,
            "Tensor parallelism needs two all-reduces in every layer, after the attention "
            "and after the FFN.",
        ),
        Mistake("ep-only", ep / MS, "That is EP's wait alone; subtract TP's all-reduce latency."),
    ]


PROBLEM = Problem(
    qid="q18",
    title="Expert parallelism across nodes against TP inside one",
    chapter="experts",
    difficulty=3,
    unit="ms",
    template=(
        "A mixture-of-experts model has **{layers}** layers; the first **{dense}** are dense, "
        "every later one is an MoE layer. One sequence is decoded either with tensor "
        "parallelism over the {gpus} GPUs of one node, where a small all-reduce costs "
        "**{nvlink}**, or with expert parallelism over {ep_gpus} GPUs in two nodes, where a "
        "small all-to-all across the network costs **{network}**. Counting only these fixed "
        "latencies (one token's bytes are negligible), how much longer does a token wait for "
        "its collectives under EP than under TP, in **ms**?"
    ),
    solution_template=(
        "EP: only the {moe} MoE layers have experts, each with a dispatch and a combine, "
        "{alltoalls} all-to-alls x {network} = {ep}. TP: two all-reduces in each of the "
        "{layers} layers, {allreduces} x {nvlink} = {tp}. EP waits **{answer}** longer: its "
        "all-to-alls are about as many as TP's all-reduces, so the wire they run on decides."
    ),
    defaults={"layers": 61, "dense": 3, "nvlink_us": 10.0, "network_us": 25.0},
    sample=lambda rng: {
        "layers": pick(rng, (28, 48, 61, 94)),
        "dense": pick(rng, (1, 2, 3)),
        "nvlink_us": pick(rng, (6.0, 8.0, 10.0)),
        "network_us": pick(rng, (20.0, 25.0, 40.0)),
    },
    facts=_facts,
    reference=_reference,
    mistakes=_mistakes,
    hint="EP: 2 x (layers - dense layers) all-to-alls x the network's latency; TP: 2 x layers "
    "all-reduces x NVLink's latency; subtract.",
)
