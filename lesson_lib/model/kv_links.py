"""The links a KV cache can take from prefill to decode GPUs, and what disaggregation costs.

One NVLink domain, a NIC per GPU on the compute fabric, or a node's converged-Ethernet port, shared.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int, require_number
from lesson_lib.model.kv_transfer import Handoff, handoff
from lesson_lib.model.specimen import (
    DCP_COLLECTIVES_PER_ATTENTION_LAYER,
    FAST,
    GPU,
    INTER_NODE,
    MODEL,
    NODE_ETHERNET,
)
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import MAX_BATCH


@dataclass(frozen=True)
class Link:
    """One way for a KV cache to travel from the prefill to the decode GPUs."""

    #: Short name (the explorer's control value).
    key: str
    label: str
    #: One port's latency and bandwidth.
    fabric: Fabric
    #: True when each side's GPUs share that one port.
    shared_port: bool


#: The chapter's three links, fastest first.
LINKS: tuple[Link, ...] = (
    Link("nvlink", "NVLink, one NVLink domain", FAST, False),
    Link("nic", "a NIC per GPU, compute fabric", INTER_NODE, False),
    Link("ethernet", "the node's shared Ethernet port", NODE_ETHERNET, True),
)

#: The links by key.
LINKS_BY_KEY: dict[str, Link] = {link.key: link for link in LINKS}

#: Tensor-parallel degree of both instances in the chapter's examples.
GPUS: int = 4

#: Most output tokens per request the functions accept (a bound on input).
MAX_OUTPUT_TOKENS: int = 10_000_000


def link_handoff(
    link: Link,
    prompt_tokens: int,
    prefill_gpus: int = GPUS,
    decode_gpus: int = GPUS,
    *,
    model: ModelSpec = MODEL,
    accel: Accelerator = GPU,
) -> Handoff:
    """One request's prefill and hand-off on ``link``, prefill all-reduces on the fast fabric.

    Parameters
    ----------
    link : Link
        One of :data:`LINKS` (or your own).
    prompt_tokens : int
        Prompt length, from 1 to ``model.max_context``.
    prefill_gpus, decode_gpus : int, default 4
        Tensor-parallel degrees of the two instances, from 1 to 4096.
    model, accel : ModelSpec, Accelerator, default MODEL, GPU

    Returns
    -------
    Handoff
        See :func:`lesson_lib.model.kv_transfer.handoff`.
    """
    require_instance("link", link, Link)
    return handoff(
        model,
        accel,
        FAST,
        link.fabric,
        prompt_tokens,
        prefill_gpus,
        decode_gpus,
        shared_port=link.shared_port,
    )


def colocated_stall_per_token(prefill_s: float, batch: int, output_tokens: int) -> float:
    """Seconds a colocated prefill adds to each decoded token, on average.

    In steady state a batch of ``batch`` sequences of ``output_tokens`` tokens each finishes and
    admits ``batch / output_tokens`` requests per step, and each admitted prefill stalls the whole
    batch for ``prefill_s``: on average each token waits ``batch x prefill_s / output_tokens`` more.

    Parameters
    ----------
    prefill_s : float
        One prompt's prefill on the shared GPUs, seconds (>= 0).
    batch : int
        Sequences decoding together, from 1 to 65536 (``MAX_BATCH``).
    output_tokens : int
        Tokens each request generates, from 1 to :data:`MAX_OUTPUT_TOKENS`.

    Returns
    -------
    float
    """
    prefill_s = require_number("prefill_s", prefill_s, unit="s")
    batch = require_int("batch", batch, maximum=MAX_BATCH)
    output_tokens = require_int("output_tokens", output_tokens, maximum=MAX_OUTPUT_TOKENS)
    return batch * prefill_s / output_tokens


def collective_latency_per_token(model: ModelSpec, tp: int, dcp: int = 1) -> float:
    """Fixed latency of a decoded token's collectives on the fast fabric, with DCP's added.

    Parameters
    ----------
    model : ModelSpec
    tp : int
        Tensor-parallel degree, from 2 to 4096.
    dcp : int, default 1
        Decode context parallelism, from 1 to ``max(1, tp // kv_heads)``.

    Returns
    -------
    float
        ``(allreduces_per_token + DCP's collectives) x FAST.latency``, seconds; DCP adds
        ``DCP_COLLECTIVES_PER_ATTENTION_LAYER x num_attention_layers`` when ``dcp > 1``.
    """
    require_instance("model", model, ModelSpec)
    tp = require_int("tp", tp, minimum=2, maximum=MAX_RANKS)
    dcp = require_int("dcp", dcp, maximum=max(1, tp // model.num_kv_heads))
    extra = DCP_COLLECTIVES_PER_ATTENTION_LAYER * model.num_attention_layers if dcp > 1 else 0
    return (model.allreduces_per_token + extra) * FAST.latency
