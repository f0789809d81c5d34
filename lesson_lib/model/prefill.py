"""Prefill against decode: where a message sits on the alpha-beta curve, and time per token.

Decode sends one hidden vector per all-reduce, prefill one per prompt token.
``t(m) = alpha + f m / B`` (``f = 2(n-1)/n``, 1 for two ranks) has a crossover
payload where its terms are equal: below it latency-bound, above bandwidth-bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.collectives import allreduce_latency, allreduce_wire_bytes, crossover_bytes
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepBreakdown, decode_step, prefill_step


@dataclass(frozen=True)
class CurvePoint:
    """One all-reduce placed on the alpha-beta curve."""

    #: Size of the vector being summed, bytes.
    payload_bytes: float
    n: int
    fabric: Fabric
    #: The fixed term (alpha), seconds.
    latency_s: float
    #: The bytes term, wire bytes / bandwidth, seconds.
    bandwidth_s: float
    #: Payload at which the two terms are equal, bytes.
    crossover_bytes: float

    @property
    def total_s(self) -> float:
        """Time of the all-reduce, latency + bandwidth terms, seconds."""
        return self.latency_s + self.bandwidth_s

    @property
    def bound(self) -> str:
        """``"latency"`` or ``"bandwidth"``: the larger term."""
        return "latency" if self.latency_s >= self.bandwidth_s else "bandwidth"

    @property
    def ratio_to_crossover(self) -> float:
        """``payload_bytes / crossover_bytes``: below 1 latency-bound, above 1 (or ``inf`` on a
        fabric without latency, whose crossover is 0 bytes) bandwidth-bound."""
        return math.inf if self.crossover_bytes == 0 else self.payload_bytes / self.crossover_bytes


def place_on_curve(payload_bytes: float, n: int, fabric: Fabric) -> CurvePoint:
    """Split one all-reduce of ``payload_bytes`` into its latency and bandwidth terms.

    Parameters
    ----------
    payload_bytes : float
        Size of the vector being summed, bytes (> 0).
    n : int
        Ranks in the ring, from 2 to 4096 (``MAX_RANKS``).
    fabric : Fabric

    Returns
    -------
    CurvePoint
        Both terms in seconds and the crossover payload in bytes.
    """
    payload_bytes = require_number("payload_bytes", payload_bytes, strict=True, unit="bytes")
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    require_instance("fabric", fabric, Fabric)
    return CurvePoint(
        payload_bytes=payload_bytes,
        n=n,
        fabric=fabric,
        latency_s=allreduce_latency(n, fabric),
        bandwidth_s=allreduce_wire_bytes(payload_bytes, n) / fabric.bandwidth,
        crossover_bytes=crossover_bytes(fabric, n),
    )


def prefill_message_bytes(model: ModelSpec, prompt_tokens: int) -> float:
    """Payload of one prefill all-reduce: one hidden vector per prompt token.

    Parameters
    ----------
    model : ModelSpec
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.

    Returns
    -------
    float
        Bytes (40 MiB for the specimen's 4,096-token prompt).
    """
    require_instance("model", model, ModelSpec)
    tokens = require_int("prompt_tokens", prompt_tokens, maximum=model.max_context)
    return tokens * model.hidden_vector_bytes


@dataclass(frozen=True)
class PerToken:
    """Decode and prefill on the same GPUs, each per token."""

    #: One decoded token.
    decode: StepBreakdown
    #: The whole prompt.
    prefill: StepBreakdown

    @property
    def decode_s(self) -> float:
        """Seconds per decoded token."""
        return self.decode.total_s

    @property
    def prefill_s(self) -> float:
        """Seconds per prompt token (the prefill's total divided by its tokens)."""
        return self.prefill.total_s / self.prefill.tokens

    @property
    def ratio(self) -> float:
        """How many times cheaper a prompt token is than a decoded one."""
        return self.decode_s / self.prefill_s


def per_token(
    model: ModelSpec, accel: Accelerator, fabric: Fabric, n: int, prompt_tokens: int
) -> PerToken:
    """Time per token of decode and of a prefill of ``prompt_tokens`` tokens.

    Parameters
    ----------
    model, accel, fabric, n, prompt_tokens
        As for :func:`~lesson_lib.model.step_time.prefill_step`.

    Returns
    -------
    PerToken
        Both steps, bandwidth term included.
    """
    return PerToken(
        decode=decode_step(model, accel, fabric, n),
        prefill=prefill_step(model, accel, fabric, n, prompt_tokens),
    )
