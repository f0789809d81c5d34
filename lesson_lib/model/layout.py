"""Where a model may be cut: the divisibility rule for TP, and how PP splits the layers.

TP's degree must divide every head group and the FFN (vLLM's ``divide()``), except
that KV heads may be copied when one count divides the other (vLLM's
``num_kv_head_replicas``); PP splits the layers as vLLM's ``get_pp_indices`` does.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import replace

from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int
from lesson_lib.model.specs import ModelSpec


def check_layout(model: ModelSpec, tp: int, pp: int = 1) -> list[str]:
    """List what is wrong with cutting ``model`` into ``tp`` x ``pp`` pieces.

    Parameters
    ----------
    model : ModelSpec
    tp, pp : int
        Tensor- and pipeline-parallel degrees (``pp`` default 1), from 1 to 4096.

    Returns
    -------
    list of str
        Plain-English problems; empty when the layout is valid (TP 4 x PP 4,
        TP 8 and TP 4 x PP 3 for the specimen; TP 3 does not divide its 4 KV heads).
    """
    require_instance("model", model, ModelSpec)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    pp = require_int("pp", pp, maximum=MAX_RANKS)
    problems = []
    kv = model.num_kv_heads
    if kv % tp and tp % kv:
        problems.append(
            f"TP = {tp} does not divide the {kv} KV heads, nor they it: an engine refuses the split"
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
                f"TP = {tp} does not divide the {size} {label}: an engine refuses the split"
            )
    if pp > model.num_layers:
        problems.append(
            f"PP = {pp} exceeds the {model.num_layers} layers: some stage would hold none"
        )
    return problems


def stage_layers(model: ModelSpec, pp: int) -> tuple[int, ...]:
    """Layers per pipeline stage, as vLLM's ``get_pp_indices`` splits them by default.

    Every stage gets ``num_layers // pp``; the ``num_layers % pp`` left go one each to stages before
    the last (it holds the final norm and LM head), back from the second-to-last.

    Parameters
    ----------
    model : ModelSpec
    pp : int
        Pipeline-parallel degree, from 1 to ``model.num_layers``.

    Returns
    -------
    tuple of int
        Layers of each stage, first to last; they add up to ``model.num_layers``:
        (21, 22, 21) for the specimen at PP 3, (13, 13, 13, 13, 12) at PP 5.
    """
    require_instance("model", model, ModelSpec)
    num_layers = model.num_layers
    pp = require_int("pp", pp, maximum=num_layers)
    parts = [num_layers // pp] * pp
    for back in range(2, num_layers % pp + 2):
        parts[-back] += 1
    return tuple(parts)


def layer_kinds(model: ModelSpec) -> tuple[str, ...]:
    """Each layer's mixer, first to last: ``"attention"`` or ``"linear"``.

    The full-attention layers are spread evenly, each closing its group: in the specimen every
    fourth layer (Qwen's ``full_attention_interval`` of 4, layers 3, 7, ..., 63 counting from 0).

    Parameters
    ----------
    model : ModelSpec

    Returns
    -------
    tuple of str
        ``model.num_layers`` entries, ``model.num_attention_layers`` of them ``"attention"``.
    """
    require_instance("model", model, ModelSpec)
    a, n = model.num_attention_layers, model.num_layers
    return tuple("attention" if (i + 1) * a // n > i * a // n else "linear" for i in range(n))


def stage_layer_kinds(model: ModelSpec, pp: int) -> tuple[tuple[int, int], ...]:
    """Full-attention and linear-attention layers of each pipeline stage.

    Parameters
    ----------
    model, pp
        As for :func:`stage_layers`.

    Returns
    -------
    tuple of (int, int)
        ``(attention layers, linear layers)`` per stage, as :func:`stage_layers` cuts the layers of
        :func:`layer_kinds`: ((5, 16), (5, 17), (6, 15)) for the specimen at PP 3.
    """
    kinds, counts = layer_kinds(model), stage_layers(model, pp)
    starts = itertools.accumulate(counts, initial=0)
    stages = [kinds[start : start + count] for start, count in zip(starts, counts, strict=False)]
    return tuple((stage.count("attention"), stage.count("linear")) for stage in stages)


@functools.cache
def stage_models(model: ModelSpec, pp: int) -> tuple[ModelSpec, ...]:
    """Each pipeline stage as a model of its own layers, to size and price like a whole one.

    A stage keeps its full-attention and linear layers (as :func:`stage_layer_kinds` cuts them),
    so its KV cache, state, attention FLOPs and all-reduces are its own; it holds the parameters
    in proportion to its layers (assumed: every layer weighs the same), and of the attention
    layers its share of the sliding-window ones (the spec counts them, not where they sit).

    Parameters
    ----------
    model : ModelSpec
        A dense model.
    pp : int
        Pipeline-parallel degree, from 1 to ``model.num_layers``.

    Returns
    -------
    tuple of ModelSpec
        First stage to last; the specimen's third at PP 3 has 21 layers, 6 of them attention.
    """
    kinds = stage_layer_kinds(model, pp)
    # sliding layers spread evenly over the attention layers, the total kept
    ends = itertools.accumulate(attention for attention, _ in kinds)
    sliding = [model.num_sliding_layers * end // max(model.num_attention_layers, 1) for end in ends]
    return tuple(
        replace(
            model,
            params=model.params * (attention + linear) / model.num_layers,
            num_layers=attention + linear,
            num_attention_layers=attention,
            num_super_blocks=None,
            num_sliding_layers=upto - before,
        )
        for (attention, linear), (before, upto) in zip(
            kinds, itertools.pairwise([0, *sliding]), strict=True
        )
    )


def layout_cautions(model: ModelSpec, tp: int, pp: int = 1) -> list[str]:
    """Legal but wasteful choices in a split of ``model`` into ``tp`` x ``pp`` pieces.

    Parameters
    ----------
    model : ModelSpec
    tp : int
        Tensor-parallel degree, from 1 to 4096 (``MAX_RANKS``).
    pp : int, default 1
        Pipeline-parallel degree, from 1 to ``model.num_layers``.

    Returns
    -------
    list of str
        One sentence when ``tp`` exceeds the KV heads (each head then stored on several GPUs), one
        when the stages differ in layers or full-attention layers (the slowest sets the pace, the
        largest in a model of one kind); else empty.
    """
    require_instance("model", model, ModelSpec)
    tp = require_int("tp", tp, maximum=MAX_RANKS)
    pp = require_int("pp", pp, maximum=model.num_layers)
    cautions = []
    kv = model.num_kv_heads
    if tp > kv and not tp % kv:
        cautions.append(
            f"TP = {tp} exceeds the {kv} KV heads: each head is stored on {tp // kv} GPUs, "
            f"so each GPU's KV cache stops shrinking at TP = {kv} (legal, but memory spent "
            f"{tp // kv} times)"
        )
    kinds = stage_layer_kinds(model, pp)
    if len(set(kinds)) > 1:
        caution = f"PP = {pp} splits the {model.num_layers} layers into stages of "
        caution += _and([sum(kind) for kind in kinds])
        if model.num_attention_layers and model.num_linear_layers:
            # how much of each stage's time is KV reads depends on the context: no single number
            caution += (
                f", holding {_and([kind[0] for kind in kinds])} of the {model.num_attention_layers} "
                "full-attention layers: the slowest stage sets the pace (at long context, the "
                "one with the most KV cache)"
            )
        else:
            slower = max(stage_layers(model, pp)) * pp / model.num_layers - 1
            caution += (
                f": the largest stage sets the pace, {slower * 100:.0f} % slower than an even split"
            )
        cautions.append(caution)
    return cautions


def _and(counts: list[int]) -> str:
    """``"21, 22 and 21"``."""
    return ", ".join(str(c) for c in counts[:-1]) + f" and {counts[-1]}"
