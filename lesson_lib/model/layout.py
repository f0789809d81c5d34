"""Where a model may be cut: the divisibility rule for TP and PP.

Tensor parallelism gives each rank an equal slice of every head group and of
the FFN, so its degree must divide each of them; pipeline parallelism gives
each stage whole super-blocks, so its degree must divide their number.

KV heads are the exception that serving engines make legal: with more ranks
than KV heads, each head is copied to the ranks that share it (vLLM's
``QKVParallelLinear`` keeps ``num_kv_head_replicas = tp_size / num_kv_heads``).
That works whenever one of the two counts divides the other, and wastes KV
memory: :func:`layout_cautions` says so, :func:`check_layout` does not
forbid it.
"""

from __future__ import annotations

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int
from lesson_lib.model.specs import ModelSpec


def check_layout(model: ModelSpec, tp: int, pp: int = 1) -> list[str]:
    """List what is wrong with cutting ``model`` into ``tp`` x ``pp`` pieces.

    Parameters
    ----------
    model : ModelSpec
        The model.
    tp : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).
    pp : int, default 1
        Pipeline-parallel degree, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    list of str
        Plain-English problems; empty when the layout is valid.

    Examples
    --------
    >>> from lesson_lib.model.specimen import MODEL
    >>> check_layout(MODEL, 4, 4)
    []
    >>> check_layout(MODEL, 8)
    []
    >>> check_layout(MODEL, 3)[0]
    'TP = 3 does not divide the 4 KV heads, nor they it: KV heads would be split unevenly'
    """
    require_instance("model", model, ModelSpec)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    pp = require_int("pp", pp, maximum=MAX_RANKS)
    problems = []
    kv = model.num_kv_heads
    if kv % tp and tp % kv:
        problems.append(
            f"TP = {tp} does not divide the {kv} KV heads, nor they it: "
            "KV heads would be split unevenly"
        )
    groups = [
        ("query heads", model.num_query_heads),
        ("DeltaNet key heads", model.linear_num_key_heads or None),
        ("DeltaNet value heads", model.linear_num_value_heads or None),
        ("FFN intermediate channels", model.ffn_size),
    ]
    for label, size in groups:
        if size is not None and size % tp:
            problems.append(
                f"TP = {tp} does not divide the {size} {label}: they would be split unevenly"
            )
    blocks = model.super_blocks
    if blocks % pp:
        problems.append(
            f"PP = {pp} does not divide the {blocks} super-blocks: stages would be unequal"
        )
    return problems


def layout_cautions(model: ModelSpec, tp: int) -> list[str]:
    """Legal but wasteful choices in a tensor-parallel split of ``model``.

    Parameters
    ----------
    model : ModelSpec
        The model.
    tp : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).

    Returns
    -------
    list of str
        Empty, or one sentence when ``tp`` exceeds the KV heads and each head
        is therefore stored on several GPUs.

    Examples
    --------
    >>> from lesson_lib.model.specimen import MODEL
    >>> layout_cautions(MODEL, 8)[0][:52]
    'TP = 8 exceeds the 4 KV heads: each head is stored o'
    """
    require_instance("model", model, ModelSpec)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    kv = model.num_kv_heads
    if tp <= kv or tp % kv:
        return []
    return [
        f"TP = {tp} exceeds the {kv} KV heads: each head is stored on {tp // kv} GPUs, "
        f"so each GPU's KV cache stops shrinking at TP = {kv} (legal, but memory spent "
        f"{tp // kv} times)"
    ]
