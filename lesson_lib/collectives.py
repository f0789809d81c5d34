"""The cost of one ring all-reduce: bytes on the wire and time (alpha-beta).

A ring all-reduce is a reduce-scatter followed by an all-gather. Each of the
``n`` ranks sends ``(n - 1) / n`` of the payload in each phase, so
``2 (n - 1) / n`` of it in all: the factor nccl-tests uses to turn algorithm
bandwidth into "bus bandwidth" (nccl-tests, doc/PERFORMANCE.md).
"""

from __future__ import annotations

from lesson_lib._validate import require_int, require_number
from lesson_lib.specs import Fabric


def ring_allreduce_factor(n: int) -> float:
    """Fraction of the payload each rank sends in a ring all-reduce: 2(n-1)/n.

    Parameters
    ----------
    n : int
        Number of ranks (>= 1).

    Returns
    -------
    float
        0 for one rank, 1 for two, 1.5 for four; below 2 for any ``n``.

    Examples
    --------
    >>> ring_allreduce_factor(4)
    1.5
    """
    n = require_int("n", n)
    return 2.0 * (n - 1) / n


def allreduce_wire_bytes(payload_bytes: float, n: int) -> float:
    """Bytes each rank sends to all-reduce ``payload_bytes`` over a ring of ``n``.

    Parameters
    ----------
    payload_bytes : float
        Size of the vector being summed, bytes (>= 0).
    n : int
        Number of ranks (>= 1).

    Returns
    -------
    float
        ``ring_allreduce_factor(n) * payload_bytes``, bytes per rank.
    """
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    return ring_allreduce_factor(n) * payload_bytes


def allreduce_latency(n: int, fabric: Fabric) -> float:
    """Latency term of one all-reduce: ``latency + 2(n-1) * hop_latency`` (0 for n = 1).

    Parameters
    ----------
    n : int
        Number of ranks (>= 1).
    fabric : Fabric
        The interconnect.

    Returns
    -------
    float
        Seconds.
    """
    n = require_int("n", n)
    if n == 1:
        return 0.0
    return fabric.latency + 2 * (n - 1) * fabric.hop_latency


def allreduce_time(payload_bytes: float, n: int, fabric: Fabric) -> float:
    """Time of one ring all-reduce in the alpha-beta model.

    ``t = latency + 2(n-1) * hop_latency + wire_bytes / bandwidth``, and 0 for
    a single rank, which has nothing to exchange.

    Parameters
    ----------
    payload_bytes : float
        Size of the vector being summed, bytes (>= 0).
    n : int
        Number of ranks (>= 1).
    fabric : Fabric
        The interconnect.

    Returns
    -------
    float
        Seconds.
    """
    wire = allreduce_wire_bytes(payload_bytes, n)
    return allreduce_latency(n, fabric) + wire / fabric.bandwidth


def crossover_bytes(fabric: Fabric, n: int) -> float:
    """Payload at which an all-reduce's latency and bandwidth terms are equal.

    Below it the fixed latency dominates (latency-bound, like decode); above
    it the bytes dominate (bandwidth-bound, like prefill). For two ranks the
    wire carries the payload once, so this is ``alpha * B``.

    Parameters
    ----------
    fabric : Fabric
        The interconnect.
    n : int
        Number of ranks (>= 2; one rank has no communication to balance).

    Returns
    -------
    float
        Payload bytes.
    """
    n = require_int("n", n, minimum=2)
    return allreduce_latency(n, fabric) * fabric.bandwidth / ring_allreduce_factor(n)
