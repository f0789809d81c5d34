"""Problem q17: the bytes an expert-parallel rank sends per decoded token."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.collectives import alltoall_wire_bytes
from lesson_lib.model.units import MiB, format_count

#: The MoE shapes the variants draw from: (hidden size, layers, dense first layers, top-k).
SHAPES: dict[str, tuple[int, int, int, int]] = {
    "deepseek": (7168, 61, 3, 8),
    "qwen": (4096, 94, 0, 8),
    "mixtral": (4096, 32, 0, 2),
}


def _moe_layers(p: Params) -> int:
    _, layers, dense, _ = SHAPES[p["shape"]]
    return layers - dense


def _per_token(p: Params, alltoalls_per_layer: int = 2, k: int | None = None) -> float:
    """Bytes one rank sends per token it decodes: dispatch and combine in every MoE layer."""
    hidden, _, _, top_k = SHAPES[p["shape"]]
    k = top_k if k is None else k
    one = alltoall_wire_bytes(k * hidden * 2, p["n"])  # bf16, (n-1)/n off the rank
    return alltoalls_per_layer * _moe_layers(p) * one


def _reference(p: Params) -> float:
    return _per_token(p) / MiB


def _facts(p: Params) -> dict[str, str]:
    hidden, layers, dense, k = SHAPES[p["shape"]]
    n = p["n"]
    payload = k * hidden * 2
    return {
        "hidden": format_count(hidden),
        "layers": str(layers),
        "dense": str(dense),
        "moe_layers": str(_moe_layers(p)),
        "k": str(k),
        "n": str(n),
        "vector": fmt_bytes(hidden * 2, "KiB"),
        "payload": format_count(payload) + " B",
        "share": f"{n - 1}/{n}",
        "one": format_count(alltoall_wire_bytes(payload, n)) + " B",
        "alltoalls": str(2 * _moe_layers(p)),
        "answer": fmt_bytes(_per_token(p), "MiB", 3),
    }


def _mistakes(p: Params) -> list[Mistake]:
    hidden, _, _, k = SHAPES[p["shape"]]
    n = p["n"]
    whole = 2 * _moe_layers(p) * k * hidden * 2
    everyone = [
        Mistake(
            "all-ranks",
            _per_token(p) * n / MiB,
            "That is all ranks together; the question asks for one rank, which sends only "
            "its own tokens' vectors.",
        )
    ]
    return [
        Mistake(
            "one-alltoall",
            _per_token(p, alltoalls_per_layer=1) / MiB,
            "Each MoE layer has two all-to-alls: the dispatch sends the token's vectors to its "
            "experts, the combine brings the results back.",
        ),
        Mistake(
            "k-one",
            _per_token(p, k=1) / MiB,
            f"Each token goes to k = {k} experts, so the dispatch carries k hidden vectors "
            "per token, and the combine k results.",
        ),
        Mistake(
            "local-share-sent",
            whole / MiB,
            f"Under uniform routing 1/{n} of the vectors are for the rank's own experts and "
            f"never leave it: only ({n}-1)/{n} of the payload goes on the wire.",
        ),
        # With two ranks all ranks' bytes are the whole payload: one hint is enough.
        *(everyone if n > 2 else []),
    ]


PROBLEM = Problem(
    qid="q17",
    title="All-to-all bytes per token under expert parallelism",
    chapter="experts",
    difficulty=3,
    unit="MiB",
    decimals=3,
    close_rtol=0.02,
    template=(
        "A mixture-of-experts model has hidden size {hidden} and {layers} layers, of which the "
        "first {dense} are dense and the rest MoE layers; each token visits its top **{k}** "
        "experts. It is served with expert parallelism over **{n}** GPUs, routing is uniform, "
        "and both all-to-alls send bf16 vectors. How many bytes does **one rank** send over the "
        "wire for one token it decodes, over all layers, in **MiB**?"
    ),
    solution_template=(
        "Each MoE layer dispatches the token's {k} hidden vectors ({vector} each), a payload of "
        "{payload}, and combines as many results back. Under uniform routing {share} of each "
        "leaves the rank: {one} per all-to-all. There are {moe_layers} MoE layers with two "
        "all-to-alls each, {alltoalls} in all: **{answer}** per token."
    ),
    defaults={"shape": "deepseek", "n": 8},
    sample=lambda rng: {"shape": pick(rng, list(SHAPES)), "n": pick(rng, (2, 4, 8))},
    facts=_facts,
    reference=_reference,
    mistakes=_mistakes,
    hint="Bytes = 2 all-to-alls x MoE layers x (n-1)/n x k x hidden size x 2 B; "
    "1 MiB = 2**20 bytes.",
)
