"""Problem q20: one request's cache over one NIC."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem, fmt_bytes
from lesson_lib.coursework.variants import pick
from lesson_lib.model.kv_transfer import kv_transfer_bytes, kv_transfer_time
from lesson_lib.model.specimen import INTER_NODE, MODEL
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import GB, MS, GiB, format_count, format_rate, format_seconds


def _nic(p: Params) -> Fabric:
    # The line rate is in bits per second: eight of them make a byte.
    return Fabric("NIC", INTER_NODE.latency, p["gbits"] * 1e9 / 8)


def _facts(p: Params) -> dict[str, str]:
    nic = _nic(p)
    total = kv_transfer_bytes(MODEL, p["context"])
    return {
        "context": format_count(p["context"]),
        "gbits": f"{p['gbits']} Gb/s",
        "latency": format_seconds(nic.latency, "us"),
        "per_token": fmt_bytes(MODEL.kv_bytes_per_token, "KiB"),
        "kv": fmt_bytes(MODEL.kv_bytes(p["context"]), "MiB", 0),
        "state": fmt_bytes(MODEL.state_bytes, "MiB", 4),
        "total": fmt_bytes(total, "MB", 2),
        "bandwidth": format_rate(nic.bandwidth),
        "time": format_seconds(kv_transfer_time(MODEL, p["context"], nic), "ms"),
        "attention_layers": str(MODEL.num_attention_layers),
        "linear_layers": str(MODEL.num_linear_layers),
    }


def _mistakes(p: Params) -> list[Mistake]:
    nic = _nic(p)
    total = kv_transfer_bytes(MODEL, p["context"])
    kv = MODEL.kv_bytes(p["context"])
    return [
        Mistake(
            "bits-as-bytes",
            (nic.latency + total / (8 * nic.bandwidth)) / MS,
            "A NIC's rate is in bits per second: divide it by 8 to get bytes per second.",
        ),
        Mistake(
            "state-forgotten",
            (nic.latency + kv / nic.bandwidth) / MS,
            f"The {MODEL.num_linear_layers} Gated DeltaNet layers' recurrent state crosses too, "
            "whatever the prompt's length.",
        ),
        Mistake(
            "binary-as-decimal",
            (nic.latency + total * GB / GiB / nic.bandwidth) / MS,
            "The cache is in binary units (MiB, GiB) and the NIC's rate in decimal ones "
            "(GB/s): convert the cache to bytes first.",
        ),
    ]


PROBLEM = Problem(
    qid="q20",
    title="A request's cache over one NIC",
    chapter="kv_transfer",
    difficulty=3,
    unit="ms",
    template=(
        "A disaggregated server prefills the specimen on one GPU and decodes it on one "
        "GPU of another node. A request of **{context}** tokens hands its cache from one "
        "to the other over one **{gbits}** NIC with {latency} of latency. The cache is "
        "the KV of the {attention_layers} attention layers ({per_token} per token) and "
        "the recurrent state of the {linear_layers} Gated DeltaNet layers ({state}). How "
        "long does the hand-off take, in **ms**?"
    ),
    solution_template=(
        "KV: {context} x {per_token} = {kv}; with the state's {state}, {total} in decimal "
        "bytes. The NIC carries {gbits} / 8 = {bandwidth}. {total} / {bandwidth} + "
        "{latency} = **{time}**."
    ),
    defaults={"context": 8192, "gbits": 400},
    sample=lambda rng: {
        # Not 32,768: there the state is 6.7 % of the cache, and leaving it out gives the
        # same time as reading GiB as GB (6.9 % less).
        "context": pick(rng, (1024, 2048, 4096, 8192, 16384, 65536)),
        "gbits": pick(rng, (100, 200, 400, 800)),
    },
    facts=_facts,
    reference=lambda p: kv_transfer_time(MODEL, p["context"], _nic(p)) / MS,
    mistakes=_mistakes,
    hint="Bytes = context x KV per token + the fixed state; bytes per second = the NIC's "
    "Gb/s x 1e9 / 8; time = latency + bytes / rate.",
)
