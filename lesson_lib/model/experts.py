"""MoE decode of the experts chapter's example: tensor against expert parallelism on one node.

DeepSeek-V3 (:data:`EXAMPLE`) on one node of :data:`EP` H200-class cards (the lesson's H100-class
card is too small for them under EP), on the fast fabric; :func:`comparison` prices both layouts.
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

#: Context of every sequence when counting what fits, tokens.
CONTEXT: int = 32_768

#: Bytes per element of DeepEP's low-latency dispatch (FP8); the combine stays bf16.
FP8: int = 1


@dataclass(frozen=True)
class Layout:
    """One layout of the example, priced alone and at its full batch.

    Attributes
    ----------
    parallelism : str
        ``"tp"`` or ``"ep"``.
    one : MoEStep
        One sequence.
    sequences : int
        Sequences of :data:`CONTEXT` tokens that fit on the node.
    full : MoEStep
        All of them decoded together.
    """

    parallelism: str
    one: MoEStep
    sequences: int
    full: MoEStep


def comparison(
    model: ModelSpec = EXAMPLE,
    accel: Accelerator = CARD,
    fabric: Fabric = FAST,
    n: int = EP,
    context_tokens: int = CONTEXT,
) -> dict[str, Layout]:
    """TP and EP of one MoE model on ``n`` GPUs, one sequence and a full node.

    Parameters
    ----------
    model, accel, fabric : ModelSpec, Accelerator, Fabric, default EXAMPLE, CARD, FAST
        An MoE model, one card and the wire between the cards.
    n : int, default EP
        GPUs, from 1 to ``model.num_experts``.
    context_tokens : int, default CONTEXT
        Tokens per sequence when counting what fits, from 1 to ``model.max_context``.

    Returns
    -------
    dict of str to Layout
        ``"tp"`` and ``"ep"``; EP dispatches in FP8 (DeepEP's low-latency kernels), TP in bf16.
    """
    require_instance("model", model, ModelSpec)
    n = require_int("n", n)
    out = {}
    for parallelism in ("tp", "ep"):
        dispatch = {"dispatch_bytes": FP8} if parallelism == "ep" else {}
        fit = sequences_that_fit(model, accel, n, parallelism, context_tokens)
        one = moe_decode_step(model, accel, fabric, n, parallelism=parallelism, **dispatch)
        full = moe_decode_step(
            model, accel, fabric, n, parallelism=parallelism, batch=max(fit, 1), **dispatch
        )
        out[parallelism] = Layout(parallelism, one, fit, full)
    return out
