"""The cost of a collective: bytes on the wire and time (alpha-beta), bytes and seconds.

The ring all-reduce sends ``2 (n - 1) / n`` of the payload per rank in ``2 (n - 1)`` steps
(nccl-tests' bus-bandwidth factor); one-shot ``n - 1`` payloads in one step, two-shot the ring's
bytes in two. A fabric's ``latency`` is paid once per collective, its ``hop_latency`` once per step.
:data:`COLLECTIVES` holds each collective and its algorithms (:data:`ALGORITHMS`, the all-reduce's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.specs import Fabric, ModelSpec


@dataclass(frozen=True)
class Algorithm:
    """How one algorithm of a collective scales with the number of ranks ``n``."""

    #: Key used by every ``algorithm=`` argument.
    name: str
    #: One line for tables and legends.
    description: str
    #: Communication steps on the critical path for ``n`` ranks (0 for n = 1).
    steps: Callable[[int], int]
    #: Payloads each rank sends for ``n`` ranks (0 for n = 1).
    factor: Callable[[int], float]


@dataclass(frozen=True)
class Collective:
    """One collective: what it does, what its payload is, and the algorithms that run it."""

    #: Key used by every ``kind=`` argument.
    name: str
    #: One line for tables and legends.
    description: str
    #: What ``payload_bytes`` measures for this collective.
    payload: str
    #: Name -> Algorithm, every algorithm that runs it; the first is the one priced by default.
    algorithms: Mapping[str, Algorithm]


def _one_step(n: int) -> int:
    return 1 if n > 1 else 0


def _ring(n: int) -> float:
    return 2.0 * (n - 1) / n


def _by_name(*algorithms: Algorithm) -> dict[str, Algorithm]:
    return {a.name: a for a in algorithms}


_RING_HALF = Algorithm("ring", "ring: n - 1 steps", lambda n: n - 1, lambda n: (n - 1) / n)
#: The all-reduce's algorithms; the ring, first, is the default.
_ALL_REDUCE = (
    Algorithm(
        "ring", "ring: reduce-scatter + all-gather around a ring", lambda n: 2 * (n - 1), _ring
    ),
    Algorithm(
        "two_shot",
        "two-shot: reduce-scatter + all-gather, all peers at once",
        lambda n: 2 * _one_step(n),
        _ring,
    ),
    Algorithm(
        "one_shot",
        "one-shot: read every peer's buffer, sum locally",
        _one_step,
        lambda n: float(n - 1),
    ),
)

#: The collectives the model prices, by name. The byte factors are the ones nccl-tests uses to turn
#: algorithm bandwidth into bus bandwidth (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce, (n-1)/n for
#: reduce-scatter, all-gather and all-to-all, 1 for send/recv. Reduce-scatter and all-gather are the
#: ring's two halves, n - 1 steps each; the all-to-all sends to every peer at once, as NCCL groups
#: one send and one receive per peer.
COLLECTIVES: dict[str, Collective] = {
    c.name: c
    for c in (
        Collective(
            "all_reduce",
            "all-reduce: every rank ends with the sum (ring: reduce-scatter + all-gather)",
            "the vector summed, held whole on every rank",
            _by_name(*_ALL_REDUCE),
        ),
        Collective(
            "reduce_scatter",
            "reduce-scatter: every rank ends with 1/n of the sum (ring)",
            "each rank's input vector; it keeps 1/n of the sum",
            _by_name(_RING_HALF),
        ),
        Collective(
            "all_gather",
            "all-gather: every rank ends with every rank's piece (ring)",
            "the gathered vector; each rank brings 1/n of it",
            _by_name(_RING_HALF),
        ),
        Collective(
            "all_to_all",
            "all-to-all: every rank sends a different 1/n of its buffer to each rank",
            "each rank's send buffer, 1/n of it for each rank (itself included)",
            _by_name(
                Algorithm("direct", "direct: all peers at once", _one_step, _RING_HALF.factor)
            ),
        ),
        Collective(
            "send_recv",
            "send/recv: one rank sends its buffer to one other",
            "the buffer sent",
            _by_name(Algorithm("direct", "direct: one send", _one_step, lambda n: float(n > 1))),
        ),
    )
}

#: The all-reduce algorithms by name (the all-reduce's entry of :data:`COLLECTIVES`).
ALGORITHMS: Mapping[str, Algorithm] = COLLECTIVES["all_reduce"].algorithms


def _lookup(registry: Mapping[str, object], name: str, key: object) -> object:
    try:
        return registry[key]  # type: ignore[index]
    except (KeyError, TypeError):
        valid = ", ".join(repr(k) for k in registry)
        raise ValueError(f"{name} must be one of {valid}, got {key!r}") from None


def get_algorithm(algorithm: str) -> Algorithm:
    """Look up an all-reduce algorithm by name; an unknown name raises ValueError listing them.

    Parameters
    ----------
    algorithm : str
        A key of :data:`ALGORITHMS` (``"ring"``, ``"two_shot"``, ``"one_shot"``).

    Returns
    -------
    Algorithm
    """
    return _lookup(ALGORITHMS, "algorithm", algorithm)  # type: ignore[return-value]


def _schedule(kind: str, algorithm: str | None) -> Algorithm:
    """The named algorithm of a collective, or its first; unknown names list the valid ones."""
    algorithms = _lookup(COLLECTIVES, "kind", kind).algorithms  # type: ignore[attr-defined]
    if algorithm is None:
        return next(iter(algorithms.values()))
    return _lookup(algorithms, "algorithm", algorithm)  # type: ignore[return-value]


def _named(algorithm: str) -> str:
    """The all-reduce algorithm's name; None and unknown names are refused."""
    return get_algorithm(algorithm).name


def _ranks(n: int) -> int:
    return require_int("n", n, maximum=MAX_RANKS)


def collective_steps(kind: str, n: int, algorithm: str | None = None) -> int:
    """Steps one collective over ``n`` ranks puts on the critical path.

    Parameters
    ----------
    kind : str
        A key of :data:`COLLECTIVES`.
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    algorithm : str, optional
        A key of the collective's ``algorithms``; its first by default.

    Returns
    -------
    int
        ``2(n-1)`` for the ring all-reduce, ``n - 1`` for reduce-scatter and
        all-gather, 1 for all-to-all and send/recv, 0 for one rank.
    """
    return _schedule(kind, algorithm).steps(_ranks(n))


def collective_wire_bytes(
    kind: str, payload_bytes: float, n: int, algorithm: str | None = None
) -> float:
    """Bytes each rank sends in one collective over ``n`` ranks.

    Parameters
    ----------
    kind, n, algorithm
        As for :func:`collective_steps`.
    payload_bytes : float
        The collective's payload (what ``Collective.payload`` says), bytes (>= 0).

    Returns
    -------
    float
        ``factor(n) * payload_bytes``, bytes per rank.
    """
    schedule = _schedule(kind, algorithm)
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    return _finite(schedule.factor(_ranks(n)) * payload_bytes, payload_bytes, "wire bytes")


def _finite(value: float, payload_bytes: float, what: str) -> float:
    """``value``, unless ``payload_bytes`` made it overflow: a ValueError naming the payload."""
    if math.isinf(value):
        raise ValueError(f"payload_bytes must keep {what} finite, got {payload_bytes:g} bytes")
    return value


def _latency(kind: str, n: int, fabric: Fabric, algorithm: str | None) -> float:
    """``latency + steps * hop_latency`` of one collective, 0 for one rank."""
    require_instance("fabric", fabric, Fabric)
    steps = collective_steps(kind, n, algorithm)
    return fabric.latency + steps * fabric.hop_latency if steps else 0.0


def collective_time(
    kind: str, payload_bytes: float, n: int, fabric: Fabric, algorithm: str | None = None
) -> float:
    """Time of one collective: ``latency + steps * hop_latency + wire bytes / bandwidth``.

    Parameters
    ----------
    kind, payload_bytes, n, algorithm
        As for :func:`collective_wire_bytes`; one rank costs 0.
    fabric : Fabric

    Returns
    -------
    float
        Seconds.
    """
    require_instance("fabric", fabric, Fabric)
    wire = collective_wire_bytes(kind, payload_bytes, n, algorithm)
    seconds = _latency(kind, n, fabric, algorithm) + wire / fabric.bandwidth
    return _finite(seconds, float(payload_bytes), f"seconds at {fabric.bandwidth:g} bytes/s")


def allreduce_factor(n: int, algorithm: str = "ring") -> float:
    """Payloads each rank sends in one all-reduce over ``n`` ranks.

    Parameters
    ----------
    n, algorithm
        Ranks, from 1 to 4096 (``MAX_RANKS``), and a key of :data:`ALGORITHMS`, default ``"ring"``.

    Returns
    -------
    float
        ``2(n-1)/n`` for the ring and two-shot (1.75 at 8), ``n - 1`` for one-shot.
    """
    return get_algorithm(algorithm).factor(_ranks(n))


def ring_allreduce_factor(n: int) -> float:
    """Fraction of the payload each rank sends in a ring all-reduce: 2(n-1)/n.

    Parameters
    ----------
    n : int
        Number of ranks, from 1 to 4096.

    Returns
    -------
    float
        0 for one rank, 1 for two, 1.5 for four; below 2 for any ``n``.
    """
    return allreduce_factor(n, "ring")


def allreduce_steps(n: int, algorithm: str = "ring") -> int:
    """Communication steps one all-reduce over ``n`` ranks puts on the critical path.

    Parameters
    ----------
    n, algorithm
        Ranks (1 to 4096) and a key of :data:`ALGORITHMS`, default ``"ring"``.

    Returns
    -------
    int
        ``2(n-1)`` for the ring, 2 for two-shot, 1 for one-shot, 0 for one rank.
    """
    return collective_steps("all_reduce", n, _named(algorithm))


def allreduce_wire_bytes(payload_bytes: float, n: int, algorithm: str = "ring") -> float:
    """Bytes each rank sends to all-reduce ``payload_bytes`` over ``n`` ranks.

    Parameters
    ----------
    payload_bytes, n, algorithm
        The vector summed (bytes, >= 0), the ranks (1 to 4096), a key of :data:`ALGORITHMS`.

    Returns
    -------
    float
        ``allreduce_factor(n, algorithm) * payload_bytes``, bytes per rank.
    """
    return collective_wire_bytes("all_reduce", payload_bytes, n, _named(algorithm))


def allreduce_latency(n: int, fabric: Fabric, algorithm: str = "ring") -> float:
    """Latency term of one all-reduce: ``latency + steps * hop_latency`` (0 for n = 1).

    Parameters
    ----------
    n, fabric, algorithm
        Ranks (1 to 4096), the fabric, a key of :data:`ALGORITHMS` (steps: :func:`allreduce_steps`).

    Returns
    -------
    float
        Seconds; without per-hop latency every algorithm pays the same ``fabric.latency``.
    """
    return _latency("all_reduce", n, fabric, _named(algorithm))


def allreduce_time(payload_bytes: float, n: int, fabric: Fabric, algorithm: str = "ring") -> float:
    """Time of one all-reduce: ``latency + steps * hop_latency + wire_bytes / bandwidth``.

    Parameters
    ----------
    payload_bytes, n, fabric, algorithm
        As for :func:`allreduce_wire_bytes`, and the interconnect.

    Returns
    -------
    float
        Seconds; 0 for one rank, which has nothing to exchange.
    """
    return collective_time("all_reduce", payload_bytes, n, fabric, _named(algorithm))


def crossover_bytes(fabric: Fabric, n: int, algorithm: str = "ring") -> float:
    """Payload at which an all-reduce's latency and bandwidth terms are equal.

    Below it latency-bound (like decode), above it bandwidth-bound (like
    prefill); for two ranks the wire carries the payload once: ``alpha * B``.

    Parameters
    ----------
    fabric, n, algorithm
        The fabric, ranks from 2 (one has nothing to balance) to 4096, a key of :data:`ALGORITHMS`.

    Returns
    -------
    float
        Payload bytes.
    """
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    return (
        allreduce_latency(n, fabric, algorithm) * fabric.bandwidth / allreduce_factor(n, algorithm)
    )


def crossover_tokens(model: ModelSpec, fabric: Fabric, n: int, algorithm: str = "ring") -> float:
    """Tokens per collective at which an all-reduce's latency and bandwidth terms are equal.

    Each token in flight (a prompt token in prefill, a sequence in decode) adds
    one hidden vector to every all-reduce, whichever phase the step is in.

    Parameters
    ----------
    model : ModelSpec
        The model (its hidden vector is the payload per token).
    fabric, n, algorithm
        As for :func:`crossover_bytes`.

    Returns
    -------
    float
        Tokens (not rounded); about 439 for two GPUs on the fast fabric, 293 for four.
    """
    require_instance("model", model, ModelSpec)
    return crossover_bytes(fabric, n, algorithm) / model.hidden_vector_bytes


def alltoall_wire_bytes(payload_bytes: float, n: int) -> float:
    """Bytes each rank sends in an all-to-all: ``(n-1)/n`` of its buffer (uniform routing).

    Parameters
    ----------
    payload_bytes, n
        The rank's send buffer (an EP dispatch's: tokens x top-k x a hidden vector) and the ranks.

    Returns
    -------
    float
        Bytes per rank; 0 for one rank, never more than the payload.
    """
    return collective_wire_bytes("all_to_all", payload_bytes, n)


def alltoall_time(payload_bytes: float, n: int, fabric: Fabric) -> float:
    """Time of one all-to-all of ``payload_bytes`` per rank over ``n`` ranks.

    Parameters
    ----------
    payload_bytes, n, fabric
        Each rank's send buffer, the ranks and the interconnect.

    Returns
    -------
    float
        Seconds: one latency, one hop, and ``(n-1)/n`` of the payload at the fabric's bandwidth.
    """
    return collective_time("all_to_all", payload_bytes, n, fabric)
