"""Decode's bytes on the wire: how much each rank sends per token, and how fast.

Built on :mod:`lesson_lib.model.collectives`; every quantity is bytes or
bytes/second, set against the fabrics' bandwidths in :data:`FABRIC_BANDWIDTHS`.
"""

from __future__ import annotations

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.collectives import allreduce_wire_bytes
from lesson_lib.model.specimen import INFINIBAND_NDR_BANDWIDTH, NVLINK_BANDWIDTH, PCIE_BANDWIDTH
from lesson_lib.model.specs import ModelSpec

#: The fabrics the chapter draws the decode traffic against, bytes/second
#: per direction; labels say which figures are illustrative.
FABRIC_BANDWIDTHS: dict[str, float] = {
    "NVLink, 4th generation (per GPU, vendor figure)": NVLINK_BANDWIDTH,
    "PCIe Gen5 x16 (vendor figure)": PCIE_BANDWIDTH,
    "InfiniBand NDR port (illustrative)": INFINIBAND_NDR_BANDWIDTH,
}


def token_payload_bytes(model: ModelSpec) -> float:
    """Payload of all the all-reduces of one decoded token: what is summed, not what is sent.

    Parameters
    ----------
    model : ModelSpec

    Returns
    -------
    float
        Bytes per token: one hidden vector per all-reduce (128 x 10 KiB = 1.25 MiB
        for the specimen); :func:`decode_wire_bytes` is what each rank sends.
    """
    require_instance("model", model, ModelSpec)
    return model.allreduces_per_token * model.hidden_vector_bytes


def decode_wire_bytes(model: ModelSpec, n: int) -> float:
    """Bytes each rank sends per decoded token over a ring of ``n`` GPUs.

    Parameters
    ----------
    model : ModelSpec
    n : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``); one GPU sends nothing.

    Returns
    -------
    float
        ``2(n-1)/n`` times :func:`token_payload_bytes`, bytes per rank per token.
    """
    require_instance("model", model, ModelSpec)
    return allreduce_wire_bytes(token_payload_bytes(model), n)


def decode_wire_rate(model: ModelSpec, n: int, tokens_per_s: float) -> float:
    """Bytes per second each rank sends while decoding at ``tokens_per_s``.

    Parameters
    ----------
    model, n
        As for :func:`decode_wire_bytes`.
    tokens_per_s : float
        Decode rate of the sequence, tokens/second (>= 0).

    Returns
    -------
    float
        Bytes/second per rank, one direction: 93.75 MiB/s for the specimen on 4 GPUs at 50 tokens/s.
    """
    require_instance("model", model, ModelSpec)
    tokens_per_s = require_number("tokens_per_s", tokens_per_s, unit="tokens/s")
    return decode_wire_bytes(model, n) * tokens_per_s


def headroom(bandwidth: float, rate: float) -> float:
    """How many times a fabric's bandwidth covers a traffic rate.

    Parameters
    ----------
    bandwidth : float
        The fabric, bytes/second per direction (> 0).
    rate : float
        The traffic, bytes/second (> 0).

    Returns
    -------
    float
        ``bandwidth / rate``; 1 means the wire is exactly full.
    """
    bandwidth = require_number("bandwidth", bandwidth, strict=True, unit="bytes/s")
    rate = require_number("rate", rate, strict=True, unit="bytes/s")
    return bandwidth / rate


def tokens_to_fill(model: ModelSpec, n: int, bandwidth: float) -> float:
    """Decode rate at which the all-reduce bytes alone would fill a wire.

    Parameters
    ----------
    model : ModelSpec
    n : int
        Tensor-parallel degree, from 2 (one GPU sends nothing) to 4096 (``MAX_RANKS``).
    bandwidth : float
        The fabric, bytes/second per direction (> 0).

    Returns
    -------
    float
        Tokens/second of one sequence, latency ignored: decode never gets near this rate.
    """
    require_instance("model", model, ModelSpec)
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    return headroom(bandwidth, decode_wire_bytes(model, n))
