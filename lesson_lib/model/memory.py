"""Does the model fit? Per-GPU memory under tensor parallelism, bytes.

Tensor parallelism splits every weight matrix, and the KV heads with it, over ``n`` ranks; with more
ranks than KV heads each holds a whole (replicated) head, so the KV cache stops shrinking.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.specs import Accelerator, ModelSpec, _require_hardware

#: Most concurrent sequences any function here accepts (a bound on input).
MAX_SEQUENCES: int = 1_000_000


@dataclass(frozen=True)
class MemoryBudget:
    """Memory of one GPU, in bytes."""

    #: The card's memory.
    capacity_bytes: float
    #: This rank's share of the weights.
    weights_bytes: float
    #: This rank's share of the KV cache of all sequences.
    kv_bytes: float
    #: This rank's share of the fixed linear-attention state of all sequences.
    state_bytes: float
    #: What is left; negative when the request does not fit.
    free_bytes: float

    @property
    def used_bytes(self) -> float:
        """Weights + KV cache + state, bytes."""
        return self.weights_bytes + self.kv_bytes + self.state_bytes

    @property
    def fits(self) -> bool:
        """True when nothing is over capacity."""
        return self.free_bytes >= 0

    @property
    def shortfall_bytes(self) -> float:
        """Bytes missing when it does not fit, else 0."""
        return max(-self.free_bytes, 0.0)


def _share(model: ModelSpec, n: int, field: str) -> float:
    """``ceil(heads / n) / heads`` of the heads ``model.<field>`` counts (0 without heads)."""
    require_instance("model", model, ModelSpec)
    n = require_int("n", n, maximum=MAX_RANKS)
    heads = getattr(model, field)
    return math.ceil(heads / n) / heads if heads else 0.0


def kv_share(model: ModelSpec, n: int) -> float:
    """Fraction of the KV cache the busiest of ``n`` tensor-parallel ranks holds.

    Parameters
    ----------
    model : ModelSpec
    n : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        ``ceil(kv_heads / n) / kv_heads``: ``1/n`` while ``n`` divides the KV
        heads, never below one head's worth (heads are replicated past that).
    """
    return _share(model, n, "num_kv_heads")


def state_share(model: ModelSpec, n: int) -> float:
    """Fraction of the linear-attention state the busiest of ``n`` ranks holds.

    Parameters
    ----------
    model, n
        As for :func:`kv_share`.

    Returns
    -------
    float
        ``ceil(value_heads / n) / value_heads``; 0 for a pure-attention model.
    """
    return _share(model, n, "linear_num_value_heads")


def memory_budget(
    model: ModelSpec,
    accel: Accelerator,
    n: int,
    context_tokens: int,
    sequences: int,
    *,
    utilization: float = 1.0,
) -> MemoryBudget:
    """Per-GPU memory for ``sequences`` sequences of ``context_tokens`` tokens.

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator
    n : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).
    context_tokens : int
        Tokens per sequence, from 0 to ``model.max_context``.
    sequences : int
        Concurrent sequences, from 0 to :data:`MAX_SEQUENCES`.
    utilization : float, default 1.0
        Fraction of ``accel.memory_bytes`` the runtime may use, in (0, 1]: vLLM's
        ``gpu_memory_utilization`` (:data:`lesson_lib.model.specimen.VLLM_GPU_MEMORY_UTILIZATION`).

    Returns
    -------
    MemoryBudget
        Bytes per GPU; ``free_bytes`` is negative when it does not fit.
    """
    _require_hardware(model, accel)
    n = require_int("n", n, maximum=MAX_RANKS)
    sequences = require_int("sequences", sequences, minimum=0, maximum=MAX_SEQUENCES)
    utilization = require_number("utilization", utilization, strict=True, maximum=1.0)
    capacity = accel.memory_bytes * utilization
    weights = model.weight_bytes / n
    kv = model.kv_bytes(context_tokens) * kv_share(model, n) * sequences
    state = model.state_bytes * state_share(model, n) * sequences
    free = capacity - weights - kv - state
    return MemoryBudget(capacity, weights, kv, state, free)


def max_sequences(
    model: ModelSpec, accel: Accelerator, n: int, context_tokens: int, *, utilization: float = 1.0
) -> int:
    """How many sequences of ``context_tokens`` tokens fit beside the weights.

    Parameters
    ----------
    model, accel, n, utilization
        As for :func:`memory_budget`.
    context_tokens : int
        Tokens per sequence, from 1 to ``model.max_context``.

    Returns
    -------
    int
        Whole sequences (0 if the weights alone do not fit).
    """
    require_instance("model", model, ModelSpec)
    require_int("context_tokens", context_tokens, maximum=model.max_context)
    empty = memory_budget(model, accel, n, context_tokens, 0, utilization=utilization)
    one = memory_budget(model, accel, n, context_tokens, 1)  # used bytes ignore utilization
    per_sequence = one.used_bytes - empty.used_bytes
    return max(0, int(empty.free_bytes // per_sequence))
