"""The problem set: twelve problems as data, each answered by ``lesson_lib`` itself.

Every problem has an id (``"q1"`` .. ``"q12"``), a statement template, a
parameter sampler for per-student variants, a reference-answer function that
calls the lesson's model (``memory_budget``, ``allreduce_wire_bytes``,
``decode_step``, ``crossover_bytes``, ``check_layout`` ...) and never a typed
answer, the usual mistakes with a hint for each, and a worked solution.

Without a student ID a problem uses the book's version: the lesson's specimen
and assumptions, changed only where the problem asks about something else
(another model, another N, another fabric).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from lesson_lib.collectives import allreduce_wire_bytes, crossover_bytes, ring_allreduce_factor
from lesson_lib.coursework.variants import normalize_student, pick, rng_for, shuffled
from lesson_lib.layout import check_layout
from lesson_lib.memory import max_sequences, memory_budget, state_share
from lesson_lib.specimen import (
    FAST,
    GPU,
    MODEL,
    NVLINK_BANDWIDTH,
    PCIE_BANDWIDTH,
    PROMPT_TOKENS,
    TOKENS_PER_S,
)
from lesson_lib.specimen import SLOW as SLOW_FABRIC
from lesson_lib.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.step_time import decode_step, prefill_step, speedup
from lesson_lib.units import (
    BYTE_UNITS,
    GB,
    MB,
    MS,
    TB,
    TIME_UNITS,
    US,
    GiB,
    MiB,
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)

Params = dict[str, Any]


@dataclass(frozen=True)
class Mistake:
    """A wrong answer students often give, and what to tell them.

    Attributes
    ----------
    value : float
        The wrong answer, in the problem's unit.
    hint : str
        What probably went wrong.
    """

    value: float
    hint: str


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice problem.

    Attributes
    ----------
    text : str
        The option as shown.
    why : str
        Why it is right or wrong (shown when a student picks it, and in the solution).
    correct : bool
        True for the one right option.
    """

    text: str
    why: str
    correct: bool = False


@dataclass(frozen=True)
class Problem:
    """One problem of the set.

    Attributes
    ----------
    qid : str
        Id used by :func:`~lesson_lib.coursework.check.check`, e.g. ``"q3"``.
    title : str
        Short title.
    chapter : str
        Slug of the chapter the problem practises.
    difficulty : int
        1 (one step) to 3 (several steps or a trap).
    kind : str
        How the answer is compared: ``"number"`` within a tolerance,
        ``"count"`` exactly, ``"choice"`` by letter.
    unit : str
        Unit of the answer (``"GB"``, ``"MiB"``, ``"ms"``, ``"us"``, ``"x"`` ...);
        empty for multiple choice.
    template : str
        Statement in Markdown, filled in with ``facts`` by ``str.format``.
    solution_template : str
        Worked solution in Markdown, filled in the same way.
    defaults : dict
        Parameters of the book's version (no student ID).
    sample : callable
        ``sample(rng) -> params`` draws one student's parameters.
    facts : callable
        ``facts(params) -> dict of str``: formatted values for the templates.
    reference : callable
        ``reference(params)``: the answer in ``unit`` (a float, an int, or
        a letter for multiple choice), computed by ``lesson_lib``.
    mistakes : callable
        ``mistakes(params) -> list of Mistake``: problem-specific wrong answers.
    choices : callable, optional
        ``choices(params) -> list of Choice`` in display order (multiple choice).
    decimals : int, optional
        For byte counts: an answer rounded to this many decimals in
        ``unit`` is right.
    rtol : float
        Relative tolerance of a right answer (times, speed-ups, rates).
    close_rtol : float
        Relative distance still called "close".
    hint : str
        General advice when an answer is wrong and matches no known mistake.
    """

    qid: str
    title: str
    chapter: str
    difficulty: int
    kind: str
    unit: str
    template: str
    solution_template: str
    defaults: Params
    sample: Callable[[np.random.Generator], Params]
    facts: Callable[[Params], dict[str, str]]
    reference: Callable[[Params], Any]
    mistakes: Callable[[Params], list[Mistake]] = field(default=lambda p: [])
    choices: Callable[[Params], list[Choice]] | None = None
    decimals: int | None = None
    rtol: float = 0.01
    close_rtol: float = 0.05
    hint: str = ""

    @property
    def number(self) -> int:
        """Position in the set (``q3`` -> 3)."""
        return int(self.qid[1:])

    @property
    def stars(self) -> str:
        """Difficulty as one to three stars."""
        return "\u2605" * self.difficulty

    def answer_format(self) -> str:
        """How the answer should be written, in words (for messages and statements)."""
        if self.kind == "choice":
            return "one letter as a string, e.g. 'b'"
        if self.kind == "count":
            return f"a whole number of {self.unit}, e.g. 3"
        if self.unit == "x":
            return "a plain number (the ratio), e.g. 1.5"
        places = ""
        if self.decimals is not None:
            plural = "" if self.decimals == 1 else "s"
            places = f", to {self.decimals} decimal place{plural}"
        return f"a plain number in {self.unit}{places}, e.g. 1.5"


# ---------------------------------------------------------------------------
# Models, cards and fabrics the variants draw from.

#: Shapes of pure-attention models, by size in billions of parameters. They are
#: shaped like public dense models of those sizes (grouped-query attention,
#: head dim 128); the 13B one has as many KV heads as query heads.
PURE_ATTENTION_SHAPES: dict[int, dict[str, int]] = {
    8: {"hidden_size": 4096, "num_layers": 32, "num_kv_heads": 8, "num_query_heads": 32},
    13: {"hidden_size": 5120, "num_layers": 40, "num_kv_heads": 40, "num_query_heads": 40},
    32: {"hidden_size": 5120, "num_layers": 64, "num_kv_heads": 8, "num_query_heads": 40},
    34: {"hidden_size": 8192, "num_layers": 48, "num_kv_heads": 8, "num_query_heads": 64},
    70: {"hidden_size": 8192, "num_layers": 80, "num_kv_heads": 8, "num_query_heads": 64},
    72: {"hidden_size": 8192, "num_layers": 80, "num_kv_heads": 8, "num_query_heads": 64},
}
CONTEXTS = (32_768, 65_536, 131_072)

#: Accelerator classes by HBM bandwidth (the decode roofline) and bf16 peak.
#: Cards the variants draw from, with vendor datasheet figures as for the specimen,
#: A100 SXM 80 GB (HBM2e 2.039 TB/s, 312 TFLOP/s dense bf16) and H200 SXM
#: (141 GB HBM3e, 4.8 TB/s, same dense bf16 peak as the H100).
ACCELERATORS: dict[str, Accelerator] = {
    "a100": Accelerator("A100 SXM-class, 80 GB", 80 * GB, 2.039 * TB, 312e12),
    "h100": GPU,
    "h200": Accelerator("H200 SXM-class, 141 GB", 141 * GB, 4.8 * TB, 989e12),
}


def pure_attention_model(billions: int, context: int = 131_072) -> ModelSpec:
    """A pure-attention model of one of the sizes in :data:`PURE_ATTENTION_SHAPES`.

    Parameters
    ----------
    billions : int
        Parameters in billions (a key of :data:`PURE_ATTENTION_SHAPES`).
    context : int, default 131072
        Longest context, tokens.

    Returns
    -------
    ModelSpec
        Every layer is full attention, head dim 128, bf16.
    """
    shape = PURE_ATTENTION_SHAPES[billions]
    return ModelSpec(
        name=f"{billions}B pure-attention model",
        params=billions * 1e9,
        head_dim=128,
        max_context=context,
        num_attention_layers=shape["num_layers"],
        **shape,
    )


def hybrid_model(attention_layers: int, kv_heads: int, head_dim: int) -> ModelSpec:
    """The specimen with another number of attention layers and KV heads.

    Parameters
    ----------
    attention_layers : int
        Full-attention layers among the 64 (the rest stay Gated DeltaNet).
    kv_heads, head_dim : int
        KV heads per attention layer and their dimension.

    Returns
    -------
    ModelSpec
        Same parameters, DeltaNet layers and context as the specimen.
    """
    return replace(
        MODEL,
        name="hybrid variant",
        num_attention_layers=attention_layers,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
    )


def _fabric(latency_us: float, bandwidth_gbs: float = NVLINK_BANDWIDTH / GB) -> Fabric:
    return Fabric(
        name=f"{latency_us:g} us fabric", latency=latency_us * US, bandwidth=bandwidth_gbs * GB
    )


def _card(key: str) -> Accelerator:
    return ACCELERATORS[key]


def _card_facts(key: str) -> dict[str, str]:
    card = _card(key)
    return {"card": card.name, "hbm": format_rate(card.hbm_bandwidth, "TB")}


def _b(nbytes: float, unit: str, decimals: int = 2) -> str:
    return format_bytes(nbytes, unit, decimals=decimals)


def _ms(seconds: float) -> str:
    return format_seconds(seconds, "ms")


def _us(seconds: float) -> str:
    return format_seconds(seconds, "us")


def _keep_distinct(reference: float, mistakes: list[Mistake], rtol: float = 0.005) -> list[Mistake]:
    """Drop mistakes that coincide with the right answer (e.g. the ring factor at N = 2)."""
    out = []
    for m in mistakes:
        if math.isfinite(m.value) and abs(m.value - reference) > rtol * abs(reference):
            out.append(m)
    return out


# ---------------------------------------------------------------------------
# q1: weights of a pure-attention model


def _q1_model(p: Params) -> ModelSpec:
    return pure_attention_model(p["billions"])


def _q1_facts(p: Params) -> dict[str, str]:
    m = _q1_model(p)
    return {
        "params": format_count(m.params / 1e9) + " billion",
        "dtype": str(m.dtype_bytes),
        "weights_gb": _b(m.weight_bytes, "GB"),
        "weights_gib": _b(m.weight_bytes, "GiB"),
        "gpu": _b(GPU.memory_bytes, "GB"),
        "gpus_needed": str(math.ceil(m.weight_bytes / GPU.memory_bytes)),
    }


def _q1_mistakes(p: Params) -> list[Mistake]:
    m = _q1_model(p)
    return [
        Mistake(
            m.params / GB,
            "That is the number of parameters in billions: each bf16 weight takes "
            f"{m.dtype_bytes} bytes.",
        )
    ]


# ---------------------------------------------------------------------------
# q2: KV cache of one full-length sequence, pure attention


def _q2_model(p: Params) -> ModelSpec:
    return pure_attention_model(p["billions"], p["context"])


def _q2_facts(p: Params) -> dict[str, str]:
    m = _q2_model(p)
    return {
        "params": format_count(m.params / 1e9) + " billion",
        "layers": str(m.num_layers),
        "kv_heads": str(m.num_kv_heads),
        "q_heads": str(m.num_query_heads),
        "head_dim": str(m.head_dim),
        "context": format_count(m.max_context),
        "dtype": str(m.dtype_bytes),
        "per_token": _b(m.kv_bytes_per_token, "KiB"),
        "per_token_bytes": format_count(m.kv_bytes_per_token),
        "kv_gib": _b(m.kv_bytes(m.max_context), "GiB"),
        "kv_gb": _b(m.kv_bytes(m.max_context), "GB"),
    }


def _q2_mistakes(p: Params) -> list[Mistake]:
    m = _q2_model(p)
    full = m.kv_bytes(m.max_context) / GiB
    out = [
        Mistake(
            full / 2,
            "Half the right size: the cache keeps both K and V, and each element takes "
            f"{m.dtype_bytes} bytes in bf16. Did you drop one of the two factors of 2?",
        ),
        Mistake(
            full * 2,
            "Twice the right size: count K and V once each, and bf16 is 2 bytes per element.",
        ),
    ]
    if m.num_query_heads and m.num_query_heads != m.num_kv_heads:
        out.append(
            Mistake(
                full * m.num_query_heads / m.num_kv_heads,
                "Only the KV heads are cached; with grouped-query attention there are fewer "
                "of them than query heads.",
            )
        )
    return out


# ---------------------------------------------------------------------------
# q3: ring wire bytes per rank per token


def _q3_model(p: Params) -> ModelSpec:
    return replace(MODEL, name="variant", hidden_size=p["hidden"], num_layers=p["layers"])


def _q3_payload(p: Params) -> float:
    m = _q3_model(p)
    return m.allreduces_per_token * m.hidden_vector_bytes


def _q3_facts(p: Params) -> dict[str, str]:
    m = _q3_model(p)
    n = p["n"]
    payload = _q3_payload(p)
    wire = allreduce_wire_bytes(payload, n)
    return {
        "n": str(n),
        "hidden": format_count(m.hidden_size),
        "layers": str(m.num_layers),
        "per_layer": str(m.allreduces_per_layer),
        "allreduces": str(m.allreduces_per_token),
        "vector": _b(m.hidden_vector_bytes, "KiB"),
        "payload": _b(payload, "MiB", 4),
        "factor": format_count(ring_allreduce_factor(n), decimals=4),
        "wire": _b(wire, "MiB", 4),
        "rate": format_rate(wire * TOKENS_PER_S, "MiB"),
        "tokens_per_s": str(TOKENS_PER_S),
    }


def _q3_mistakes(p: Params) -> list[Mistake]:
    payload = _q3_payload(p)
    n = p["n"]
    m = _q3_model(p)
    return [
        Mistake(
            payload / MiB,
            "That is the payload, not the bytes on the wire: a ring all-reduce makes each rank "
            "send 2(N-1)/N times the payload.",
        ),
        Mistake(
            2 * payload / MiB,
            "The ring factor is 2(N-1)/N, not 2: each phase sends (N-1)/N of the payload.",
        ),
        Mistake(
            (n - 1) / n * payload / MiB,
            "(N-1)/N is one phase only: reduce-scatter and all-gather each send that much, "
            "so the factor is 2(N-1)/N.",
        ),
        Mistake(
            allreduce_wire_bytes(m.hidden_vector_bytes, n) / MiB,
            "That is one all-reduce; a token needs one per reconciliation point, "
            f"{m.allreduces_per_layer} per layer.",
        ),
    ]


# ---------------------------------------------------------------------------
# q4: multiple choice, why decode is latency-bound


def _q4_choices(p: Params) -> list[Choice]:
    m = MODEL
    payload = m.allreduces_per_token * m.hidden_vector_bytes
    wire4 = allreduce_wire_bytes(payload, 4)
    cross = crossover_bytes(FAST, 2)
    options = [
        Choice(
            f"Each of the {m.allreduces_per_token} all-reduces of a token carries a single "
            f"hidden vector ({_b(m.hidden_vector_bytes, 'KiB')}), far below the crossover size "
            "alpha x B, and they run one after another, so the fixed cost of each collective "
            "adds up.",
            f"Right: {_b(m.hidden_vector_bytes, 'KiB')} is tiny next to the crossover of a fast "
            f"fabric ({_b(cross, 'MB')} at {_us(FAST.latency)} and {format_rate(FAST.bandwidth)}), "
            "so each "
            "all-reduce costs about its latency, and the token pays it "
            f"{m.allreduces_per_token} times in series.",
            correct=True,
        ),
        Choice(
            f"At {TOKENS_PER_S} tokens/s the {_b(wire4, 'MiB', 3)} each rank sends per token "
            "(N = 4) is more than an NVLink-class fabric can carry.",
            f"No: that is {format_rate(wire4 * TOKENS_PER_S, 'MiB')}, a tiny fraction of "
            f"{format_rate(NVLINK_BANDWIDTH)}, and comfortable even for PCIe.",
        ),
        Choice(
            "The ring algorithm sends 2(N-1)/N times the payload, nearly doubling the traffic, "
            "and that doubling is what makes decode slow.",
            "No: the factor stays below 2, and doubling a few MiB per token still leaves the "
            "bytes negligible; the cost is the number of serial round trips.",
        ),
        Choice(
            "Decode reads every weight from HBM for each token, and that memory read is the "
            "latency the fabric adds.",
            "No: streaming the weights is the compute side of the step (HBM bandwidth); the "
            "fabric's latency is a separate, fixed cost per all-reduce that does not shrink "
            "when you add GPUs.",
        ),
    ]
    return [options[i] for i in p["order"]]


# ---------------------------------------------------------------------------
# q5: decode time on another fabric


def _q5_step(p: Params, **kw: Any):
    return decode_step(MODEL, _card(p["card"]), _fabric(p["latency_us"]), p["n"], **kw)


def _q5_facts(p: Params) -> dict[str, str]:
    step = _q5_step(p, include_bandwidth=False)
    m = MODEL
    return {
        **_card_facts(p["card"]),
        "n": str(p["n"]),
        "latency": _us(p["latency_us"] * US),
        "weights": _b(m.weight_bytes, "GB"),
        "share": _b(m.weight_bytes / p["n"], "GB"),
        "compute": _ms(step.compute_s),
        "allreduces": str(m.allreduces_per_token),
        "comm": _ms(step.latency_s),
        "total": _ms(step.total_s),
        "tokens_per_s": format_count(step.tokens_per_s),
    }


def _q5_mistakes(p: Params) -> list[Mistake]:
    step = _q5_step(p, include_bandwidth=False)
    m = MODEL
    one = decode_step(m, _card(p["card"]), _fabric(p["latency_us"]), 1)
    return [
        Mistake(
            step.compute_s / MS,
            "That is the weight-streaming time alone: every token also waits for "
            f"{m.allreduces_per_token} all-reduces, each costing the fabric's latency.",
        ),
        Mistake(
            step.latency_s / MS,
            "That is the communication alone: add the time to stream this GPU's share of "
            "the weights from HBM.",
        ),
        Mistake(
            (step.compute_s + step.latency_s / m.allreduces_per_layer) / MS,
            f"There are {m.allreduces_per_layer} all-reduces per layer, "
            f"{m.allreduces_per_token} per token, not one per layer.",
        ),
        Mistake(
            (one.compute_s + step.latency_s) / MS,
            "With tensor parallelism each GPU streams only its 1/N share of the weights.",
        ),
    ]


# ---------------------------------------------------------------------------
# q6: speed-up from 2 to 4 GPUs on one fabric


def _q6_steps(p: Params):
    card, fabric = _card(p["card"]), _fabric(p["latency_us"])
    two = decode_step(MODEL, card, fabric, 2, include_bandwidth=False)
    four = decode_step(MODEL, card, fabric, 4, include_bandwidth=False)
    return two, four


def _q6_facts(p: Params) -> dict[str, str]:
    two, four = _q6_steps(p)
    return {
        **_card_facts(p["card"]),
        "latency": _us(p["latency_us"] * US),
        "allreduces": str(MODEL.allreduces_per_token),
        "compute_2": _ms(two.compute_s),
        "compute_4": _ms(four.compute_s),
        "comm": _ms(two.latency_s),
        "total_2": _ms(two.total_s),
        "total_4": _ms(four.total_s),
        "speedup": format_ratio(speedup(two, four), decimals=3),
    }


def _q6_mistakes(p: Params) -> list[Mistake]:
    two, four = _q6_steps(p)
    return [
        Mistake(
            2.0,
            "Twice the GPUs halves only the weight-streaming time; the all-reduce latency "
            "per token stays the same, so the speed-up is below 2.",
        ),
        Mistake(
            1 / speedup(two, four),
            "Upside down: the speed-up is the 2-GPU time divided by the 4-GPU time (above 1).",
        ),
    ]


# ---------------------------------------------------------------------------
# q7: crossover message size


def _q7_fabric(p: Params) -> Fabric:
    return _fabric(p["latency_us"], p["bandwidth_gbs"])


def _q7_facts(p: Params) -> dict[str, str]:
    f = _q7_fabric(p)
    n = p["n"]
    return {
        "latency": _us(f.latency),
        "bandwidth": format_rate(f.bandwidth),
        "n": str(n),
        "factor": format_count(ring_allreduce_factor(n), decimals=4),
        "alpha_b": _b(f.latency * f.bandwidth, "MB", 3),
        "crossover": _b(crossover_bytes(f, n), "MB", 3),
        "crossover_mib": _b(crossover_bytes(f, n), "MiB", 3),
        "vector": _b(MODEL.hidden_vector_bytes, "KiB"),
        "prompt": format_count(PROMPT_TOKENS),
        "prompt_payload": _b(PROMPT_TOKENS * MODEL.hidden_vector_bytes, "MiB"),
    }


def _q7_mistakes(p: Params) -> list[Mistake]:
    f = _q7_fabric(p)
    n = p["n"]
    return [
        Mistake(
            f.latency * f.bandwidth / MB,
            "That is alpha x B, right for 2 GPUs only: with N ranks the wire carries "
            "2(N-1)/N times the payload, so divide by that factor.",
        ),
        Mistake(
            f.latency * f.bandwidth * ring_allreduce_factor(n) / MB,
            "The factor 2(N-1)/N multiplies the payload on the wire, so the crossover "
            "payload is alpha x B divided by it, not multiplied.",
        ),
        Mistake(
            crossover_bytes(f, n) * 1e3 / MB,
            "1000 times too large: a microsecond is 1e-6 s, not 1e-3 s.",
        ),
    ]


# ---------------------------------------------------------------------------
# q8: prefill wire time


def _q8_step(p: Params):
    fabric = Fabric("prefill fabric", SLOW_FABRIC.latency, p["bandwidth_gbs"] * GB)
    return prefill_step(MODEL, GPU, fabric, p["n"], p["tokens"])


def _q8_facts(p: Params) -> dict[str, str]:
    step = _q8_step(p)
    m = MODEL
    payload = p["tokens"] * m.hidden_vector_bytes
    wire_total = m.allreduces_per_token * allreduce_wire_bytes(payload, p["n"])
    return {
        "tokens": format_count(p["tokens"]),
        "n": str(p["n"]),
        "bandwidth": format_rate(p["bandwidth_gbs"] * GB),
        "allreduces": str(m.allreduces_per_token),
        "vector": _b(m.hidden_vector_bytes, "KiB"),
        "payload": _b(payload, "MiB"),
        "factor": format_count(ring_allreduce_factor(p["n"]), decimals=4),
        "wire_total": _b(wire_total, "GiB", 3),
        "wire_total_gb": _b(wire_total, "GB", 3),
        "time": _ms(step.bandwidth_s),
        "latency_total": _ms(step.latency_s),
        "flops": _ms(step.flops_s),
    }


def _q8_mistakes(p: Params) -> list[Mistake]:
    step = _q8_step(p)
    m = MODEL
    payload = p["tokens"] * m.hidden_vector_bytes
    bandwidth = p["bandwidth_gbs"] * GB
    return [
        Mistake(
            m.allreduces_per_token * payload / bandwidth / MS,
            "You used the payload, not the wire bytes: each rank sends 2(N-1)/N times it.",
        ),
        Mistake(
            step.bandwidth_s / m.allreduces_per_token / MS,
            f"That is one all-reduce; the prompt goes through all {m.allreduces_per_token}.",
        ),
        Mistake(
            step.bandwidth_s * GiB / GB / MS,
            "GB/s is 1e9 bytes per second; convert GiB of traffic to bytes (x 2**30) first.",
        ),
    ]


# ---------------------------------------------------------------------------
# q9: multiple choice, why tensor parallelism stays inside a node


def _q9_choices(p: Params) -> list[Choice]:
    m = MODEL
    options = [
        Choice(
            f"It reconciles {m.allreduces_per_layer} times per layer, "
            f"{m.allreduces_per_token} blocking all-reduces for every token, so the wire's "
            "latency is paid over and over; only the fabric inside a node is fast enough, "
            "while pipeline and data parallelism talk rarely and can cross the network.",
            "Right: the form of parallelism that talks most often needs the quickest link. "
            "A pipeline stage boundary passes one activation per token; data parallelism "
            "synchronizes once per training step.",
            correct=True,
        ),
        Choice(
            "Because the weights would not fit in memory if the tensor-parallel group "
            "spanned two nodes.",
            "No: tensor parallelism splits the weights the same way whichever wire joins "
            "the GPUs; memory does not depend on where the group sits.",
        ),
        Choice(
            "Because tensor parallelism sends more bytes per decoded token than any network "
            "card can carry.",
            "No: a decoded token puts only a few MiB on each rank's wire; the trouble is the "
            "number of serial round trips, each paying the network's latency.",
        ),
        Choice(
            "Because the model's heads divide only by small numbers, so a tensor-parallel "
            "group can never be larger than one node.",
            "No: divisibility limits the degree (TP must divide the head counts), not where "
            "the group runs; a group of 4 could span two nodes and divide evenly.",
        ),
    ]
    return [options[i] for i in p["order"]]


# ---------------------------------------------------------------------------
# q10: how many full-length sequences fit, hybrid variant


def _q10_model(p: Params) -> ModelSpec:
    return hybrid_model(p["attention_layers"], p["kv_heads"], p["head_dim"])


def _q10_facts(p: Params) -> dict[str, str]:
    m = _q10_model(p)
    n = p["n"]
    ctx = m.max_context
    empty = memory_budget(m, GPU, n, ctx, 0)
    one = memory_budget(m, GPU, n, ctx, 1)
    heads_per_rank = math.ceil(m.num_kv_heads / n)
    return {
        "attention_layers": str(m.num_attention_layers),
        "layers": str(m.num_layers),
        "linear_layers": str(m.num_linear_layers),
        "kv_heads": str(m.num_kv_heads),
        "head_dim": str(m.head_dim),
        "context": format_count(ctx),
        "n": str(n),
        "gpu": _b(GPU.memory_bytes, "GB"),
        "weights": _b(m.weight_bytes, "GB"),
        "weights_share": _b(empty.weights_bytes, "GB"),
        "free": _b(empty.free_bytes, "GB"),
        "per_token": _b(m.kv_bytes_per_token, "KiB"),
        "kv_full": _b(m.kv_bytes(ctx), "GiB"),
        "heads_per_rank": str(heads_per_rank),
        "kv_share": _b(one.kv_bytes, "GiB", 3),
        "kv_share_gb": _b(one.kv_bytes, "GB", 3),
        "state": _b(m.state_bytes, "MiB", 1),
        "state_share": _b(one.state_bytes, "MiB", 1),
        "per_seq": _b(one.used_bytes - empty.used_bytes, "GB", 3),
        "answer": str(max_sequences(m, GPU, n, ctx)),
        "replicated": (
            f"There are only {m.num_kv_heads} KV heads for {n} GPUs, so each GPU still holds "
            f"{heads_per_rank} whole head{'s' if heads_per_rank > 1 else ''}: the cache does not shrink N-fold."
            if m.num_kv_heads < n
            else f"The {m.num_kv_heads} KV heads split evenly, {heads_per_rank} per GPU."
        ),
    }


def _q10_mistakes(p: Params) -> list[Mistake]:
    m = _q10_model(p)
    n = p["n"]
    ctx = m.max_context
    empty = memory_budget(m, GPU, n, ctx, 0)
    one = memory_budget(m, GPU, n, ctx, 1)
    per_seq = one.used_bytes - empty.used_bytes
    state = m.state_bytes * state_share(m, n)
    out = []
    if m.num_kv_heads < n:
        out.append(
            Mistake(
                math.floor(empty.free_bytes / (m.kv_bytes(ctx) / n + state)),
                f"Only {m.num_kv_heads} KV heads: past that many GPUs the heads are replicated, "
                "so each GPU keeps a whole head's cache, not 1/N of the cache.",
            )
        )
    out += [
        Mistake(
            math.floor((GPU.memory_bytes - m.weight_bytes) / per_seq),
            "Tensor parallelism splits the weights too: each GPU holds 1/N of them.",
        ),
        Mistake(
            max_sequences(m, replace(GPU, memory_bytes=80 * GiB), n, ctx),
            "The card has 80 GB (decimal, 1e9 bytes), not 80 GiB.",
        ),
        Mistake(
            math.floor(empty.free_bytes / (per_seq - state)),
            "Each sequence also keeps the DeltaNet layers' fixed state beside its KV cache.",
        ),
    ]
    return out


# ---------------------------------------------------------------------------
# q11: the largest latency at which 4 GPUs still beat 2


def _q11_parts(p: Params):
    card = _card(p["card"])
    two = decode_step(MODEL, card, _fabric(p["latency_us"]), 2, include_bandwidth=False)
    four_free = decode_step(MODEL, card, _fabric(0.0), 4, include_bandwidth=False)
    return two, four_free


def _q11_answer(p: Params) -> float:
    two, four_free = _q11_parts(p)
    return (two.total_s - four_free.total_s) / MODEL.allreduces_per_token / US


def _q11_facts(p: Params) -> dict[str, str]:
    two, four_free = _q11_parts(p)
    budget = two.total_s - four_free.total_s
    return {
        **_card_facts(p["card"]),
        "latency": _us(p["latency_us"] * US),
        "allreduces": str(MODEL.allreduces_per_token),
        "compute_2": _ms(two.compute_s),
        "comm_2": _ms(two.latency_s),
        "total_2": _ms(two.total_s),
        "compute_4": _ms(four_free.compute_s),
        "budget": _ms(budget),
        "answer": format_seconds(budget / MODEL.allreduces_per_token, "us", decimals=1),
    }


def _q11_mistakes(p: Params) -> list[Mistake]:
    two, four_free = _q11_parts(p)
    return [
        Mistake(
            (two.total_s - four_free.total_s) / US,
            f"That is the whole time budget per token; it is shared by "
            f"{MODEL.allreduces_per_token} all-reduces, so divide by that.",
        ),
        Mistake(
            float(p["latency_us"]),
            "That is the 2-GPU fabric's own latency. The question is how slow the 4-GPU "
            f"fabric may be before it loses: solve compute_4 + {MODEL.allreduces_per_token} x "
            "alpha = the 2-GPU time.",
        ),
    ]


# ---------------------------------------------------------------------------
# q12: multiple choice, a layout for 2 nodes x 4 GPUs

NODES, GPUS_PER_NODE = 2, 4

#: Candidate layouts; (description, tp, pp, does a TP group cross the node boundary?).
LAYOUTS: tuple[tuple[str, int, int, bool], ...] = (
    ("TP = 8: one tensor-parallel group over all eight GPUs of both nodes.", 8, 1, True),
    (
        "TP = 4 inside each node, PP = 2 across the nodes (one pipeline stage per node).",
        4,
        2,
        False,
    ),
    (
        "TP = 2 with each pair made of one GPU from each node, PP = 4 inside the nodes.",
        2,
        4,
        True,
    ),
    ("TP = 4 made of two GPUs from each node, PP = 2.", 4, 2, True),
)


def layout_problems(tp: int, pp: int, crosses_nodes: bool) -> list[str]:
    """What is wrong with a candidate layout of :data:`LAYOUTS` for the specimen.

    Parameters
    ----------
    tp, pp : int
        Tensor- and pipeline-parallel degrees.
    crosses_nodes : bool
        True when a tensor-parallel group spans the node boundary.

    Returns
    -------
    list of str
        :func:`~lesson_lib.layout.check_layout`'s divisibility problems, plus
        the wire problem when TP crosses nodes; empty for a good layout.
    """
    problems = check_layout(MODEL, tp, pp)
    if tp * pp != NODES * GPUS_PER_NODE:
        problems.append(f"TP x PP = {tp * pp} does not use the {NODES * GPUS_PER_NODE} GPUs")
    if crosses_nodes:
        problems.append(
            f"a TP group crosses the node boundary, so all {MODEL.allreduces_per_token} "
            "all-reduces of every token would pay the network's latency instead of NVLink's"
        )
    return problems


def _q12_choices(p: Params) -> list[Choice]:
    options = []
    for text, tp, pp, crosses in LAYOUTS:
        problems = layout_problems(tp, pp, crosses)
        if problems:
            why = "No: " + "; ".join(problems) + "."
        else:
            why = (
                f"Right: TP = {tp} divides every head group and the FFN and stays on each "
                f"node's NVLink, and PP = {pp} gives each stage "
                f"{MODEL.super_blocks // pp} whole super-blocks, passing one activation per "
                "token across the network."
            )
        options.append(Choice(text, why, correct=not problems))
    return [options[i] for i in p["order"]]


# ---------------------------------------------------------------------------


def _choice_reference(choices: Callable[[Params], list[Choice]]) -> Callable[[Params], str]:
    def reference(p: Params) -> str:
        return next("abcd"[i] for i, c in enumerate(choices(p)) if c.correct)

    return reference


def _choice_facts(choices: Callable[[Params], list[Choice]]) -> Callable[[Params], dict[str, str]]:
    def facts(p: Params) -> dict[str, str]:
        opts = choices(p)
        letter = _choice_reference(choices)(p)
        return {
            "options": "\n".join(f"- **{'abcd'[i]}.** {c.text}" for i, c in enumerate(opts)),
            "explained": "\n".join(f"- **{'abcd'[i]}.** {c.why}" for i, c in enumerate(opts)),
            "letter": letter,
        }

    return facts


def _order(rng: np.random.Generator) -> Params:
    return {"order": shuffled(rng, 4)}


PROBLEMS: dict[str, Problem] = {}


def _register(problem: Problem) -> None:
    PROBLEMS[problem.qid] = problem


_register(
    Problem(
        qid="q1",
        title="Weights of a pure-attention model",
        chapter="sizing",
        difficulty=1,
        kind="number",
        unit="GB",
        decimals=1,
        close_rtol=0.02,
        template=(
            "A pure-attention model has {params} parameters stored in bf16 ({dtype} bytes "
            "per weight). How much memory do its weights take, in **GB** (decimal, "
            "10\u2079 bytes)?"
        ),
        solution_template=(
            "Weights = parameters x bytes per weight = {params} x {dtype} B = "
            "**{weights_gb}** (that is {weights_gib} in binary units). On {gpu} cards the "
            "weights alone need at least {gpus_needed} GPU(s), before any KV cache."
        ),
        defaults={"billions": 70},
        sample=lambda rng: {"billions": pick(rng, list(PURE_ATTENTION_SHAPES))},
        facts=_q1_facts,
        reference=lambda p: _q1_model(p).weight_bytes / GB,
        mistakes=_q1_mistakes,
        hint="Multiply the number of parameters by the bytes per weight, then divide by 1e9.",
    )
)

_register(
    Problem(
        qid="q2",
        title="KV cache of one full-length sequence",
        chapter="sizing",
        difficulty=1,
        kind="number",
        unit="GiB",
        decimals=2,
        close_rtol=0.02,
        template=(
            "The {params}-parameter pure-attention model has {layers} layers, all full "
            "attention, each with {kv_heads} KV heads of dimension {head_dim} "
            "({q_heads} query heads), bf16 ({dtype} bytes per element), and a maximum "
            "context of {context} tokens. How large is the KV cache of **one** sequence at "
            "full length, in **GiB** (2\u00b3\u2070 bytes)?"
        ),
        solution_template=(
            "Per token the cache keeps K and V for every layer and KV head: 2 x {layers} x "
            "{kv_heads} x {head_dim} x {dtype} B = {per_token_bytes} B = {per_token}. "
            "Times {context} tokens: **{kv_gib}** ({kv_gb} in decimal units). Query heads "
            "do not count: with grouped-query attention only the {kv_heads} KV heads are "
            "cached."
        ),
        defaults={"billions": 70, "context": 131_072},
        sample=lambda rng: {
            "billions": pick(rng, list(PURE_ATTENTION_SHAPES)),
            "context": pick(rng, CONTEXTS),
        },
        facts=_q2_facts,
        reference=lambda p: _q2_model(p).kv_bytes(p["context"]) / GiB,
        mistakes=_q2_mistakes,
        hint="Bytes per token = 2 (K and V) x layers x KV heads x head dim x 2 bytes; "
        "multiply by the context and divide by 2**30.",
    )
)

_register(
    Problem(
        qid="q3",
        title="Ring bytes per token for another N",
        chapter="payloads",
        difficulty=1,
        kind="number",
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
        facts=_q3_facts,
        reference=lambda p: allreduce_wire_bytes(_q3_payload(p), p["n"]) / MiB,
        mistakes=_q3_mistakes,
        hint="Payload per token = all-reduces per token x hidden vector bytes; "
        "wire bytes = 2(N-1)/N x payload; 1 MiB = 2**20 bytes.",
    )
)

_register(
    Problem(
        qid="q4",
        title="Why decode is latency-bound",
        chapter="latency",
        difficulty=1,
        kind="choice",
        unit="",
        template="Why is decoding one token latency-bound over the fabric?\n\n{options}",
        solution_template="The answer is **{letter}**.\n\n{explained}",
        defaults={"order": [1, 3, 0, 2]},
        sample=_order,
        facts=_choice_facts(_q4_choices),
        reference=_choice_reference(_q4_choices),
        choices=_q4_choices,
        hint="Compare one all-reduce's message with the crossover size alpha x B.",
    )
)

_register(
    Problem(
        qid="q5",
        title="Decode time on another fabric",
        chapter="latency",
        difficulty=2,
        kind="number",
        unit="ms",
        template=(
            "The specimen model runs on **{n}** GPUs ({card}, {hbm} of HBM bandwidth) joined "
            "by a fabric that costs **{latency}** per small all-reduce. Using the lesson's "
            "arithmetic (each GPU streams its share of the weights from HBM, plus one fixed "
            "latency per all-reduce; leave the bytes on the wire out), how long does one "
            "decoded token take, in **ms**?"
        ),
        solution_template=(
            "Weight streaming: {share} per GPU ({weights} / {n}) at {hbm} = {compute}. "
            "Communication: {allreduces} all-reduces x {latency} = {comm}. Total: "
            "**{total}** per token, about {tokens_per_s} tokens/s for one sequence."
        ),
        defaults={"n": 4, "latency_us": 25, "card": "h100"},
        sample=lambda rng: {
            "n": pick(rng, (2, 4)),
            "latency_us": pick(rng, (2, 5, 8, 15, 20, 25, 30, 40)),
            "card": pick(rng, list(ACCELERATORS)),
        },
        facts=_q5_facts,
        reference=lambda p: _q5_step(p, include_bandwidth=False).total_s / MS,
        mistakes=_q5_mistakes,
        hint="Time = (weights / N) / HBM bandwidth + all-reduces per token x latency.",
    )
)

_register(
    Problem(
        qid="q6",
        title="Speed-up from 2 to 4 GPUs",
        chapter="latency",
        difficulty=2,
        kind="number",
        unit="x",
        template=(
            "On a fabric that costs **{latency}** per small all-reduce, with cards of the "
            "kind {card} ({hbm} of HBM bandwidth), how many times faster does the specimen decode a token "
            "on **4** GPUs than on **2**? Use the lesson's arithmetic (weight streaming plus "
            "one latency per all-reduce)."
        ),
        solution_template=(
            "2 GPUs: {compute_2} + {allreduces} x {latency} = {total_2}. 4 GPUs: "
            "{compute_4} + {comm} = {total_4}. Speed-up = {total_2} / {total_4} = "
            "**{speedup}**: doubling the GPUs halved only the weight-streaming term, while "
            "the communication stayed the same."
        ),
        defaults={"latency_us": SLOW_FABRIC.latency / US, "card": "h100"},
        sample=lambda rng: {
            "latency_us": pick(rng, (2, 5, 15, 20, 30, 40)),
            "card": pick(rng, list(ACCELERATORS)),
        },
        facts=_q6_facts,
        reference=lambda p: speedup(*_q6_steps(p)),
        mistakes=_q6_mistakes,
        hint="Compute both step times (compute + all-reduces x latency) and divide "
        "the 2-GPU time by the 4-GPU time.",
    )
)

_register(
    Problem(
        qid="q7",
        title="The crossover message size",
        chapter="prefill",
        difficulty=2,
        kind="number",
        unit="MB",
        close_rtol=0.03,
        template=(
            "A fabric has a fixed cost of **{latency}** per all-reduce and "
            "**{bandwidth}** per rank and direction. For a ring all-reduce over **N = {n}** "
            "ranks, at what payload size does the bandwidth term (wire bytes / B) equal the "
            "latency term? Answer in **MB** (10\u2076 bytes)."
        ),
        solution_template=(
            "Set alpha = 2(N-1)/N x m / B and solve for the payload m: m = alpha x B / "
            "(2(N-1)/N). alpha x B = {latency} x {bandwidth} = {alpha_b}; the factor is "
            "{factor}; so m = **{crossover}** ({crossover_mib}). A decode message "
            "({vector}) is far below it: latency-bound. A {prompt}-token prefill message "
            "({prompt_payload}) is far above: bandwidth-bound."
        ),
        defaults={
            "latency_us": SLOW_FABRIC.latency / US,
            "bandwidth_gbs": PCIE_BANDWIDTH / GB,
            "n": 4,
        },
        sample=lambda rng: {
            "latency_us": pick(rng, (5, 10, 20, 50)),
            "bandwidth_gbs": pick(rng, (50, 64, 100, 200, 450, 900)),
            "n": pick(rng, (2, 4, 8)),
        },
        facts=_q7_facts,
        reference=lambda p: crossover_bytes(_q7_fabric(p), p["n"]) / MB,
        mistakes=_q7_mistakes,
        hint="alpha = 2(N-1)/N x m / B; keep seconds and bytes/s, then convert bytes to MB.",
    )
)

_register(
    Problem(
        qid="q8",
        title="Prefill time on the wire",
        chapter="prefill",
        difficulty=2,
        kind="number",
        unit="ms",
        template=(
            "The specimen prefills a prompt of **{tokens}** tokens with tensor parallelism "
            "on **{n}** GPUs. Each of its {allreduces} all-reduces now carries one hidden "
            "vector per prompt token. The fabric carries **{bandwidth}** per rank and "
            "direction. How long do the bytes take on the wire for the whole prompt (the "
            "bandwidth term only, all all-reduces together), in **ms**?"
        ),
        solution_template=(
            "Payload of one all-reduce: {tokens} x {vector} = {payload}. Each rank sends "
            "2(N-1)/N = {factor} times that, {allreduces} times: {wire_total} "
            "({wire_total_gb}). At {bandwidth}: **{time}**. Compare the latency term, "
            "{latency_total} on a slow fabric, and the arithmetic, {flops}: in prefill the "
            "bytes matter."
        ),
        defaults={"tokens": 2 * PROMPT_TOKENS, "n": 4, "bandwidth_gbs": PCIE_BANDWIDTH / GB},
        sample=lambda rng: {
            "tokens": pick(rng, (1024, 2048, 8192, 16384, 32768)),
            "n": pick(rng, (2, 4)),
            "bandwidth_gbs": pick(rng, (64, 100, 200, 450, 900)),
        },
        facts=_q8_facts,
        reference=lambda p: _q8_step(p).bandwidth_s / MS,
        mistakes=_q8_mistakes,
        hint="Wire bytes = all-reduces x 2(N-1)/N x tokens x hidden vector bytes; "
        "divide by the bandwidth in bytes/s.",
    )
)

_register(
    Problem(
        qid="q9",
        title="Why tensor parallelism stays inside a node",
        chapter="cluster",
        difficulty=2,
        kind="choice",
        unit="",
        template="Why is tensor parallelism kept inside one node?\n\n{options}",
        solution_template="The answer is **{letter}**.\n\n{explained}",
        defaults={"order": [2, 0, 3, 1]},
        sample=_order,
        facts=_choice_facts(_q9_choices),
        reference=_choice_reference(_q9_choices),
        choices=_q9_choices,
        hint="Count how often each form of parallelism reconciles.",
    )
)

_register(
    Problem(
        qid="q10",
        title="Sequences that fit, hybrid variant",
        chapter="sizing",
        difficulty=3,
        kind="count",
        unit="sequences",
        template=(
            "A hybrid model like the specimen (same parameters, {layers} layers, same "
            "Gated DeltaNet layers) has only **{attention_layers}** full-attention layers, "
            "each with **{kv_heads}** KV heads of dimension **{head_dim}**, and the rest are "
            "DeltaNet layers. It runs with tensor parallelism on **{n}** GPUs of {gpu} each. "
            "How many full-length sequences ({context} tokens) fit on each GPU beside its "
            "share of the weights? (Use `lesson_lib`'s memory model, which counts the "
            "DeltaNet state too.)"
        ),
        solution_template=(
            "Weights per GPU: {weights} / {n} = {weights_share}, leaving {free}. KV cache "
            "per token: {per_token}, so {kv_full} per full-length sequence. {replicated} "
            "Each GPU holds {heads_per_rank} of {kv_heads} heads: {kv_share} "
            "({kv_share_gb}) per sequence, plus {state_share} of DeltaNet state, "
            "{per_seq} in all. {free} / {per_seq}, rounded down: **{answer}** sequences."
        ),
        defaults={"attention_layers": 16, "kv_heads": 2, "head_dim": 256, "n": 4},
        sample=lambda rng: {
            "attention_layers": pick(rng, (8, 16, 32)),
            "kv_heads": pick(rng, (1, 2, 4, 8)),
            "head_dim": pick(rng, (128, 256)),
            "n": pick(rng, (2, 4)),
        },
        facts=_q10_facts,
        reference=lambda p: max_sequences(_q10_model(p), GPU, p["n"], MODEL.max_context),
        mistakes=_q10_mistakes,
        hint="Free memory = card - weights/N; per sequence = this GPU's heads' KV cache + "
        "its share of the DeltaNet state; round down.",
    )
)

_register(
    Problem(
        qid="q11",
        title="How slow may the wire be?",
        chapter="latency",
        difficulty=3,
        kind="number",
        unit="us",
        template=(
            "Two GPUs ({card}, {hbm} of HBM bandwidth) on a fabric of **{latency}** per "
            "all-reduce decode the specimen at a certain speed. Four GPUs of the same kind "
            "sit on a different fabric. Up to what latency per all-reduce on that fabric do "
            "the four GPUs still decode a token at least as fast as the two? Use the "
            "lesson's arithmetic; answer in **us** (microseconds)."
        ),
        solution_template=(
            "2 GPUs: {compute_2} + {allreduces} x {latency} = {total_2}. 4 GPUs stream "
            "their weights in {compute_4}, so the all-reduces may take {total_2} - "
            "{compute_4} = {budget} per token. Shared by {allreduces} all-reduces: "
            "**{answer}** each. Above that, the extra GPUs make decode slower."
        ),
        defaults={"latency_us": 10, "card": "h100"},
        sample=lambda rng: {
            "latency_us": pick(rng, (5, 8, 10, 12, 15)),
            "card": pick(rng, list(ACCELERATORS)),
        },
        facts=_q11_facts,
        reference=_q11_answer,
        mistakes=_q11_mistakes,
        hint="Solve compute_4 + all-reduces x alpha = time of the 2-GPU step for alpha.",
    )
)

_register(
    Problem(
        qid="q12",
        title="A layout for 2 nodes of 4 GPUs",
        chapter="cluster",
        difficulty=3,
        kind="choice",
        unit="",
        template=(
            "You serve the specimen on 2 nodes with 4 GPUs each: NVLink inside a node, a "
            "network between them. Which layout do you choose?\n\n{options}\n\n"
            "(Be ready to say why; `check_layout(MODEL, tp, pp)` tells you which degrees "
            "divide the model.)"
        ),
        solution_template="The answer is **{letter}**.\n\n{explained}",
        defaults={"order": [3, 0, 2, 1]},
        sample=_order,
        facts=_choice_facts(_q12_choices),
        reference=_choice_reference(_q12_choices),
        choices=_q12_choices,
        hint="Keep every TP group on one node's NVLink, and check that the degrees divide "
        "the model's heads and super-blocks.",
    )
)


def get_problem(qid: str) -> Problem:
    """The problem with id ``qid``.

    Parameters
    ----------
    qid : str
        ``"q1"`` .. ``"q12"``.

    Returns
    -------
    Problem
        The problem.

    Raises
    ------
    KeyError
        If there is no such problem; the message lists the ids.
    """
    if qid not in PROBLEMS:
        raise KeyError(f"unknown problem {qid!r}; the ids are {', '.join(PROBLEMS)}")
    return PROBLEMS[qid]


def params(qid: str, student: object = None) -> Params:
    """The parameters of problem ``qid`` for one student.

    Parameters
    ----------
    qid : str
        Problem id.
    student : str, optional
        Student ID; None (or an empty string) gives the book's version.

    Returns
    -------
    dict
        A fresh dict (safe to modify).
    """
    problem = get_problem(qid)
    sid = normalize_student(student)
    if sid is None:
        return dict(problem.defaults)
    return dict(problem.sample(rng_for(sid, qid)))


def reference(qid: str, student: object = None) -> Any:
    """The right answer to ``qid`` for one student, in the problem's unit.

    Parameters
    ----------
    qid : str
        Problem id.
    student : str, optional
        Student ID; None gives the book's version.

    Returns
    -------
    float, int or str
        A float in ``Problem.unit``, an int for counts, a letter for
        multiple choice.
    """
    return get_problem(qid).reference(params(qid, student))


def mistakes(qid: str, student: object = None) -> list[Mistake]:
    """The known wrong answers to ``qid`` for one student, minus any equal to the right one.

    Parameters
    ----------
    qid : str
        Problem id.
    student : str, optional
        Student ID.

    Returns
    -------
    list of Mistake
        Problem-specific mistakes (the checker adds unit mix-ups itself).
    """
    problem = get_problem(qid)
    p = params(qid, student)
    if problem.kind == "choice":
        return []
    return _keep_distinct(float(problem.reference(p)), problem.mistakes(p))


def statement(qid: str, student: object = None) -> str:
    """The problem's statement in Markdown, with this student's numbers.

    Parameters
    ----------
    qid : str
        Problem id.
    student : str, optional
        Student ID; None gives the book's version.

    Returns
    -------
    str
        Markdown: the question, then how to write the answer.
    """
    problem = get_problem(qid)
    p = params(qid, student)
    text = problem.template.format(**problem.facts(p))
    return f"{text}\n\n*Answer with {problem.answer_format()}.*"


def solution_text(qid: str, student: object = None) -> str:
    """The worked solution in Markdown, with this student's numbers.

    Parameters
    ----------
    qid : str
        Problem id.
    student : str, optional
        Student ID; None gives the book's version.

    Returns
    -------
    str
        Markdown.
    """
    problem = get_problem(qid)
    return problem.solution_template.format(**problem.facts(params(qid, student)))


class MarkdownText(str):
    """A string that Jupyter and MyST-NB display as Markdown."""

    def _repr_markdown_(self) -> str:
        return str(self)


def show(qid: str, student: object = None) -> MarkdownText:
    """Display problem ``qid`` in a notebook (the statement, as Markdown).

    Parameters
    ----------
    qid : str
        Problem id.
    student : str, optional
        Student ID; None gives the book's version.

    Returns
    -------
    MarkdownText
        Rendered as Markdown when it is a cell's last expression.
    """
    problem = get_problem(qid)
    header = (
        f"**{problem.qid}** \u00b7 difficulty {problem.stars} \u00b7 practises *{problem.chapter}*"
    )
    return MarkdownText(f"{header}\n\n{statement(qid, student)}")


def solution(qid: str, student: object = None) -> MarkdownText:
    """Display the worked solution of ``qid`` (used by the book's solution dropdowns).

    Parameters
    ----------
    qid : str
        Problem id.
    student : str, optional
        Student ID; None gives the book's version.

    Returns
    -------
    MarkdownText
        Rendered as Markdown when it is a cell's last expression.
    """
    return MarkdownText(solution_text(qid, student))


def units_of(name: str) -> tuple[str, float] | None:
    """The dimension and size of a unit a problem may ask for.

    Parameters
    ----------
    name : str
        ``"GiB"``, ``"ms"``, ``"x"`` ...

    Returns
    -------
    tuple of (str, float) or None
        ``("bytes", 2**30)`` for GiB, ``("time", 1e-3)`` for ms,
        ``("ratio", 1.0)`` for x; None for other names.
    """
    if name in BYTE_UNITS:
        return "bytes", BYTE_UNITS[name]
    if name in TIME_UNITS:
        return "time", TIME_UNITS[name]
    if name == "x":
        return "ratio", 1.0
    return None


def overview_table() -> MarkdownText:
    """The set at a glance: id, title, chapter practised, difficulty and answer unit.

    Returns
    -------
    MarkdownText
        A Markdown table (Jupyter) that also renders as an HTML table (the book).
    """
    header = ("Problem", "Title", "Practises", "Difficulty", "Answer")
    rows = [
        (p.qid, p.title, p.chapter, p.stars, "a letter" if p.kind == "choice" else p.unit)
        for p in PROBLEMS.values()
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return _Table("\n".join(lines), header, rows)


class _Table(MarkdownText):
    """Markdown text with an HTML twin, for renderers without Markdown tables."""

    def __new__(cls, text: str, header: tuple[str, ...], rows: list[tuple[str, ...]]):
        obj = super().__new__(cls, text)
        obj._html = (
            "<table><thead><tr>"
            + "".join(f"<th>{html.escape(h)}</th>" for h in header)
            + "</tr></thead><tbody>"
            + "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                for row in rows
            )
            + "</tbody></table>"
        )
        return obj

    def _repr_html_(self) -> str:
        return self._html
