"""A real ring all-reduce, step by step, over NumPy arrays.

The book animates this schedule and the tests check it against ``numpy.sum``: the algorithm, not a
formula, yields the ``2 (n - 1) / n`` factor of :mod:`lesson_lib.model.collectives`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lesson_lib.model._validate import require_int

#: Most ranks the simulator accepts, because it records who holds what after every
#: one of its 2(N-1) steps, which grows as N cubed (500 ranks took minutes and gigabytes).
MAX_SIMULATED_RANKS: int = 64
#: Most elements per rank's array the simulator accepts.
MAX_SIMULATED_ELEMENTS: int = 1 << 24


@dataclass(frozen=True)
class Transfer:
    """One message of the ring schedule."""

    #: ``"reduce-scatter"`` (the receiver adds) or ``"all-gather"`` (it overwrites).
    phase: str
    #: Global step, 1-based, from 1 to ``2 (n - 1)``.
    step: int
    src: int
    #: Receiving rank, ``(src + 1) % n``.
    dst: int
    #: Index of the chunk sent.
    chunk: int
    nbytes: int


@dataclass(frozen=True)
class RingResult:
    """Outcome of :func:`simulate_ring_allreduce`."""

    #: Every rank's final array; each equals the element-wise sum of inputs.
    outputs: list[np.ndarray]
    #: Bytes each rank sent over the whole all-reduce.
    bytes_sent: list[int]
    #: The schedule, ``steps[k]`` holding the ``n`` simultaneous transfers of step ``k + 1``.
    steps: list[list[Transfer]]
    #: ``holdings[k][rank][chunk]`` is the frozenset of ranks whose inputs that rank's copy of that
    #: chunk holds after ``k`` steps (``k = 0`` is the start); complete when it holds every rank.
    holdings: list[tuple[tuple[frozenset[int], ...], ...]]
    #: Bytes of each chunk (they differ by at most one element).
    chunk_bytes: list[int]

    @property
    def n(self) -> int:
        """Number of ranks."""
        return len(self.outputs)

    def bytes_sent_after(self, step: int) -> list[int]:
        """Bytes each rank has sent after the first ``step`` steps (0 to ``len(steps)``)."""
        step = require_int("step", step, minimum=0, maximum=len(self.steps))
        sent = [0] * self.n
        for transfers in self.steps[:step]:
            for t in transfers:
                sent[t.src] += t.nbytes
        return sent


def simulate_ring_allreduce(arrays: Sequence[np.ndarray] | np.ndarray) -> RingResult:
    """Sum ``n`` arrays with a ring all-reduce, recording every transfer.

    The arrays are cut into ``n`` chunks (``numpy.array_split``, so any length works). In ``n - 1``
    reduce-scatter steps each rank passes one partial chunk to its right-hand neighbour, which adds
    its own; afterwards rank ``r`` holds the complete sum of chunk ``(r + 1) % n``. In ``n - 1``
    all-gather steps the complete chunks travel once more round the ring.

    Parameters
    ----------
    arrays : sequence of array_like, or 2-D array
        One 1-D array per rank (1 to :data:`MAX_SIMULATED_RANKS`), all one length, at most
        :data:`MAX_SIMULATED_ELEMENTS`; mixed dtypes sum in a common one (``numpy.result_type``).

    Returns
    -------
    RingResult
        Outputs, bytes sent per rank, the schedule and who holds what: two ranks holding
        ``[0, 1, 2, 3]`` and ``[1, 1, 1, 1]`` end with ``[1, 2, 3, 4]``, each sent 32 bytes.
    """
    if len(arrays) > MAX_SIMULATED_RANKS:
        raise ValueError(
            f"arrays must hold at most {MAX_SIMULATED_RANKS} arrays (one per rank; the "
            f"simulation records every step), got {len(arrays)}"
        )
    inputs = [np.asarray(a) for a in arrays]
    if not inputs:
        raise ValueError("arrays must hold at least one array (one per rank), got none")
    shape = inputs[0].shape
    if len(shape) != 1 or any(a.shape != shape for a in inputs):
        shapes = ", ".join(str(a.shape) for a in inputs)
        raise ValueError(f"arrays must be 1-D and all the same length, got shapes {shapes}")
    if inputs[0].size > MAX_SIMULATED_ELEMENTS:
        raise ValueError(
            f"arrays must have at most {MAX_SIMULATED_ELEMENTS:,} elements each, "
            f"got {inputs[0].size:,}"
        )
    dtype = np.result_type(*inputs)
    if not np.issubdtype(dtype, np.number):  # strings would be concatenated, objects anything
        raise TypeError(f"arrays must hold numbers, got dtype {dtype}")
    n = len(inputs)

    # chunks[rank][c]: that rank's current copy of chunk c, in the common dtype. Updates put new
    # arrays in the list, so the callers' arrays (which chunks may view) are never written.
    chunks = [np.array_split(np.asarray(a, dtype=dtype), n) for a in inputs]
    chunk_bytes = [int(c.nbytes) for c in chunks[0]]
    owners = [[frozenset([r]) for _ in range(n)] for r in range(n)]
    holdings = [tuple(tuple(row) for row in owners)]
    steps: list[list[Transfer]] = []
    sent = [0] * n

    for phase, offset in (("reduce-scatter", 0), ("all-gather", 1)):
        for s in range(n - 1):
            sends = [(src, (src + offset - s) % n) for src in range(n)]  # (rank, its chunk)
            transfers = [
                Transfer(phase, len(steps) + 1, src, (src + 1) % n, c, chunk_bytes[c])
                for src, c in sends
            ]
            # All sends of a step happen at once: read every message first.
            messages = [(t, chunks[t.src][t.chunk].copy()) for t in transfers]
            for t, data in messages:
                if phase == "reduce-scatter":
                    chunks[t.dst][t.chunk] = chunks[t.dst][t.chunk] + data
                    owners[t.dst][t.chunk] = owners[t.dst][t.chunk] | owners[t.src][t.chunk]
                else:
                    chunks[t.dst][t.chunk] = data
                    owners[t.dst][t.chunk] = owners[t.src][t.chunk]
                sent[t.src] += t.nbytes
            steps.append(transfers)
            holdings.append(tuple(tuple(row) for row in owners))

    outputs = [np.concatenate(row) for row in chunks]  # n >= 1 chunks per rank, some maybe empty
    return RingResult(outputs, sent, steps, holdings, chunk_bytes)
