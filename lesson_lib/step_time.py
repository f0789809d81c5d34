"""Time of one decode step or one prefill: compute plus communication.

Compute is a roofline: the larger of streaming this rank's weights from HBM
(the lesson's checkpoint-size heuristic, a planning estimate, not measured
traffic) and doing this rank's FLOPs. Communication is
``model.allreduces_per_token`` serial, blocking all-reduces, each carrying
one hidden vector per token in flight.

The lesson's own arithmetic is compute + latency; it leaves the bandwidth
term out because in decode it is negligible. ``include_bandwidth=False``
reproduces that, the default adds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib._validate import require_int
from lesson_lib.collectives import allreduce_latency, allreduce_wire_bytes
from lesson_lib.specs import Accelerator, Fabric, ModelSpec


@dataclass(frozen=True)
class StepBreakdown:
    """Where the time of one step goes, in seconds.

    Attributes
    ----------
    compute_s : float
        Roofline compute time per rank.
    latency_s : float
        Sum of the all-reduces' fixed latencies.
    bandwidth_s : float
        Sum of the all-reduces' wire bytes / bandwidth (0 when excluded).
    tokens : int
        Tokens processed by the step (1 for decode, the prompt for prefill).
    weights_s : float
        The weight-streaming side of the roofline.
    flops_s : float
        The arithmetic side of the roofline.
    """

    compute_s: float
    latency_s: float
    bandwidth_s: float
    tokens: int
    weights_s: float
    flops_s: float

    @property
    def communication_s(self) -> float:
        """Latency + bandwidth terms, seconds."""
        return self.latency_s + self.bandwidth_s

    @property
    def total_s(self) -> float:
        """Compute + communication, seconds (no overlap assumed)."""
        return self.compute_s + self.communication_s

    @property
    def tokens_per_s(self) -> float:
        """Tokens processed per second of this step."""
        return self.tokens / self.total_s

    @property
    def bound(self) -> str:
        """Name of the largest term (``"compute"``, ``"latency"`` or ``"bandwidth"``)."""
        terms = {
            "compute": self.compute_s,
            "latency": self.latency_s,
            "bandwidth": self.bandwidth_s,
        }
        return max(terms, key=terms.__getitem__)

    @property
    def communication_bound(self) -> str:
        """Name of the larger communication term (``"latency"`` or ``"bandwidth"``)."""
        return "latency" if self.latency_s >= self.bandwidth_s else "bandwidth"


def _step(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    tokens: int,
    include_bandwidth: bool,
) -> StepBreakdown:
    n = require_int("n", n)
    weights_s = model.weight_bytes / (n * accel.hbm_bandwidth)
    flops_s = 2.0 * model.params * tokens / (n * accel.peak_flops)
    collectives = model.allreduces_per_token
    latency_s = collectives * allreduce_latency(n, fabric)
    payload = tokens * model.hidden_vector_bytes
    bandwidth_s = collectives * allreduce_wire_bytes(payload, n) / fabric.bandwidth
    return StepBreakdown(
        compute_s=max(weights_s, flops_s),
        latency_s=latency_s,
        bandwidth_s=bandwidth_s if include_bandwidth else 0.0,
        tokens=tokens,
        weights_s=weights_s,
        flops_s=flops_s,
    )


def decode_step(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, n: int, *, include_bandwidth: bool = True
) -> StepBreakdown:
    """Time to decode one token on ``n`` tensor-parallel GPUs.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card (all ``n`` are alike).
    fabric : Fabric
        The wire between them.
    n : int
        Tensor-parallel degree (>= 1); 1 means no communication.
    include_bandwidth : bool, default True
        False reproduces the lesson's arithmetic, compute + latency only.

    Returns
    -------
    StepBreakdown
        Seconds per term; ``tokens_per_s`` is one sequence's decode rate.

    Examples
    --------
    >>> from lesson_lib.specimen import MODEL, GPU, FAST
    >>> round(decode_step(MODEL, GPU, FAST, 2, include_bandwidth=False).total_s * 1e3, 2)
    9.34
    """
    return _step(model, accel, fabric, n, 1, include_bandwidth)


def prefill_step(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    prompt_tokens: int,
    *,
    include_bandwidth: bool = True,
) -> StepBreakdown:
    """Time to prefill a prompt of ``prompt_tokens`` tokens on ``n`` GPUs.

    All positions run at once, so each of the all-reduces carries
    ``prompt_tokens`` hidden vectors.

    Parameters
    ----------
    model : ModelSpec
        The model.
    accel : Accelerator
        One card.
    fabric : Fabric
        The wire between them.
    n : int
        Tensor-parallel degree (>= 1).
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    include_bandwidth : bool, default True
        False leaves the bandwidth term out.

    Returns
    -------
    StepBreakdown
        Seconds per term; ``tokens_per_s`` is prompt tokens per second.
    """
    tokens = require_int("prompt_tokens", prompt_tokens, minimum=1, maximum=model.max_context)
    return _step(model, accel, fabric, n, tokens, include_bandwidth)


def speedup(before: StepBreakdown, after: StepBreakdown) -> float:
    """How many times faster ``after`` is than ``before``: ``before.total_s / after.total_s``.

    Parameters
    ----------
    before, after : StepBreakdown
        Two configurations of the same step.

    Returns
    -------
    float
        The ratio; 1.76 for the lesson's 2 -> 4 GPUs on the fast fabric.
    """
    return before.total_s / after.total_s
