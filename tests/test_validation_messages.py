"""Every model function names the bad argument first in its error message.

For each public function of the model modules, each numeric argument in turn
is replaced by NaN (a float) or a string (an integer) while the others stay
valid; the error must start with ``"<name> must be"``, the parameter's own
name. (``match=name`` alone would also accept a message that merely contains
it.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from model_functions import model_functions

from lesson_lib.chapters.kv_transfer import disaggregated_rows, link_rows, workload_rows
from lesson_lib.chapters.payloads import payload_numbers, payload_table
from lesson_lib.chapters.prefill import regime_rows
from lesson_lib.model.collectives import (
    allreduce_factor,
    allreduce_latency,
    allreduce_steps,
    allreduce_time,
    allreduce_wire_bytes,
    alltoall_time,
    alltoall_wire_bytes,
    collective_steps,
    collective_time,
    collective_wire_bytes,
    crossover_bytes,
    crossover_tokens,
    ring_allreduce_factor,
)
from lesson_lib.model.context_parallel import max_dcp
from lesson_lib.model.kv_links import collective_latency_per_token, colocated_stall_per_token
from lesson_lib.model.kv_transfer import (
    causal_attention_flops,
    context_parallel_max_sequences,
    context_parallel_prefill,
    context_parallel_sequence_bytes,
    handoff,
    kv_transfer_bytes,
    kv_transfer_time,
    prefill_time,
    requests_per_second,
    ring_attention_min_chunk,
    ring_attention_step,
    sharded_transfer,
)
from lesson_lib.model.latency import (
    allreduce_anatomy,
    break_even_latency,
    buyer_answers,
    peak_n,
    speedup_curve,
    token_timeline,
)
from lesson_lib.model.layout import (
    check_layout,
    layout_cautions,
    stage_layer_kinds,
    stage_layers,
    stage_models,
)
from lesson_lib.model.memory import kv_share, max_sequences, memory_budget, state_share
from lesson_lib.model.moe import (
    _experts_touched,
    _local_batch,
    alltoall_crossover_tokens,
    dcp_collectives,
    moe_decode_step,
    sequences_that_fit,
    weights_per_gpu,
)
from lesson_lib.model.payloads import decode_wire_bytes, decode_wire_rate, headroom, tokens_to_fill
from lesson_lib.model.prefill import per_token, place_on_curve, prefill_message_bytes
from lesson_lib.model.presets import PRESETS
from lesson_lib.model.ring import simulate_ring_allreduce
from lesson_lib.model.specimen import FAST, FAST_RING, GPU, H200, INTER_NODE, MODEL
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import decode_step, prefill_step
from lesson_lib.model.units import (
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)

MODULES = [
    "model.units",
    "model.collectives",
    "model.memory",
    "model.step_time",
    "model.layout",
    "model.kv_transfer",
    "model.context_parallel",
    "model.moe",
    "chapters.payloads",
    "model.payloads",
    "chapters.prefill",
    "model.prefill",
    "chapters.latency",
    "model.latency",
    "chapters.kv_transfer",
    "model.kv_links",
]


def cases():
    """(function, parameter name, bad value) for every numeric parameter we can fill."""
    for name, function, params, args in model_functions(MODULES):
        for p in params:
            kind = str(p.annotation).removesuffix(" | None")
            if kind in ("int", "float") and not isinstance(args[p.name], bool):
                bad = math.nan if kind == "float" else "four"
                yield pytest.param(function, args, p.name, bad, id=f"{name}-{p.name}")


CASES = list(cases())


def test_the_cases_cover_the_model():
    """The generic cases reach most model functions (not an empty parametrisation)."""
    assert len({c.values[0] for c in CASES}) >= 12


@pytest.mark.parametrize(("function", "args", "name", "bad"), CASES)
def test_message_starts_with_the_parameter(function, args, name, bad):
    """A bad value of one argument raises an error that starts by naming it."""
    with pytest.raises((TypeError, ValueError)) as info:
        function(**{**args, name: bad})
    assert str(info.value).startswith(f"{name} must be"), str(info.value)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: ModelSpec(**{**vars(MODEL), "params": -1.0}), "params"),
        (lambda: ModelSpec(**{**vars(MODEL), "hidden_size": 0}), "hidden_size"),
        (lambda: ModelSpec(**{**vars(MODEL), "num_layers": 0}), "num_layers"),
        (lambda: ModelSpec(**{**vars(MODEL), "head_dim": 0}), "head_dim"),
        (lambda: ModelSpec(**{**vars(MODEL), "max_context": 0}), "max_context"),
        (lambda: Accelerator("x", -1.0, 1.0, 1.0), "memory_bytes"),
        (lambda: Accelerator("x", 1.0, 0.0, 1.0), "hbm_bandwidth"),
        (lambda: Accelerator("x", 1.0, 1.0, 0.0), "peak_flops"),
        (lambda: Fabric("x", -1.0, 1.0), "latency"),
        (lambda: Fabric("x", 1.0, 0.0), "bandwidth"),
    ],
)
def test_specs_name_the_bad_field(build, name):
    """A model, card or fabric with a bad field names that field first."""
    with pytest.raises((TypeError, ValueError)) as info:
        build()
    assert str(info.value).startswith(f"{name} must be"), str(info.value)


# --- every parameter at the edges of its range ---------------------------------------------------
#
# One row per public numeric parameter of the model modules, written from its
# docstring (for the dataclasses, from the rule in the class docstring), not
# from the code: the smallest allowed value is accepted and the one just below
# it refused, and where there is a maximum, the maximum is accepted and the
# next value refused. Each refusal must name the parameter, its range and its
# unit in _validate's words: "<name> must be an integer from A to B" for a
# count, "<name> must be > A <unit>" for a quantity.

INT_1 = "an integer >= 1"
INT_0 = "an integer >= 0"
RANKS = "an integer from 1 to 4096"  # MAX_RANKS
RANKS_2 = "an integer from 2 to 4096"  # collectives between at least two ranks
CONTEXT_0 = "an integer from 0 to 262144"  # the specimen's max_context
CONTEXT_1 = "an integer from 1 to 262144"
DECIMALS = "an integer from 0 to 12"
LAYERS = "an integer from 1 to 64"  # the specimen's layers


@dataclass(frozen=True)
class Edge:
    """A parameter's allowed range: the last value in and the first one out at each end."""

    function: str
    name: str
    call: Callable[[Any], object]
    allowed: str
    low: Any  # smallest allowed value (None: no value to try, see the row's comment)
    below: Any
    high: Any = None
    above: Any = None


#: An MoE model with 8 experts of which each token visits 2, 32,768 tokens of context.
MIXTRAL = PRESETS["Mixtral-8x7B"]
DEEPSEEK = PRESETS["DeepSeek-V3"]
EXPERTS = "an integer from 1 to 8"  # EP holds at least one of Mixtral's 8 experts a rank
BATCH = "an integer from 1 to 65536"  # MAX_BATCH

#: Pure attention (every layer full attention), so the linear-attention fields may be 0.
PURE = ModelSpec(**{**vars(MODEL), "num_attention_layers": MODEL.num_layers})


def spec(**fields):
    return ModelSpec(**{**vars(PURE), **fields})


def hybrid(**fields):
    return ModelSpec(**{**vars(MODEL), **fields})


EDGES = [
    # units
    Edge("format_bytes", "nbytes", lambda v: format_bytes(v), ">= 0 bytes", 0.0, -1e-9),
    Edge(
        "format_bytes", "decimals", lambda v: format_bytes(1.0, decimals=v), DECIMALS, 0, -1, 12, 13
    ),
    Edge("format_rate", "bytes_per_s", lambda v: format_rate(v), ">= 0 bytes/s", 0.0, -1e-9),
    Edge(
        "format_rate", "decimals", lambda v: format_rate(1.0, decimals=v), DECIMALS, 0, -1, 12, 13
    ),
    Edge("format_seconds", "seconds", lambda v: format_seconds(v), ">= 0 s", 0.0, -1e-9),
    Edge(
        "format_seconds",
        "decimals",
        lambda v: format_seconds(1.0, decimals=v),
        DECIMALS,
        0,
        -1,
        12,
        13,
    ),
    Edge("format_ratio", "ratio", lambda v: format_ratio(v), ">= 0", 0.0, -1e-9),
    Edge(
        "format_ratio", "decimals", lambda v: format_ratio(1.0, decimals=v), DECIMALS, 0, -1, 12, 13
    ),
    Edge(
        "format_count", "decimals", lambda v: format_count(1.0, decimals=v), DECIMALS, 0, -1, 12, 13
    ),
    # specs: ModelSpec's fields, then the card and the fabric
    Edge("ModelSpec", "params", lambda v: spec(params=v), "> 0", 1e-9, 0.0),
    Edge("ModelSpec", "hidden_size", lambda v: spec(hidden_size=v), INT_1, 1, 0),
    Edge(
        "ModelSpec",
        "num_layers",
        lambda v: spec(num_layers=v, num_attention_layers=v, num_super_blocks=None),
        INT_1,
        1,
        0,
    ),
    Edge(
        "ModelSpec",
        "num_attention_layers",  # 0 to num_layers (64); 0 is all DeltaNet
        lambda v: hybrid(num_attention_layers=v),
        "an integer from 0 to 64",
        0,
        -1,
        64,
        65,
    ),
    Edge("ModelSpec", "num_kv_heads", lambda v: spec(num_kv_heads=v), INT_1, 1, 0),
    Edge("ModelSpec", "head_dim", lambda v: spec(head_dim=v), INT_1, 1, 0),
    Edge("ModelSpec", "max_context", lambda v: spec(max_context=v), INT_1, 1, 0),
    Edge("ModelSpec", "dtype_bytes", lambda v: spec(dtype_bytes=v), INT_1, 1, 0),
    Edge("ModelSpec", "num_query_heads", lambda v: spec(num_query_heads=v), INT_1, 1, 0),
    Edge("ModelSpec", "linear_num_key_heads", lambda v: spec(linear_num_key_heads=v), INT_0, 0, -1),
    Edge(
        "ModelSpec",
        "linear_num_value_heads",
        lambda v: spec(linear_num_value_heads=v),
        INT_0,
        0,
        -1,
    ),
    Edge("ModelSpec", "linear_key_head_dim", lambda v: spec(linear_key_head_dim=v), INT_0, 0, -1),
    Edge(
        "ModelSpec", "linear_value_head_dim", lambda v: spec(linear_value_head_dim=v), INT_0, 0, -1
    ),
    Edge("ModelSpec", "linear_conv_kernel", lambda v: spec(linear_conv_kernel=v), INT_0, 0, -1),
    Edge("ModelSpec", "state_dtype_bytes", lambda v: spec(state_dtype_bytes=v), INT_1, 1, 0),
    Edge("ModelSpec", "ffn_size", lambda v: spec(ffn_size=v), INT_1, 1, 0),
    Edge("ModelSpec", "num_super_blocks", lambda v: spec(num_super_blocks=v), INT_1, 1, 0),
    Edge("ModelSpec", "allreduces_per_layer", lambda v: spec(allreduces_per_layer=v), INT_0, 0, -1),
    Edge("ModelSpec", "vocab_size", lambda v: spec(vocab_size=v), INT_1, 1, 0),
    Edge("ModelSpec", "weight_dtype_bytes", lambda v: spec(weight_dtype_bytes=v), INT_1, 1, 0),
    Edge("ModelSpec", "kv_lora_rank", lambda v: spec(kv_lora_rank=v), INT_0, 0, -1),
    Edge("ModelSpec", "qk_rope_head_dim", lambda v: spec(qk_rope_head_dim=v), INT_0, 0, -1),
    Edge("ModelSpec", "num_experts", lambda v: spec(num_experts=v), INT_0, 0, -1),
    Edge("ModelSpec", "num_shared_experts", lambda v: spec(num_shared_experts=v), INT_0, 0, -1),
    Edge("ModelSpec", "mtp_layers", lambda v: spec(mtp_layers=v), INT_0, 0, -1),
    # an MoE model's top-k runs from 1 to its experts (8 here), its MoE layers to num_layers
    Edge(
        "ModelSpec",
        "experts_per_token",
        lambda v: spec(num_experts=8, experts_per_token=v, num_moe_layers=1, expert_params=1.0),
        "an integer from 1 to 8",
        1,
        0,
        8,
        9,
    ),
    Edge(
        "ModelSpec",
        "num_moe_layers",
        lambda v: spec(num_experts=8, experts_per_token=2, num_moe_layers=v, expert_params=1.0),
        "an integer from 1 to 64",
        1,
        0,
        64,
        65,
    ),
    Edge("kv_bytes", "context_tokens", MODEL.kv_bytes, CONTEXT_0, 0, -1, 262_144, 262_145),
    Edge(
        "Accelerator",
        "memory_bytes",
        lambda v: Accelerator("x", v, 1.0, 1.0),
        "> 0 bytes",
        1e-9,
        0.0,
    ),
    Edge(
        "Accelerator",
        "hbm_bandwidth",
        lambda v: Accelerator("x", 1.0, v, 1.0),
        "> 0 bytes/s",
        1e-9,
        0.0,
    ),
    Edge(
        "Accelerator",
        "peak_flops",
        lambda v: Accelerator("x", 1.0, 1.0, v),
        "> 0 FLOP/s",
        1e-9,
        0.0,
    ),
    Edge("Fabric", "latency", lambda v: Fabric("x", v, 1.0), ">= 0 s", 0.0, -1e-9),
    Edge("Fabric", "bandwidth", lambda v: Fabric("x", 0.0, v), "> 0 bytes/s", 1e-9, 0.0),
    Edge("Fabric", "hop_latency", lambda v: Fabric("x", 0.0, 1.0, v), ">= 0 s", 0.0, -1e-9),
    # collectives
    Edge("allreduce_factor", "n", allreduce_factor, RANKS, 1, 0, 4096, 4097),
    Edge("allreduce_steps", "n", allreduce_steps, RANKS, 1, 0, 4096, 4097),
    Edge("ring_allreduce_factor", "n", ring_allreduce_factor, RANKS, 1, 0, 4096, 4097),
    Edge(
        "allreduce_wire_bytes",
        "payload_bytes",
        lambda v: allreduce_wire_bytes(v, 2),
        ">= 0 bytes",
        0.0,
        -1e-9,
    ),
    Edge(
        "allreduce_wire_bytes", "n", lambda v: allreduce_wire_bytes(1.0, v), RANKS, 1, 0, 4096, 4097
    ),
    Edge("allreduce_latency", "n", lambda v: allreduce_latency(v, FAST), RANKS, 1, 0, 4096, 4097),
    Edge(
        "allreduce_time",
        "payload_bytes",
        lambda v: allreduce_time(v, 2, FAST),
        ">= 0 bytes",
        0.0,
        -1e-9,
    ),
    Edge("allreduce_time", "n", lambda v: allreduce_time(1.0, v, FAST), RANKS, 1, 0, 4096, 4097),
    Edge("crossover_bytes", "n", lambda v: crossover_bytes(FAST, v), RANKS_2, 2, 1, 4096, 4097),
    Edge(
        "crossover_tokens",
        "n",
        lambda v: crossover_tokens(MODEL, FAST, v),
        RANKS_2,
        2,
        1,
        4096,
        4097,
    ),
    # every collective: a payload >= 0 bytes over 1 to 4096 ranks
    *(
        edge
        for function, payload, ranks in (
            (
                "alltoall_wire_bytes",
                lambda v: alltoall_wire_bytes(v, 2),
                lambda n: alltoall_wire_bytes(1.0, n),
            ),
            (
                "alltoall_time",
                lambda v: alltoall_time(v, 2, FAST),
                lambda n: alltoall_time(1.0, n, FAST),
            ),
            (
                "collective_wire_bytes",
                lambda v: collective_wire_bytes("all_to_all", v, 2),
                lambda n: collective_wire_bytes("all_to_all", 1.0, n),
            ),
            (
                "collective_time",
                lambda v: collective_time("all_gather", v, 2, FAST),
                lambda n: collective_time("all_gather", 1.0, n, FAST),
            ),
        )
        for edge in (
            Edge(function, "payload_bytes", payload, ">= 0 bytes", 0.0, -1e-9),
            Edge(function, "n", ranks, RANKS, 1, 0, 4096, 4097),
        )
    ),
    Edge(
        "collective_steps",
        "n",
        lambda v: collective_steps("all_to_all", v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    # ring: two ranks make 2 (N - 1) = 2 steps
    Edge(
        "bytes_sent_after",
        "step",
        simulate_ring_allreduce([np.ones(4), np.ones(4)]).bytes_sent_after,
        "an integer from 0 to 2",
        0,
        -1,
        2,
        3,
    ),
    # memory
    Edge("kv_share", "n", lambda v: kv_share(MODEL, v), RANKS, 1, 0, 4096, 4097),
    Edge("state_share", "n", lambda v: state_share(MODEL, v), RANKS, 1, 0, 4096, 4097),
    Edge(
        "memory_budget", "n", lambda v: memory_budget(MODEL, GPU, v, 1, 1), RANKS, 1, 0, 4096, 4097
    ),
    Edge(
        "memory_budget",
        "context_tokens",
        lambda v: memory_budget(MODEL, GPU, 1, v, 1),
        CONTEXT_0,
        0,
        -1,
        262_144,
        262_145,
    ),
    Edge(
        "memory_budget",
        "sequences",  # MAX_SEQUENCES
        lambda v: memory_budget(MODEL, GPU, 1, 1, v),
        "an integer from 0 to 1000000",
        0,
        -1,
        1_000_000,
        1_000_001,
    ),
    Edge(
        "memory_budget",
        "utilization",
        lambda v: memory_budget(MODEL, GPU, 1, 1, 1, utilization=v),
        "> 0 and <= 1",
        1e-9,
        0.0,
        1.0,
        1.0 + 1e-9,
    ),
    Edge("max_sequences", "n", lambda v: max_sequences(MODEL, GPU, v, 1), RANKS, 1, 0, 4096, 4097),
    Edge(
        "max_sequences",
        "context_tokens",  # 0 tokens would fit infinitely many sequences
        lambda v: max_sequences(MODEL, GPU, 1, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "max_sequences",
        "utilization",
        lambda v: max_sequences(MODEL, GPU, 1, 1, utilization=v),
        "> 0 and <= 1",
        1e-9,
        0.0,
        1.0,
        1.0 + 1e-9,
    ),
    # step_time
    Edge("decode_step", "n", lambda v: decode_step(MODEL, GPU, FAST, v), RANKS, 1, 0, 4096, 4097),
    Edge(
        "decode_step",
        "batch",  # MAX_BATCH
        lambda v: decode_step(MODEL, GPU, FAST, 1, batch=v),
        "an integer from 1 to 65536",
        1,
        0,
        65_536,
        65_537,
    ),
    Edge(
        "buyer_answers",
        "context",
        lambda v: buyer_answers(context=v),
        "an integer from 1 to 262144",
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "decode_step",
        "context",
        lambda v: decode_step(MODEL, GPU, FAST, 1, context=v),
        CONTEXT_0,
        0,
        -1,
        262_144,
        262_145,
    ),
    Edge(
        "prefill_step", "n", lambda v: prefill_step(MODEL, GPU, FAST, v, 1), RANKS, 1, 0, 4096, 4097
    ),
    Edge(
        "prefill_step",
        "prompt_tokens",
        lambda v: prefill_step(MODEL, GPU, FAST, 1, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    # kv_transfer: a cache of at least one token, up to the specimen's context
    Edge(
        "kv_transfer_bytes",
        "context",
        lambda v: kv_transfer_bytes(MODEL, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "kv_transfer_time",
        "context",
        lambda v: kv_transfer_time(MODEL, v, INTER_NODE),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "requests_per_second",
        "context",
        lambda v: requests_per_second(MODEL, v, INTER_NODE),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "causal_attention_flops",
        "tokens",
        lambda v: causal_attention_flops(MODEL, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "prefill_time", "n", lambda v: prefill_time(MODEL, GPU, FAST, v, 1), RANKS, 1, 0, 4096, 4097
    ),
    Edge(
        "prefill_time",
        "prompt_tokens",
        lambda v: prefill_time(MODEL, GPU, FAST, 1, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "sharded_transfer",
        "context",
        lambda v: sharded_transfer(MODEL, v, INTER_NODE, 4, 4),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "sharded_transfer",
        "prefill_gpus",
        lambda v: sharded_transfer(MODEL, 1, INTER_NODE, v, 4),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "sharded_transfer",
        "decode_gpus",
        lambda v: sharded_transfer(MODEL, 1, INTER_NODE, 4, v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    # DCP reaches tp / kv_heads: 2 on 8 decode GPUs with 4 KV heads
    Edge(
        "sharded_transfer",
        "dcp",
        lambda v: sharded_transfer(MODEL, 1, INTER_NODE, 4, 8, dcp=v),
        "an integer from 1 to 2",
        1,
        0,
        2,
        3,
    ),
    Edge(
        "handoff",
        "prompt_tokens",
        lambda v: handoff(MODEL, GPU, FAST, INTER_NODE, v, 4, 4),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "handoff",
        "prefill_gpus",
        lambda v: handoff(MODEL, GPU, FAST, INTER_NODE, 1, v, 4),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "handoff",
        "decode_gpus",
        lambda v: handoff(MODEL, GPU, FAST, INTER_NODE, 1, 4, v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "handoff",
        "dcp",
        lambda v: handoff(MODEL, GPU, FAST, INTER_NODE, 1, 4, 8, dcp=v),
        "an integer from 1 to 2",
        1,
        0,
        2,
        3,
    ),
    Edge(
        "ring_attention_step",
        "context",
        lambda v: ring_attention_step(MODEL, GPU, INTER_NODE, v, 2),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    # a ring needs two GPUs
    Edge(
        "ring_attention_step",
        "cp",
        lambda v: ring_attention_step(MODEL, GPU, INTER_NODE, 4096, v),
        RANKS_2,
        2,
        1,
        4096,
        4097,
    ),
    Edge(
        "ring_attention_step",
        "tp",
        lambda v: ring_attention_step(MODEL, GPU, INTER_NODE, 4096, 2, tp=v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "ring_attention_min_chunk",
        "tp",
        lambda v: ring_attention_min_chunk(MODEL, GPU, INTER_NODE, tp=v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "context_parallel_prefill",
        "prompt_tokens",
        lambda v: context_parallel_prefill(MODEL, GPU, FAST, INTER_NODE, v, 2),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "context_parallel_prefill",
        "cp",
        lambda v: context_parallel_prefill(MODEL, GPU, FAST, INTER_NODE, 4096, v),
        RANKS_2,
        2,
        1,
        4096,
        4097,
    ),
    Edge(
        "context_parallel_prefill",
        "tp",
        lambda v: context_parallel_prefill(MODEL, GPU, FAST, INTER_NODE, 4096, 2, tp=v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    # the KV-transfer chapter
    Edge("link_rows", "prompt_tokens", link_rows, CONTEXT_1, 1, 0, 262_144, 262_145),
    Edge(
        "disaggregated_rows",
        "prefill_tp",
        lambda v: disaggregated_rows(prefill_tp=v),
        "an integer from 1 to 4096",
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "disaggregated_rows",
        "decode_tp",
        lambda v: disaggregated_rows(decode_tp=v),
        "an integer from 1 to 4096",
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "colocated_stall_per_token",
        "prefill_s",
        lambda v: colocated_stall_per_token(v, 1, 1),
        ">= 0 s",
        0.0,
        -1e-9,
    ),
    Edge(
        "colocated_stall_per_token",
        "batch",  # MAX_BATCH
        lambda v: colocated_stall_per_token(1.0, v, 1),
        "an integer from 1 to 65536",
        1,
        0,
        65_536,
        65_537,
    ),
    Edge(
        "colocated_stall_per_token",
        "output_tokens",
        lambda v: colocated_stall_per_token(1.0, 1, v),
        "an integer from 1 to 10000000",  # MAX_OUTPUT_TOKENS
        1,
        0,
        10_000_000,
        10_000_001,
    ),
    Edge(
        "workload_rows",
        "batch",
        lambda v: workload_rows(((1, 1),), v),
        "an integer from 1 to 65536",
        1,
        0,
        65_536,
        65_537,
    ),
    # the TP all-reduces need two ranks; DCP reaches tp / kv_heads
    Edge(
        "collective_latency_per_token",
        "tp",
        lambda v: collective_latency_per_token(MODEL, v),
        RANKS_2,
        2,
        1,
        4096,
        4097,
    ),
    Edge(
        "collective_latency_per_token",
        "dcp",
        lambda v: collective_latency_per_token(MODEL, 8, v),
        "an integer from 1 to 2",
        1,
        0,
        2,
        3,
    ),
    Edge("max_dcp", "tp", lambda v: max_dcp(MODEL, v), RANKS, 1, 0, 4096, 4097),
    Edge(
        "context_parallel_sequence_bytes",
        "context",
        lambda v: context_parallel_sequence_bytes(MODEL, v, 8),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "context_parallel_sequence_bytes",
        "tp",
        lambda v: context_parallel_sequence_bytes(MODEL, 1, v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "context_parallel_sequence_bytes",
        "dcp",
        lambda v: context_parallel_sequence_bytes(MODEL, 1, 8, v),
        "an integer from 1 to 2",
        1,
        0,
        2,
        3,
    ),
    Edge(
        "context_parallel_max_sequences",
        "context",
        lambda v: context_parallel_max_sequences(MODEL, GPU, v, 8),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "context_parallel_max_sequences",
        "tp",
        lambda v: context_parallel_max_sequences(MODEL, GPU, 1, v),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "context_parallel_max_sequences",
        "dcp",
        lambda v: context_parallel_max_sequences(MODEL, GPU, 1, 8, v),
        "an integer from 1 to 2",
        1,
        0,
        2,
        3,
    ),
    # layout
    Edge("check_layout", "tp", lambda v: check_layout(MODEL, v), RANKS, 1, 0, 4096, 4097),
    Edge("check_layout", "pp", lambda v: check_layout(MODEL, 1, v), RANKS, 1, 0, 4096, 4097),
    Edge("layout_cautions", "tp", lambda v: layout_cautions(MODEL, v), RANKS, 1, 0, 4096, 4097),
    # a pipeline stage holds at least one of the specimen's 64 layers
    Edge("layout_cautions", "pp", lambda v: layout_cautions(MODEL, 1, v), LAYERS, 1, 0, 64, 65),
    Edge("stage_layers", "pp", lambda v: stage_layers(MODEL, v), LAYERS, 1, 0, 64, 65),
    Edge("stage_layer_kinds", "pp", lambda v: stage_layer_kinds(MODEL, v), LAYERS, 1, 0, 64, 65),
    Edge("stage_models", "pp", lambda v: stage_models(MODEL, v), LAYERS, 1, 0, 64, 65),
    # payloads
    Edge("decode_wire_bytes", "n", lambda v: decode_wire_bytes(MODEL, v), RANKS, 1, 0, 4096, 4097),
    Edge(
        "decode_wire_rate", "n", lambda v: decode_wire_rate(MODEL, v, 50.0), RANKS, 1, 0, 4096, 4097
    ),
    Edge(
        "decode_wire_rate",
        "tokens_per_s",
        lambda v: decode_wire_rate(MODEL, 2, v),
        ">= 0 tokens/s",
        0.0,
        -1e-9,
    ),
    Edge("headroom", "bandwidth", lambda v: headroom(v, 1.0), "> 0 bytes/s", 1e-9, 0.0),
    Edge("headroom", "rate", lambda v: headroom(1.0, v), "> 0 bytes/s", 1e-9, 0.0),
    Edge("tokens_to_fill", "n", lambda v: tokens_to_fill(MODEL, v, 1e9), RANKS_2, 2, 1, 4096, 4097),
    Edge(
        "tokens_to_fill",
        "bandwidth",
        lambda v: tokens_to_fill(MODEL, 2, v),
        "> 0 bytes/s",
        1e-9,
        0.0,
    ),
    Edge(
        "payload_numbers",
        "tokens_per_s",  # a rate of 0 would leave no headroom to divide by
        lambda v: payload_numbers(tokens_per_s=v),
        "> 0 tokens/s",
        1e-9,
        0.0,
    ),
    Edge("payload_table", "n", lambda v: payload_table(ns=(v,)), RANKS, 1, 0, 4096, 4097),
    Edge(
        "payload_table",
        "tokens_per_s",
        lambda v: payload_table(tokens_per_s=v),
        ">= 0 tokens/s",
        0.0,
        -1e-9,
    ),
    # prefill
    Edge(
        "place_on_curve",
        "payload_bytes",
        lambda v: place_on_curve(v, 2, FAST),
        "> 0 bytes",
        1e-9,
        0.0,
    ),
    Edge("place_on_curve", "n", lambda v: place_on_curve(1.0, v, FAST), RANKS_2, 2, 1, 4096, 4097),
    Edge(
        "prefill_message_bytes",
        "prompt_tokens",
        lambda v: prefill_message_bytes(MODEL, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge("per_token", "n", lambda v: per_token(MODEL, GPU, FAST, v, 1), RANKS, 1, 0, 4096, 4097),
    Edge(
        "per_token",
        "prompt_tokens",
        lambda v: per_token(MODEL, GPU, FAST, 1, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    Edge(
        "regime_rows", "n", lambda v: regime_rows(MODEL, GPU, FAST, v, 1), RANKS_2, 2, 1, 4096, 4097
    ),
    Edge(
        "regime_rows",
        "prompt_tokens",
        lambda v: regime_rows(MODEL, GPU, FAST, 2, v),
        CONTEXT_1,
        1,
        0,
        262_144,
        262_145,
    ),
    # moe: Mixtral, 8 experts, top-2; under EP each rank holds at least one expert
    Edge(
        "experts_touched",
        "num_experts",
        lambda v: _experts_touched(v, 1, 1),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "experts_touched",
        "experts_per_token",
        lambda v: _experts_touched(8, v, 1),
        EXPERTS,
        1,
        0,
        8,
        9,
    ),
    Edge(
        "experts_touched",
        "tokens",
        lambda v: _experts_touched(8, 2, v),
        "an integer from 0 to 65536",
        0,
        -1,
        65_536,
        65_537,
    ),
    Edge("local_batch", "batch", lambda v: _local_batch(v, 8, "ep"), BATCH, 1, 0, 65_536, 65_537),
    Edge("local_batch", "n", lambda v: _local_batch(8, v, "ep"), RANKS, 1, 0, 4096, 4097),
    Edge("weights_per_gpu", "n", lambda v: weights_per_gpu(MIXTRAL, v, "ep"), EXPERTS, 1, 0, 8, 9),
    Edge(
        "weights_per_gpu",
        "n",
        lambda v: weights_per_gpu(MIXTRAL, v, "tp"),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "moe_decode_step",
        "n",
        lambda v: moe_decode_step(MIXTRAL, GPU, FAST, v),
        EXPERTS,
        1,
        0,
        8,
        9,
    ),
    Edge(
        "moe_decode_step",
        "n",
        lambda v: moe_decode_step(MIXTRAL, GPU, FAST, v, parallelism="tp"),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "moe_decode_step",
        "batch",
        lambda v: moe_decode_step(MIXTRAL, GPU, FAST, 1, batch=v),
        BATCH,
        1,
        0,
        65_536,
        65_537,
    ),
    Edge(
        "moe_decode_step",
        "dispatch_bytes",
        lambda v: moe_decode_step(MIXTRAL, GPU, FAST, 8, dispatch_bytes=v),
        "an integer from 1 to 8",
        1,
        0,
        8,
        9,
    ),
    # the busiest rank's load over the mean, from 1 to n (here 8 ranks)
    Edge(
        "moe_decode_step",
        "imbalance",
        lambda v: moe_decode_step(MIXTRAL, GPU, FAST, 8, imbalance=v),
        ">= 1 and <= 8",
        1.0,
        1.0 - 1e-9,
        8.0,
        8.0 + 1e-9,
    ),
    Edge(
        "moe_decode_step",
        "context",
        lambda v: moe_decode_step(MIXTRAL, GPU, FAST, 8, context=v),
        "an integer from 0 to 32768",
        0,
        -1,
        32_768,
        32_769,
    ),
    # DCP inside TP removes KV-head copies: DeepSeek-V3's one latent at TP 8 allows up to 8
    Edge(
        "moe_decode_step",
        "dcp",
        lambda v: moe_decode_step(DEEPSEEK, H200, FAST, 8, parallelism="tp", dcp=v),
        "an integer from 1 to 8",
        1,
        0,
        8,
        9,
    ),
    Edge(
        "dcp_collectives",
        "n",
        lambda v: dcp_collectives(DEEPSEEK, v, 1, 1),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "dcp_collectives",
        "dcp",
        lambda v: dcp_collectives(DEEPSEEK, 8, v, 1),
        "an integer from 1 to 8",
        1,
        0,
        8,
        9,
    ),
    Edge(
        "dcp_collectives",
        "batch",
        lambda v: dcp_collectives(DEEPSEEK, 8, 8, v),
        BATCH,
        1,
        0,
        65_536,
        65_537,
    ),
    Edge(
        "sequences_that_fit",
        "dcp",
        lambda v: sequences_that_fit(DEEPSEEK, H200, 8, "tp", 1, dcp=v),
        "an integer from 1 to 8",
        1,
        0,
        8,
        9,
    ),
    Edge(
        "alltoall_crossover_tokens",
        "n",
        lambda v: alltoall_crossover_tokens(MIXTRAL, FAST, v),
        "an integer from 2 to 8",
        2,
        1,
        8,
        9,
    ),
    Edge(
        "alltoall_crossover_tokens",
        "dispatch_bytes",
        lambda v: alltoall_crossover_tokens(MIXTRAL, FAST, 8, dispatch_bytes=v),
        "an integer from 1 to 8",
        1,
        0,
        8,
        9,
    ),
    Edge(
        "sequences_that_fit",
        "n",
        lambda v: sequences_that_fit(MIXTRAL, GPU, v, "ep", 1),
        EXPERTS,
        1,
        0,
        8,
        9,
    ),
    Edge(
        "sequences_that_fit",
        "n",
        lambda v: sequences_that_fit(MIXTRAL, GPU, v, "tp", 1),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "sequences_that_fit",
        "context_tokens",
        lambda v: sequences_that_fit(MIXTRAL, GPU, 8, "ep", v),
        "an integer from 1 to 32768",
        1,
        0,
        32_768,
        32_769,
    ),
    # scaling
    Edge(
        "speedup_curve",
        "n",
        lambda v: speedup_curve(MODEL, GPU, FAST, [v]),
        RANKS,
        1,
        0,
        4096,
        4097,
    ),
    Edge(
        "break_even_latency",
        "n",
        lambda v: break_even_latency(MODEL, GPU, v, 1.0),
        RANKS_2,
        2,
        1,
        4096,
        4097,
    ),
    # The smallest target that is met is the compute time itself (test_scaling);
    # here only the refusal of 0 as a time.
    Edge(
        "break_even_latency",
        "target_s",
        lambda v: break_even_latency(MODEL, GPU, 2, v),
        "> 0 s",
        None,
        0.0,
    ),
    Edge("peak_n", "max_n", lambda v: peak_n(MODEL, GPU, FAST, v), RANKS, 1, 0, 4096, 4097),
    # the latency chapter's timeline: a token has 128 all-reduces (64 layers x 2)
    Edge(
        "token_timeline",
        "n",
        lambda v: token_timeline(MODEL, GPU, FAST, v),
        RANKS_2,
        2,
        1,
        4096,
        4097,
    ),
    Edge(
        "token_timeline",
        "allreduces",
        lambda v: token_timeline(MODEL, GPU, FAST, 2, allreduces=v),
        "an integer from 1 to 128",
        1,
        0,
        128,
        129,
    ),
    Edge(
        "allreduce_anatomy",
        "payload_bytes",
        lambda v: allreduce_anatomy(v),
        ">= 0 bytes",
        0.0,
        -1e-9,
    ),
    Edge("allreduce_anatomy", "n", lambda v: allreduce_anatomy(1.0, v), RANKS_2, 2, 1, 4096, 4097),
    # launch_s is part of the fabric's fixed cost: at most FAST_RING's alpha,
    # 10 us - 2 x 1.725 us = 6.55 us (the specimen's fit)
    Edge(
        "allreduce_anatomy",
        "launch_s",
        lambda v: allreduce_anatomy(1.0, 2, FAST_RING, v),
        ">= 0 and <= 6.55e-06 s",
        0.0,
        -1e-9,
        FAST_RING.latency,
        FAST_RING.latency * 1.001,
    ),
]

#: Numeric parameters without a range: any finite number is meant.
UNBOUNDED = {("format_count", "value")}


def _refused_naming_range(edge: Edge, value) -> None:
    with pytest.raises(ValueError) as info:
        edge.call(value)
    assert str(info.value).startswith(f"{edge.name} must be {edge.allowed}, got "), str(info.value)


@pytest.mark.parametrize("edge", EDGES, ids=lambda e: f"{e.function}-{e.name}")
def test_lowest_allowed_value_in_just_below_out(edge):
    """The smallest allowed value works; the one below names the parameter, range and unit."""
    if edge.low is not None:
        edge.call(edge.low)
    _refused_naming_range(edge, edge.below)


@pytest.mark.parametrize(
    "edge", [e for e in EDGES if e.high is not None], ids=lambda e: f"{e.function}-{e.name}"
)
def test_highest_allowed_value_in_just_above_out(edge):
    """The maximum works; maximum + 1 is refused with the same message."""
    edge.call(edge.high)
    _refused_naming_range(edge, edge.above)


def test_every_numeric_parameter_has_its_edges():
    """Each numeric parameter of the model functions has a row above (or is unbounded)."""
    rows = {(e.function, e.name) for e in EDGES}
    missing = []
    for name, _function, params, _args in model_functions(MODULES):
        for p in params:
            if str(p.annotation).removesuffix(" | None") in ("int", "float"):
                if (name, p.name) not in rows | UNBOUNDED:
                    missing.append(f"{name}({p.name})")
    assert not missing, missing
