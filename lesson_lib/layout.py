"""Where a model may be cut: the divisibility rule for TP and PP.

Tensor parallelism gives each rank an equal slice of every head group and of
the FFN, so its degree must divide each of them; pipeline parallelism gives
each stage whole super-blocks, so its degree must divide their number.
"""

from __future__ import annotations

from lesson_lib._validate import require_int
from lesson_lib.specs import ModelSpec


def check_layout(model: ModelSpec, tp: int, pp: int = 1) -> list[str]:
    """List what is wrong with cutting ``model`` into ``tp`` x ``pp`` pieces.

    Parameters
    ----------
    model : ModelSpec
        The model.
    tp : int
        Tensor-parallel degree (>= 1).
    pp : int, default 1
        Pipeline-parallel degree (>= 1).

    Returns
    -------
    list of str
        Plain-English problems; empty when the layout is valid.

    Examples
    --------
    >>> from lesson_lib.specimen import MODEL
    >>> check_layout(MODEL, 4, 4)
    []
    >>> check_layout(MODEL, 8)[0]
    'TP = 8 does not divide the 4 KV heads: KV heads would be replicated or split unevenly'
    """
    tp = require_int("tp", tp)
    pp = require_int("pp", pp)
    problems = []
    groups = [
        ("KV heads", model.num_kv_heads),
        ("query heads", model.num_query_heads),
        ("DeltaNet key heads", model.linear_num_key_heads or None),
        ("DeltaNet value heads", model.linear_num_value_heads or None),
        ("FFN intermediate size", model.ffn_size),
    ]
    for label, size in groups:
        if size is not None and size % tp:
            what = "replicated or split unevenly" if label == "KV heads" else "split unevenly"
            problems.append(
                f"TP = {tp} does not divide the {size} {label}: {label} would be {what}"
            )
    blocks = model.super_blocks
    if blocks % pp:
        problems.append(
            f"PP = {pp} does not divide the {blocks} super-blocks: stages would be unequal"
        )
    return problems
