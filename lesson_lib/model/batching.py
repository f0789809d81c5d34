"""Batched decode and speculative verification: step times per batch, tokens per collective.

The weights are read once per step for the whole batch, and each all-reduce carries one hidden
vector per sequence (``draft_tokens + 1`` when a step verifies drafts), so a large enough batch
turns decode's all-reduces bandwidth-bound (:func:`~lesson_lib.model.collectives.crossover_tokens`).
"""

from __future__ import annotations

from collections.abc import Iterable

from lesson_lib.model._validate import require_instance, require_int
from lesson_lib.model.collectives import crossover_tokens
from lesson_lib.model.specimen import MODEL, PROMPT_TOKENS
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepBreakdown, decode_step

#: Batches the chapter's figure and table walk through.
BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)

#: The context length of the batching examples, the lesson's prompt.
CONTEXT: int = PROMPT_TOKENS


def batch_curve(
    model: ModelSpec,
    accel: Accelerator,
    fabric: Fabric,
    n: int,
    batches: Iterable[int] = BATCHES,
    *,
    context: int | None = CONTEXT,
    algorithm: str = "ring",
) -> list[StepBreakdown]:
    """One decode step per batch size, on ``n`` GPUs.

    Parameters
    ----------
    model, accel, fabric, n, algorithm
        As for :func:`~lesson_lib.model.step_time.decode_step`.
    batches : iterable of int, default BATCHES
        Sequences per step, each from 1 to :data:`~lesson_lib.model.step_time.MAX_BATCH`.
    context : int or None, default CONTEXT
        Tokens in each sequence's cache (None: weights only, the lesson's heuristic).

    Returns
    -------
    list of StepBreakdown
        In the order of ``batches``; ``total_s`` is what each sequence waits
        per token, ``tokens_per_s`` the step's throughput.
    """
    options = {"context": context, "algorithm": algorithm}
    # decode_step checks each batch against MAX_BATCH
    return [decode_step(model, accel, fabric, n, batch=b, **options) for b in batches]


#: Draft tokens per step in the speculative-decoding section, an illustrative depth and not a
#: recommendation (vLLM's MTP guide suggests starting at 1, and engines let the operator choose).
SPEC_DRAFT_TOKENS: int = 3

#: The specimen's multi-token-prediction head has one layer (the 15 ``mtp.*``
#: tensors of Qwen/Qwen3.8-27B: a fusion projection, one transformer layer, norms).
MTP_LAYERS: int = 1


def mtp_head_params(model: ModelSpec = MODEL, layers: int = MTP_LAYERS) -> float:
    """Parameters of a multi-token-prediction head of ``layers`` gated-attention layers.

    It concatenates a token's embedding with the main model's hidden state and projects ``2h -> h``
    (the fusion projection), then runs ``layers`` full-attention layers of the main model's shapes,
    each with its FFN. The attention is gated: the query projection also yields an output gate,
    doubling its width. Embedding and LM head are shared, not counted.

    Parameters
    ----------
    model : ModelSpec, default the specimen
        Needs ``num_query_heads`` and ``ffn_size`` (else a ValueError).
    layers : int, default MTP_LAYERS
        Transformer layers in the head, from 1 to 64.

    Returns
    -------
    float
        Parameters, norms included: 425 million for the specimen.
    """
    require_instance("model", model, ModelSpec)
    layers = require_int("layers", layers, maximum=64)
    if model.num_query_heads is None or model.ffn_size is None:
        raise ValueError(
            f"model must give num_query_heads and ffn_size to size an MTP head, "
            f"got {model.num_query_heads!r} and {model.ffn_size!r}"
        )
    h, d = model.hidden_size, model.head_dim
    q, kv = model.num_query_heads * d, model.num_kv_heads * d
    attention = h * 2 * q + 2 * h * kv + q * h
    ffn = 3 * h * model.ffn_size
    norms = 2 * h + 2 * d  # the layer's two norms, and its query and key norms
    fusion = 2 * h * h + 2 * h  # the projection and its two input norms
    return float(fusion + h + layers * (attention + ffn + norms))  # + the head's final norm


def speculative_tokens_per_collective(sequences: int, draft_tokens: int = SPEC_DRAFT_TOKENS) -> int:
    """Tokens each tensor-parallel collective of a verification step carries.

    A step verifies the ``draft_tokens`` drafted tokens of every sequence and
    the token after them in one pass, so each all-reduce carries ``draft_tokens
    + 1`` hidden vectors per sequence, however many drafts are then accepted.

    Parameters
    ----------
    sequences : int
        Sequences in the step, from 1 to 1,000,000.
    draft_tokens : int, default SPEC_DRAFT_TOKENS
        Drafted tokens per sequence and step, from 0 (plain decode) to 64.

    Returns
    -------
    int
        ``sequences * (draft_tokens + 1)``.
    """
    sequences = require_int("sequences", sequences, maximum=1_000_000)
    draft_tokens = require_int("draft_tokens", draft_tokens, minimum=0, maximum=64)
    return sequences * (draft_tokens + 1)


def speculative_crossover_sequences(
    model: ModelSpec, fabric: Fabric, n: int, draft_tokens: int = SPEC_DRAFT_TOKENS
) -> float:
    """Sequences per step at which a verification step's all-reduces turn bandwidth-bound.

    The crossover is a number of tokens per collective
    (:func:`~lesson_lib.model.collectives.crossover_tokens`); with ``draft_tokens
    + 1`` tokens per sequence it is reached by that many times fewer sequences.

    Parameters
    ----------
    model, fabric, n
        As for :func:`~lesson_lib.model.collectives.crossover_tokens` (``n`` from 2 to 4096).
    draft_tokens : int, default SPEC_DRAFT_TOKENS
        Drafted tokens per sequence and step, from 0 to 64.

    Returns
    -------
    float
        Sequences (not rounded).
    """
    draft_tokens = require_int("draft_tokens", draft_tokens, minimum=0, maximum=64)
    return crossover_tokens(model, fabric, n) / (draft_tokens + 1)
