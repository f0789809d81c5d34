"""What fits on each GPU at each tensor-parallel degree, and the model's pure-attention twin.

The sizing chapter's questions to :mod:`lesson_lib.model.memory` (figure, table, explorer).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.memory import MemoryBudget, max_sequences, memory_budget
from lesson_lib.model.specimen import GPU, MODEL
from lesson_lib.model.specs import Accelerator, ModelSpec, _require_hardware

#: The tensor-parallel degrees the chapter compares.
DEGREES: tuple[int, ...] = (1, 2, 4)


@dataclass(frozen=True)
class DegreeFit:
    """How one tensor-parallel degree fills each GPU."""

    n: int
    #: Tokens per sequence.
    context_tokens: int
    #: The most sequences of ``context_tokens`` tokens that fit.
    sequences: int
    #: Per-GPU bytes with ``sequences`` sequences resident.
    budget: MemoryBudget


def pure_attention_twin(model: ModelSpec) -> ModelSpec:
    """The same model with every layer full attention (a KV cache in each).

    Parameters
    ----------
    model : ModelSpec
        A hybrid model.

    Returns
    -------
    ModelSpec
        Its parameters, width, heads and context, no linear-attention state.
    """
    require_instance("model", model, ModelSpec)
    return dataclasses.replace(
        model,
        name=f"{model.name}, all layers attention",
        num_attention_layers=model.num_layers,
        linear_num_key_heads=0,
        linear_num_value_heads=0,
        linear_key_head_dim=0,
        linear_value_head_dim=0,
        linear_conv_kernel=0,
    )


def fits_by_degree(
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
    degrees: Sequence[int] = DEGREES,
    context_tokens: int | None = None,
) -> list[DegreeFit]:
    """Fill each GPU with as many sequences as fit, for each TP degree.

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator, default the specimen and its card
    degrees : sequence of int, default (1, 2, 4)
        Tensor-parallel degrees (each >= 1).
    context_tokens : int, optional
        Tokens per sequence, 1 to ``model.max_context`` (the default).

    Returns
    -------
    list of DegreeFit
        One per degree, in the order given.
    """
    _require_hardware(model, accel)
    tokens = model.max_context if context_tokens is None else context_tokens
    tokens = require_int("context_tokens", tokens, minimum=1, maximum=model.max_context)
    out = []
    for n in degrees:
        n = require_int("n", n)
        count = max_sequences(model, accel, n, tokens)
        out.append(DegreeFit(n, tokens, count, memory_budget(model, accel, n, tokens, count)))
    return out
