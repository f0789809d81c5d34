"""The sizing chapter's quantities: what fits on each GPU at each TP degree.

:mod:`lesson_lib.model.memory` does the arithmetic; this module asks it the
chapter's questions (how many full-length sequences fit at TP = 1, 2, 4?
what would a pure-attention model of the same shape need?) and formats the
answers the chapter glues, so the figure, the table, the explorer and the
prose all read the same numbers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, replace

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import glue_numbers
from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.memory import MemoryBudget, kv_share, max_sequences, memory_budget
from lesson_lib.model.specimen import GPU, MODEL, NCCL_BUFFER_BYTES
from lesson_lib.model.specs import Accelerator, ModelSpec
from lesson_lib.model.units import format_bytes, format_count, format_ratio

#: The tensor-parallel degrees the chapter compares.
DEGREES: tuple[int, ...] = (1, 2, 4)


@dataclass(frozen=True)
class DegreeFit:
    """How one tensor-parallel degree fills each GPU.

    Attributes
    ----------
    n : int
        Tensor-parallel degree.
    context_tokens : int
        Tokens per sequence.
    sequences : int
        The most sequences of ``context_tokens`` tokens that fit.
    budget : MemoryBudget
        Per-GPU bytes with ``sequences`` sequences resident.
    """

    n: int
    context_tokens: int
    sequences: int
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
        Same parameters, width, heads and context, but
        ``num_attention_layers == num_layers`` and no linear-attention state.
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
    model : ModelSpec, default the specimen
        The model.
    accel : Accelerator, default the specimen's card (sold as 80 GB)
        One card.
    degrees : sequence of int, default (1, 2, 4)
        Tensor-parallel degrees (each >= 1).
    context_tokens : int, optional
        Tokens per sequence, 1 to ``model.max_context``; default the full
        context.

    Returns
    -------
    list of DegreeFit
        One per degree, in the order given.
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    tokens = model.max_context if context_tokens is None else context_tokens
    tokens = require_int("context_tokens", tokens, minimum=1, maximum=model.max_context)
    out = []
    for n in degrees:
        n = require_int("n", n)
        count = max_sequences(model, accel, n, tokens)
        out.append(DegreeFit(n, tokens, count, memory_budget(model, accel, n, tokens, count)))
    return out


def sizing_numbers(model: ModelSpec = MODEL, accel: Accelerator = GPU) -> dict[str, str]:
    """Formatted numbers the sizing chapter glues beside :func:`~lesson_lib.chapters.overview.numbers`.

    Parameters
    ----------
    model : ModelSpec, default the specimen
        The model.
    accel : Accelerator, default the specimen's card (sold as 80 GB)
        One card.

    Returns
    -------
    dict of str to str
        Keys start with ``sizing_``: the architecture counts behind the
        KV-cache product, the pure-attention factor, the fixed state as a
        percentage of one full-length KV cache, the room one card has beside
        the weights (GB), and per degree ``n`` in :data:`DEGREES` and 8 the
        per-GPU weights (GB), one full-length sequence's KV cache per GPU
        (GiB), the most full-length sequences that fit and what is left free
        with them resident (GB).
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    full = model.max_context
    twin = pure_attention_twin(model)
    out = {
        "sizing_layers": str(model.num_layers),
        "sizing_attention_layers": str(model.num_attention_layers),
        "sizing_linear_layers": str(model.num_linear_layers),
        "sizing_kv_heads": str(model.num_kv_heads),
        "sizing_head_dim": str(model.head_dim),
        "sizing_dtype_bytes": f"{model.dtype_bytes} B",
        "sizing_pure_factor": format_ratio(twin.kv_bytes_per_token / model.kv_bytes_per_token),
        "sizing_state_percent": format_count(
            100 * model.state_bytes / model.kv_bytes(full), decimals=1
        )
        + "%",
        "sizing_headroom_gb": format_bytes(accel.memory_bytes - model.weight_bytes, "GB"),
        "sizing_headroom_gib": format_bytes(accel.memory_bytes - model.weight_bytes, "GiB"),
    }
    for fit in fits_by_degree(model, accel, (*DEGREES, 8), full):
        n = fit.n
        out[f"sizing_weights_{n}"] = format_bytes(fit.budget.weights_bytes, "GB")
        out[f"sizing_kv_full_{n}"] = format_bytes(model.kv_bytes(full) * kv_share(model, n), "GiB")
        out[f"sizing_free_{n}"] = format_bytes(fit.budget.free_bytes, "GB")
        out[f"sizing_sequences_{n}"] = str(fit.sequences)
    out["sizing_tp8_extra"] = str(int(out["sizing_sequences_8"]) - int(out["sizing_sequences_4"]))
    # NCCL's buffers (a stated, sourced assumption) taken off the card at TP 4
    nccl = NCCL_BUFFER_BYTES[4]
    card_less_nccl = replace(accel, memory_bytes=accel.memory_bytes - nccl)
    out["sizing_nccl_buffer_4"] = format_bytes(nccl, "MiB", decimals=0)
    out["sizing_sequences_4_nccl"] = str(max_sequences(model, card_less_nccl, 4, full))
    return out


def numbers() -> dict[str, str]:
    """Every value the sizing page glues: the worked example's numbers and the chapter's own.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {**overview.numbers(), **sizing_numbers()}


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/sizing.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
