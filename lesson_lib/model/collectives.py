"""The cost of one all-reduce: bytes on the wire and time (alpha-beta).

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
