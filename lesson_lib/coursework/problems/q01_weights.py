"""Problem q1: weights of a pure-attention model."""

from __future__ import annotations

import math
from dataclasses import replace

from lesson_lib.coursework.problems.bank import (
    Mistake,
    Params,
    Problem,
    fmt_bytes,
    pure_attention_model,
)
from lesson_lib.coursework.variants import pick
from lesson_lib.model.specimen import GPU
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.units import GB, format_count

#: Sizes a variant draws from: 7.0 to 80.0 billion parameters in steps of 0.1 billion,
#: so that 150 students get well over 100 different answers. Only the parameter
#: count enters the answer; the 70B shape stands in for the rest of the model.
BILLIONS_TENTHS = range(70, 801)


def _model(p: Params) -> ModelSpec:
    return replace(
        pure_attention_model(70),
        name=f"{p['billions']:g}B pure-attention model",
        params=p["billions"] * 1e9,
    )


def _facts(p: Params) -> dict[str, str]:
    m = _model(p)
    return {
        "params": format_count(m.params / 1e9, decimals=1) + " billion",
        "dtype": str(m.dtype_bytes),
        "weights_gb": fmt_bytes(m.weight_bytes, "GB"),
        "weights_gib": fmt_bytes(m.weight_bytes, "GiB"),
        "gpu": fmt_bytes(GPU.memory_bytes, "GB"),
        "gpus_needed": str(math.ceil(m.weight_bytes / GPU.memory_bytes)),
    }


def _mistakes(p: Params) -> list[Mistake]:
    m = _model(p)
    return [
        Mistake(
            "params-as-gb",
            m.params / GB,
            "That is the number of parameters in billions: each bf16 weight takes "
            f"{m.dtype_bytes} bytes.",
        )
    ]


PROBLEM = Problem(
    qid="q1",
    title="Weights of a pure-attention model",
    chapter="sizing",
    difficulty=1,
    unit="GB",
    decimals=1,
    close_rtol=0.02,
    template=(
        "A pure-attention model has {params} parameters stored in bf16 ({dtype} bytes "
        "per weight). How much memory do its weights take, in **GB** (decimal, "
        "10\u2079 bytes)?"
    ),
    solution_template=(
        "Weights = parameters x bytes per weight = {params} x {dtype} B = "
        "**{weights_gb}** (that is {weights_gib} in binary units). On {gpu} cards the "
        "weights alone need at least {gpus_needed} GPU(s), before any KV cache."
    ),
    defaults={"billions": 70},
    sample=lambda rng: {"billions": pick(rng, BILLIONS_TENTHS) / 10},
    facts=_facts,
    reference=lambda p: _model(p).weight_bytes / GB,
    mistakes=_mistakes,
    hint="Multiply the number of parameters by the bytes per weight, then divide by 1e9.",
)
