"""lesson_lib: every number, figure and explorer of "Interconnects and clusters".

Quantities are plain SI floats (bytes, seconds, bytes/second, FLOP/second);
:mod:`lesson_lib.units` is the one place that formats them for people. The
worked example's inputs live in :mod:`lesson_lib.specimen`.
"""

from lesson_lib.collectives import (
    ALGORITHMS,
    allreduce_factor,
    allreduce_latency,
    allreduce_steps,
    allreduce_time,
    allreduce_wire_bytes,
    crossover_bytes,
    crossover_tokens,
    ring_allreduce_factor,
)
from lesson_lib.layout import check_layout, layout_cautions
from lesson_lib.memory import MemoryBudget, kv_share, max_sequences, memory_budget, state_share
from lesson_lib.ring import RingResult, Transfer, simulate_ring_allreduce
from lesson_lib.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.step_time import StepBreakdown, decode_step, prefill_step, speedup
from lesson_lib.units import (
    GB,
    KB,
    MB,
    MS,
    TB,
    US,
    GiB,
    KiB,
    MiB,
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)

__all__ = [
    "ALGORITHMS",
    "GB",
    "KB",
    "MB",
    "MS",
    "TB",
    "US",
    "Accelerator",
    "Fabric",
    "GiB",
    "KiB",
    "MemoryBudget",
    "MiB",
    "ModelSpec",
    "RingResult",
    "StepBreakdown",
    "Transfer",
    "allreduce_factor",
    "allreduce_latency",
    "allreduce_steps",
    "allreduce_time",
    "allreduce_wire_bytes",
    "check_layout",
    "crossover_bytes",
    "crossover_tokens",
    "decode_step",
    "format_bytes",
    "format_count",
    "format_rate",
    "format_ratio",
    "format_seconds",
    "kv_share",
    "layout_cautions",
    "max_sequences",
    "memory_budget",
    "prefill_step",
    "ring_allreduce_factor",
    "simulate_ring_allreduce",
    "speedup",
    "state_share",
]
