"""Tensor parallelism in miniature: where a layer's partial sums come from.

A TP block splits its input projection by columns (whole heads or FFN channels per rank) and its
output projection by rows, so each rank holds a full-width *partial sum* that an all-reduce adds up;
built here with NumPy for the ring all-reduce of :mod:`lesson_lib.model.ring`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int
from lesson_lib.model.collectives import allreduce_wire_bytes
from lesson_lib.model.ring import MAX_SIMULATED_RANKS, RingResult, simulate_ring_allreduce
from lesson_lib.model.specs import ModelSpec

#: NumPy dtype for each element size (float16 stands in for bfloat16: the same two bytes).
_DTYPES: dict[int, type[np.floating]] = {2: np.float16, 4: np.float32, 8: np.float64}


def column_row_partials(
    x: np.ndarray,
    w_in: np.ndarray,
    w_out: np.ndarray,
    n: int,
    activation: Callable[[np.ndarray], np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Each rank's partial output of ``activation(x @ w_in) @ w_out`` split over ``n`` ranks.

    ``w_in`` is split by columns, ``w_out`` by the matching rows (``numpy.array_split``); an
    element-wise activation needs only its own columns, so ranks compute their partials alone.

    Parameters
    ----------
    x, w_in, w_out : array_like
        Input ``(d,)`` for one token or ``(tokens, d)``; projections ``(d, k)`` and ``(k, d_out)``,
        ``k`` split over ranks (attention/DeltaNet heads, FFN width).
    n : int
        Number of ranks, from 1 to ``k``.
    activation : callable, optional
        Element-wise function between the two projections (default identity).

    Returns
    -------
    list of numpy.ndarray
        ``n`` arrays summing to ``x @ w_in @ w_out``; shapes that do not chain are a ValueError.
    """
    x, w_in, w_out = np.asarray(x), np.asarray(w_in), np.asarray(w_out)
    if x.ndim not in (1, 2) or w_in.ndim != 2 or w_out.ndim != 2:
        raise ValueError(
            "x must be 1-D or 2-D and w_in, w_out 2-D, got shapes "
            f"{x.shape}, {w_in.shape}, {w_out.shape}"
        )
    if x.shape[-1] != w_in.shape[0] or w_in.shape[1] != w_out.shape[0]:
        raise ValueError(
            "shapes must chain as x (..., d) @ w_in (d, k) @ w_out (k, d_out), got "
            f"{x.shape}, {w_in.shape}, {w_out.shape}"
        )
    n = require_int("n", n, minimum=1, maximum=w_in.shape[1])
    act = activation if activation is not None else (lambda h: h)
    cols = np.array_split(np.arange(w_in.shape[1]), n)
    return [act(x @ w_in[:, c]) @ w_out[c, :] for c in cols]


def hidden_vector_partials(model: ModelSpec, n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` random partial hidden vectors, one per rank, at the model's element size.

    Stand-ins for each rank's data after a row-parallel projection, so a ring all-reduce over them
    moves the model's exact bytes (two-byte elements as ``numpy.float16``: NumPy has no bfloat16).

    Parameters
    ----------
    model : ModelSpec
        Supplies ``hidden_size`` and ``dtype_bytes`` (2, 4 or 8).
    n : int
        Number of ranks, from 1 to :data:`~lesson_lib.model.ring.MAX_SIMULATED_RANKS`.
    seed : int, default 0
        Seed of the random values, from 0 to 2**32 - 1.

    Returns
    -------
    list of numpy.ndarray
        ``n`` 1-D arrays of ``model.hidden_size`` elements.
    """
    require_instance("model", model, ModelSpec)
    n = require_int("n", n, minimum=1, maximum=MAX_SIMULATED_RANKS)
    seed = require_int("seed", seed, minimum=0, maximum=2**32 - 1)
    if model.dtype_bytes not in _DTYPES:
        raise ValueError(
            f"model.dtype_bytes must be one of {sorted(_DTYPES)}, got {model.dtype_bytes}"
        )
    rng = np.random.default_rng(seed)
    return list(rng.standard_normal((n, model.hidden_size)).astype(_DTYPES[model.dtype_bytes]))


def simulate_hidden_allreduce(model: ModelSpec, n: int, seed: int = 0) -> RingResult:
    """Ring all-reduce of one token's hidden vector over ``n`` ranks.

    Parameters
    ----------
    model, n, seed
        As for :func:`hidden_vector_partials`.

    Returns
    -------
    RingResult
        The simulated schedule; ``bytes_sent`` is in bytes per rank.
    """
    return simulate_ring_allreduce(hidden_vector_partials(model, n, seed))


def edge_collectives(model: ModelSpec, n: int) -> list[tuple[str, float, float]]:
    """The two collectives per decoded token outside the layers, with their bytes.

    A vocab-parallel embedding gives each rank a slice of rows: each looks up the tokens it holds,
    zeroes the rest, and an all-reduce sums the vectors (vLLM's ``VocabParallelEmbedding``). A
    vocabulary-parallel LM head leaves each rank a slice of the logits, gathered before sampling (an
    all-gather in current vLLM's ``LogitsProcessor``; older ones gathered to one rank).

    Parameters
    ----------
    model, n : ModelSpec, int
        A model with ``vocab_size`` (else a ValueError), and the TP degree, from 1 to 4096.

    Returns
    -------
    list of (str, float, float)
        ``(what, payload bytes per token, bytes each rank sends per token)``: the embedding
        all-reduce (one hidden vector, ring factor) and the logits all-gather (``vocab_size`` values
        of ``dtype_bytes``; each rank sends ``(n-1)/n`` of them in a ring all-gather).
    """
    require_instance("model", model, ModelSpec)
    if model.vocab_size is None:
        raise ValueError(f"model {model.name!r} has no vocab_size: give ModelSpec(vocab_size=...)")
    n = require_int("n", n, maximum=MAX_RANKS)
    hidden = model.hidden_vector_bytes
    logits = float(model.vocab_size * model.dtype_bytes)
    return [
        ("embedding all-reduce", hidden, allreduce_wire_bytes(hidden, n)),
        ("logits all-gather", logits, logits * (n - 1) / n),
    ]
