"""The cost of a collective: bytes on the wire and time (alpha-beta), the all-reduce first.

The textbook algorithm is the **ring**: a reduce-scatter followed by an
all-gather. Each of the ``n`` ranks sends ``(n - 1) / n`` of the payload in
each phase, so ``2 (n - 1) / n`` of it in all, the factor nccl-tests uses to
turn algorithm bandwidth into "bus bandwidth" (nccl-tests,
doc/PERFORMANCE.md). No all-reduce algorithm can make a rank send less: the
factor is a lower bound, which is what "bandwidth-optimal" means. The price is
``2 (n - 1)`` steps one after another, so the ring's latency grows with ``n``.

Serving engines do not use the ring for decode's small messages. vLLM's and
TensorRT-LLM's custom all-reduces over NVLink use:

- **one-shot**: every rank reads every other rank's whole buffer and sums
  locally; one step, but ``(n - 1)`` payloads per rank;
- **two-shot**: a reduce-scatter and an all-gather done directly between all
  peers; two steps and the ring's ``2 (n - 1) / n`` payloads.

In the model a fabric's fixed ``latency`` is paid once per all-reduce
(launch, synchronisation) and its ``hop_latency`` once per step on the
critical path. With ``hop_latency = 0`` (the lesson's assumption) the three
algorithms cost the same latency.

The other collectives (:data:`COLLECTIVES`) are priced the same way:
reduce-scatter and all-gather are the ring's halves, the all-to-all of
expert parallelism sends ``(n - 1) / n`` of each rank's buffer to all peers
at once, and a send/recv passes a whole buffer to one peer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.specs import Fabric, ModelSpec


@dataclass(frozen=True)
class AllReduceAlgorithm:
    """How one all-reduce algorithm scales with the number of ranks ``n``.

    Attributes
    ----------
    name : str
        Key used by every ``algorithm=`` argument.
    description : str
        One line for tables and legends.
    steps : callable
        ``steps(n)``: communication steps on the critical path (0 for n = 1).
    factor : callable
        ``factor(n)``: payloads each rank sends (0 for n = 1).
    """

    name: str
    description: str
    steps: Callable[[int], int]
    factor: Callable[[int], float]


#: The all-reduce algorithms the model knows, by name.
ALGORITHMS: dict[str, AllReduceAlgorithm] = {
    a.name: a
    for a in (
        AllReduceAlgorithm(
            "ring",
            "ring: reduce-scatter + all-gather around a ring",
            lambda n: 2 * (n - 1),
            lambda n: 2.0 * (n - 1) / n,
        ),
        AllReduceAlgorithm(
            "two_shot",
            "two-shot: reduce-scatter + all-gather, all peers at once",
            lambda n: 2 if n > 1 else 0,
            lambda n: 2.0 * (n - 1) / n,
        ),
        AllReduceAlgorithm(
            "one_shot",
            "one-shot: read every peer's buffer, sum locally",
            lambda n: 1 if n > 1 else 0,
            lambda n: float(n - 1),
        ),
    )
}


def get_algorithm(algorithm: str) -> AllReduceAlgorithm:
    """Look up an all-reduce algorithm by name.

    Parameters
    ----------
    algorithm : str
        One of the keys of :data:`ALGORITHMS` (``"ring"``, ``"two_shot"``,
        ``"one_shot"``).

    Returns
    -------
    AllReduceAlgorithm
        Its steps and bytes as functions of ``n``.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the valid ones.
    """
    try:
        return ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        valid = ", ".join(repr(k) for k in ALGORITHMS)
        raise ValueError(f"algorithm must be one of {valid}, got {algorithm!r}") from None


def _ranks(n: int) -> int:
    return require_int("n", n, maximum=MAX_RANKS)


def allreduce_factor(n: int, algorithm: str = "ring") -> float:
    """Payloads each rank sends in one all-reduce over ``n`` ranks.

    Parameters
    ----------
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    algorithm : str, default "ring"
        A key of :data:`ALGORITHMS`.

    Returns
    -------
    float
        ``2(n-1)/n`` for the ring and two-shot, ``n - 1`` for one-shot.

    Examples
    --------
    >>> allreduce_factor(8, "one_shot"), allreduce_factor(8)
    (7.0, 1.75)
    """
    algo = get_algorithm(algorithm)
    return algo.factor(_ranks(n))


def allreduce_steps(n: int, algorithm: str = "ring") -> int:
    """Communication steps one all-reduce over ``n`` ranks puts on the critical path.

    Parameters
    ----------
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    algorithm : str, default "ring"
        A key of :data:`ALGORITHMS`.

    Returns
    -------
    int
        ``2(n-1)`` for the ring, 2 for two-shot, 1 for one-shot, 0 for one rank.
    """
    algo = get_algorithm(algorithm)
    return algo.steps(_ranks(n))


def ring_allreduce_factor(n: int) -> float:
    """Fraction of the payload each rank sends in a ring all-reduce: 2(n-1)/n.

    Parameters
    ----------
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        0 for one rank, 1 for two, 1.5 for four; below 2 for any ``n``.

    Examples
    --------
    >>> ring_allreduce_factor(4)
    1.5
    """
    return ALGORITHMS["ring"].factor(_ranks(n))


def allreduce_wire_bytes(payload_bytes: float, n: int, algorithm: str = "ring") -> float:
    """Bytes each rank sends to all-reduce ``payload_bytes`` over ``n`` ranks.

    Parameters
    ----------
    payload_bytes : float
        Size of the vector being summed, bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    algorithm : str, default "ring"
        A key of :data:`ALGORITHMS`.

    Returns
    -------
    float
        ``allreduce_factor(n, algorithm) * payload_bytes``, bytes per rank.
    """
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    return allreduce_factor(n, algorithm) * payload_bytes


def allreduce_latency(n: int, fabric: Fabric, algorithm: str = "ring") -> float:
    """Latency term of one all-reduce: ``latency + steps * hop_latency`` (0 for n = 1).

    Parameters
    ----------
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    fabric : Fabric
        The interconnect.
    algorithm : str, default "ring"
        A key of :data:`ALGORITHMS`; ``steps`` is :func:`allreduce_steps`.

    Returns
    -------
    float
        Seconds. On a fabric without per-hop latency every algorithm pays
        the same ``fabric.latency``.
    """
    require_instance("fabric", fabric, Fabric)
    steps = allreduce_steps(n, algorithm)
    if steps == 0:
        return 0.0
    return fabric.latency + steps * fabric.hop_latency


def allreduce_time(payload_bytes: float, n: int, fabric: Fabric, algorithm: str = "ring") -> float:
    """Time of one all-reduce in the alpha-beta(-per-hop) model.

    ``t = latency + steps * hop_latency + wire_bytes / bandwidth``, and 0 for
    a single rank, which has nothing to exchange.

    Parameters
    ----------
    payload_bytes : float
        Size of the vector being summed, bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    fabric : Fabric
        The interconnect.
    algorithm : str, default "ring"
        A key of :data:`ALGORITHMS`.

    Returns
    -------
    float
        Seconds.
    """
    wire = allreduce_wire_bytes(payload_bytes, n, algorithm)
    return allreduce_latency(n, fabric, algorithm) + wire / fabric.bandwidth


def crossover_bytes(fabric: Fabric, n: int, algorithm: str = "ring") -> float:
    """Payload at which an all-reduce's latency and bandwidth terms are equal.

    Below it the fixed latency dominates (latency-bound, like decode); above
    it the bytes dominate (bandwidth-bound, like prefill). For two ranks the
    wire carries the payload once, so this is ``alpha * B``.

    Parameters
    ----------
    fabric : Fabric
        The interconnect.
    n : int
        Number of ranks, from 2 (one rank has no communication to balance) to
        4096 (``MAX_RANKS``).
    algorithm : str, default "ring"
        A key of :data:`ALGORITHMS`.

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

    Each token in flight adds one hidden vector to every all-reduce: a
    prompt token in prefill, a sequence of the batch in decode. Below this
    many tokens a step's all-reduces are latency-bound, above it
    bandwidth-bound, whichever phase the step belongs to.

    Parameters
    ----------
    model : ModelSpec
        The model (its hidden vector is the payload per token).
    fabric : Fabric
        The wire.
    n : int
        Ranks, from 2 to 4096 (``MAX_RANKS``).
    algorithm : str, default "ring"
        A key of :data:`ALGORITHMS`.

    Returns
    -------
    float
        Tokens (not rounded); about 439 for two GPUs on the fast fabric.

    Examples
    --------
    >>> from lesson_lib.model.specimen import MODEL, FAST
    >>> round(crossover_tokens(MODEL, FAST, 2)), round(crossover_tokens(MODEL, FAST, 4))
    (439, 293)
    """
    require_instance("model", model, ModelSpec)
    return crossover_bytes(fabric, n, algorithm) / model.hidden_vector_bytes


# ---------------------------------------------------------------------------
# Every collective, in the same alpha-beta(-per-hop) model.


@dataclass(frozen=True)
class Collective:
    """How one collective scales with the number of ranks ``n``.

    Attributes
    ----------
    name : str
        Key used by every ``kind=`` argument.
    description : str
        One line for tables and legends: what it does and how it is scheduled.
    payload : str
        What ``payload_bytes`` measures for this collective.
    steps : callable
        ``steps(n)``: communication steps on the critical path (0 for n = 1).
    factor : callable
        ``factor(n)``: payloads each rank sends (0 for n = 1).
    """

    name: str
    description: str
    payload: str
    steps: Callable[[int], int]
    factor: Callable[[int], float]


#: The collectives the model prices, by name. The byte factors are the ones
#: nccl-tests uses to turn algorithm bandwidth into bus bandwidth
#: (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter,
#: all-gather and all-to-all, 1 for send/recv. Reduce-scatter and all-gather
#: are the ring's two halves, n - 1 steps each; the all-to-all sends to every
#: peer at once, as NCCL groups one send and one receive per peer.
COLLECTIVES: dict[str, Collective] = {
    c.name: c
    for c in (
        Collective(
            "all_reduce",
            "all-reduce: every rank ends with the sum (ring: reduce-scatter + all-gather)",
            "the vector summed, held whole on every rank",
            ALGORITHMS["ring"].steps,
            ALGORITHMS["ring"].factor,
        ),
        Collective(
            "reduce_scatter",
            "reduce-scatter: every rank ends with 1/n of the sum (ring)",
            "each rank's input vector; it keeps 1/n of the sum",
            lambda n: n - 1,
            lambda n: (n - 1) / n,
        ),
        Collective(
            "all_gather",
            "all-gather: every rank ends with every rank's piece (ring)",
            "the gathered vector; each rank brings 1/n of it",
            lambda n: n - 1,
            lambda n: (n - 1) / n,
        ),
        Collective(
            "all_to_all",
            "all-to-all: every rank sends a different 1/n of its buffer to each rank",
            "each rank's send buffer, 1/n of it for each rank (itself included)",
            lambda n: 1 if n > 1 else 0,
            lambda n: (n - 1) / n,
        ),
        Collective(
            "send_recv",
            "send/recv: one rank sends its buffer to one other",
            "the buffer sent",
            lambda n: 1 if n > 1 else 0,
            lambda n: 1.0 if n > 1 else 0.0,
        ),
    )
}


def get_collective(kind: str) -> Collective:
    """Look up a collective by name.

    Parameters
    ----------
    kind : str
        A key of :data:`COLLECTIVES` (``"all_reduce"``, ``"reduce_scatter"``,
        ``"all_gather"``, ``"all_to_all"``, ``"send_recv"``).

    Returns
    -------
    Collective
        Its steps and bytes as functions of ``n``.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the valid ones.
    """
    try:
        return COLLECTIVES[kind]
    except (KeyError, TypeError):
        valid = ", ".join(repr(k) for k in COLLECTIVES)
        raise ValueError(f"kind must be one of {valid}, got {kind!r}") from None


def collective_steps(kind: str, n: int) -> int:
    """Steps one collective over ``n`` ranks puts on the critical path.

    Parameters
    ----------
    kind : str
        A key of :data:`COLLECTIVES`.
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    int
        ``2(n-1)`` for the ring all-reduce, ``n - 1`` for reduce-scatter and
        all-gather, 1 for all-to-all and send/recv, 0 for one rank.
    """
    collective = get_collective(kind)
    return collective.steps(_ranks(n))


def collective_wire_bytes(kind: str, payload_bytes: float, n: int) -> float:
    """Bytes each rank sends in one collective over ``n`` ranks.

    Parameters
    ----------
    kind : str
        A key of :data:`COLLECTIVES`.
    payload_bytes : float
        The collective's payload (what ``Collective.payload`` says), bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        ``factor(n) * payload_bytes``, bytes per rank.
    """
    collective = get_collective(kind)
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    return collective.factor(_ranks(n)) * payload_bytes


def collective_time(kind: str, payload_bytes: float, n: int, fabric: Fabric) -> float:
    """Time of one collective: ``latency + steps * hop_latency + wire bytes / bandwidth``.

    Parameters
    ----------
    kind : str
        A key of :data:`COLLECTIVES`.
    payload_bytes : float
        The collective's payload, bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``); one rank costs 0.
    fabric : Fabric
        The interconnect: its ``latency`` is paid once, its ``hop_latency``
        once per step.

    Returns
    -------
    float
        Seconds.
    """
    require_instance("fabric", fabric, Fabric)
    wire = collective_wire_bytes(kind, payload_bytes, n)
    steps = collective_steps(kind, n)
    if steps == 0:
        return 0.0
    return fabric.latency + steps * fabric.hop_latency + wire / fabric.bandwidth


def alltoall_wire_bytes(payload_bytes: float, n: int) -> float:
    """Bytes each rank sends in an all-to-all: ``(n-1)/n`` of its buffer.

    Under uniform routing one ``n``-th of each rank's buffer is for itself
    and never leaves it; the rest goes to the ``n - 1`` peers.

    Parameters
    ----------
    payload_bytes : float
        The rank's send buffer, bytes (>= 0): for expert parallelism's
        dispatch, its tokens x top-k x one hidden vector.
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        Bytes per rank; 0 for one rank, never more than the payload.

    Examples
    --------
    >>> alltoall_wire_bytes(8 * 7168 * 2, 8)
    100352.0
    """
    return collective_wire_bytes("all_to_all", payload_bytes, n)


def alltoall_time(payload_bytes: float, n: int, fabric: Fabric) -> float:
    """Time of one all-to-all of ``payload_bytes`` per rank over ``n`` ranks.

    Parameters
    ----------
    payload_bytes : float
        Each rank's send buffer, bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    fabric : Fabric
        The interconnect.

    Returns
    -------
    float
        Seconds: one latency, one hop, and ``(n-1)/n`` of the payload at the
        fabric's bandwidth.
    """
    return collective_time("all_to_all", payload_bytes, n, fabric)


def reduce_scatter_wire_bytes(payload_bytes: float, n: int) -> float:
    """Bytes each rank sends in a ring reduce-scatter: ``(n-1)/n`` of its input.

    Parameters
    ----------
    payload_bytes : float
        Each rank's input vector, bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        Bytes per rank.
    """
    return collective_wire_bytes("reduce_scatter", payload_bytes, n)


def reduce_scatter_time(payload_bytes: float, n: int, fabric: Fabric) -> float:
    """Time of one ring reduce-scatter (``n - 1`` steps).

    Parameters
    ----------
    payload_bytes : float
        Each rank's input vector, bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    fabric : Fabric
        The interconnect.

    Returns
    -------
    float
        Seconds.
    """
    return collective_time("reduce_scatter", payload_bytes, n, fabric)


def all_gather_wire_bytes(payload_bytes: float, n: int) -> float:
    """Bytes each rank sends in a ring all-gather: ``(n-1)/n`` of the gathered vector.

    Parameters
    ----------
    payload_bytes : float
        The gathered vector, bytes (>= 0); each rank brings ``1/n`` of it.
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        Bytes per rank.
    """
    return collective_wire_bytes("all_gather", payload_bytes, n)


def all_gather_time(payload_bytes: float, n: int, fabric: Fabric) -> float:
    """Time of one ring all-gather (``n - 1`` steps).

    Parameters
    ----------
    payload_bytes : float
        The gathered vector, bytes (>= 0).
    n : int
        Number of ranks, from 1 to 4096 (``MAX_RANKS``).
    fabric : Fabric
        The interconnect.

    Returns
    -------
    float
        Seconds.
    """
    return collective_time("all_gather", payload_bytes, n, fabric)


def sendrecv_wire_bytes(payload_bytes: float, n: int = 2) -> float:
    """Bytes a rank sends to pass ``payload_bytes`` to one peer: all of them.

    Parameters
    ----------
    payload_bytes : float
        The buffer, bytes (>= 0).
    n : int, default 2
        Ranks taking part, from 1 (nothing to send) to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        ``payload_bytes`` (0 for one rank).
    """
    return collective_wire_bytes("send_recv", payload_bytes, n)


def sendrecv_time(payload_bytes: float, fabric: Fabric, n: int = 2) -> float:
    """Time of one point-to-point send: one latency, one hop, the whole buffer.

    Parameters
    ----------
    payload_bytes : float
        The buffer, bytes (>= 0).
    fabric : Fabric
        The wire between the two ranks.
    n : int, default 2
        Ranks taking part, from 1 (nothing to send) to 4096 (``MAX_RANKS``).

    Returns
    -------
    float
        Seconds.
    """
    return collective_time("send_recv", payload_bytes, n, fabric)
