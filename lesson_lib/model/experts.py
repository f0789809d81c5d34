"""MoE decode of the experts chapter's example: tensor against expert parallelism on one node.

DeepSeek-V3 (:data:`EXAMPLE`) on one node of :data:`EP` H200-class cards (the
lesson's H100-class card holds too little for its weights under EP), on the fast
fabric; :func:`comparison` prices the layouts of :data:`LAYOUTS`, every sequence
holding :data:`CONTEXT` tokens of cache that each step reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.moe import MoEStep, moe_decode_step, sequences_that_fit
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import FAST, H200
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec

#: The chapter's MoE model.
EXAMPLE: ModelSpec = PRESETS["DeepSeek-V3"]

#: GPUs of one node, the EP (and TP) degree of the worked example.
EP: int = 8

#: The example's card, H200-class, sold as 141 GB (DeepSeek-V3's FP8 weights need it under EP).
CARD: Accelerator = H200

#: Tokens of context every sequence holds, which sets what fits and what each decode step reads.
CONTEXT: int = 32_768

#: Bytes per element of DeepEP's low-latency dispatch (FP8); the combine stays bf16.
FP8: int = 1

#: The layouts compared by key, each a parallelism and a DCP degree. TP 8 with DCP 8 is
#: the case vLLM's context parallel guide gives for an MLA model on one node.
LAYOUTS: dict[str, tuple[str, int]] = {"tp": ("tp", 1), "ep": ("ep", 1), "dcp": ("tp", EP)}


@dataclass(frozen=True)
class Layout:
    """One layout of the example, priced alone and at its full batch."""

    #: ``"tp"`` or ``"ep"``.
    parallelism: str
    #: Decode context parallelism inside TP (1 without).
    dcp: int
    #: One sequence.
    one: MoEStep
    #: Sequences of :data:`CONTEXT` tokens that fit on the node.
    sequences: int
    #: All of them decoded together.
    full: MoEStep


def comparison(
    model: ModelSpec = EXAMPLE,
    accel: Accelerator = CARD,
    fabric: Fabric = FAST,
    n: int = EP,
    context_tokens: int = CONTEXT,
) -> dict[str, Layout]:
    """TP, EP and TP with DCP of one MoE model on ``n`` GPUs, one sequence and a full node.

    Parameters
    ----------
    model, accel, fabric : ModelSpec, Accelerator, Fabric, default EXAMPLE, CARD, FAST
        An MoE model, one card and the wire between the cards.
    n : int, default EP
        GPUs, from 1 to ``model.num_experts``; the DCP degree too, so at most
        ``max_dcp(model, n)`` (any ``n`` for MLA's one latent).
    context_tokens : int, default CONTEXT
        Tokens per sequence, from 1 to ``model.max_context``: what fits, and
        the cache every step reads.

    Returns
    -------
    dict of str to Layout
        By the keys of :data:`LAYOUTS`; EP dispatches in FP8 (DeepEP's
        low-latency kernels), TP all-reduces in bf16.
    """
    require_instance("model", model, ModelSpec)
    n = require_int("n", n)
    out = {}
    for key, (parallelism, dcp) in LAYOUTS.items():
        degree = n if dcp > 1 else 1
        options = {"parallelism": parallelism, "context": context_tokens, "dcp": degree}
        if parallelism == "ep":
            options["dispatch_bytes"] = FP8
        fit = sequences_that_fit(model, accel, n, parallelism, context_tokens, dcp=degree)
        one = moe_decode_step(model, accel, fabric, n, **options)
        full = moe_decode_step(model, accel, fabric, n, batch=max(fit, 1), **options)
        out[key] = Layout(parallelism, degree, one, fit, full)
    return out
