"""Problem q3: ring wire bytes per rank per token."""

from __future__ import annotations

from dataclasses import replace

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.collectives import allreduce_wire_bytes, ring_allreduce_factor
from lesson_lib.model.specimen import MODEL, TOKENS_PER_S
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.units import MiB, format_count, format_rate


def _model(p: Params) -> ModelSpec:
    return replace(MODEL, name="variant", hidden_size=p["hidden"], num_layers=p["layers"])


def _payload(p: Params) -> float:
    m = _model(p)
    return m.allreduces_per_token * m.hidden_vector_bytes


def _facts(p: Params) -> dict[str, str]:
    m = _model(p)
    n = p["n"]
    payload = _payload(p)
    wire = allreduce_wire_bytes(payload, n)
    return {
        "n": str(n),
        "hidden": format_count(m.hidden_size),
        "layers": str(m.num_layers),
        "per_layer": str(m.allreduces_per_layer),
        "allreduces": str(m.allreduces_per_token),
        "vector": fmt_bytes(m.hidden_vector_bytes, "KiB"),
        "payload": fmt_bytes(payload, "MiB", 4),
        "factor": format_count(ring_allreduce_factor(n), decimals=4),
        "wire": fmt_bytes(wire, "MiB", 4),
        "rate": format_rate(wire * TOKENS_PER_S, "MiB"),
        "tokens_per_s": str(TOKENS_PER_S),
    }


def _mistakes(p: Params) -> list[Mistake]:
    payload = _payload(p)
    n = p["n"]
    m = _model(p)
    return [
        Mistake(
            "payload-not-wire",
            payload / MiB,
            "That is the payload, not the bytes on the wire: a ring all-reduce makes each rank "
            "send 2(N-1)/N times the payload.",
        ),
        Mistake(
            "factor-two",
            2 * payload / MiB,
            "The ring factor is 2(N-1)/N, not 2: each phase sends (N-1)/N of the payload.",
        ),
        Mistake(
            "one-phase",
            (n - 1) / n * payload / MiB,
            "(N-1)/N is one phase only: reduce-scatter and all-gather each send that much, "
            "so the factor is 2(N-1)/N.",
        ),
        Mistake(
            "one-allreduce",
            allreduce_wire_bytes(m.hidden_vector_bytes, n) / MiB,
            "That is one all-reduce; a token needs one per reconciliation point, "
            f"{m.allreduces_per_layer} per layer.",
        ),
    ]


PROBLEM = Problem(
    qid="q3",
    title="Ring bytes per token for another N",
    chapter="payloads",
    difficulty=1,
    unit="MiB",
    decimals=3,
    close_rtol=0.02,
    template=(
        "A model with hidden size {hidden} and {layers} layers runs with tensor "
        "parallelism on **N = {n}** GPUs, bf16 activations, {per_layer} all-reduces per "
        "layer, each a ring all-reduce of one hidden vector. How many bytes does **each "
        "rank send** over the wire per decoded token, in **MiB**?"
    ),
    solution_template=(
        "One hidden vector is {hidden} x 2 B = {vector}; {allreduces} all-reduces per "
        "token make a payload of {payload}. A ring all-reduce makes each rank send "
        "2(N-1)/N = {factor} times the payload: **{wire}** per rank per token. At "
        "{tokens_per_s} tokens/s that is {rate}: the bytes are not the problem."
    ),
    defaults={"n": 8, "hidden": MODEL.hidden_size, "layers": MODEL.num_layers},
    sample=lambda rng: {
        "n": pick(rng, (3, 5, 6, 8)),
        "hidden": pick(rng, (4096, 5120, 8192)),
        "layers": pick(rng, (32, 48, 64, 80)),
    },
    facts=_facts,
    reference=lambda p: allreduce_wire_bytes(_payload(p), p["n"]) / MiB,
    mistakes=_mistakes,
    hint="Payload per token = all-reduces per token x hidden vector bytes; "
    "wire bytes = 2(N-1)/N x payload; 1 MiB = 2**20 bytes.",
)
