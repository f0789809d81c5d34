"""lesson_lib: every number, figure and explorer of "Interconnects and clusters".

Layers import downwards: :mod:`lesson_lib.model` at the bottom; figures, explorers, the lab and
coursework above it; :mod:`lesson_lib.chapters` on top. Quantities are plain SI floats, formatted
only by :mod:`lesson_lib.model.units`. The model's most used modules have short paths re-exporting
them (``from lesson_lib.specimen import MODEL``; ``lesson_lib.models`` for the presets).
"""

# Imported so that ``import lesson_lib`` alone reaches ``lesson_lib.specimen.MODEL``.
from lesson_lib import (  # noqa: F401
    collectives,
    hf_config,
    layout,
    memory,
    models,
    presets,
    ring,
    specimen,
    specs,
    step_time,
    units,
)
from lesson_lib.model.collectives import (
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
from lesson_lib.model.layout import check_layout, layout_cautions
from lesson_lib.model.memory import (
    MemoryBudget,
    kv_share,
    max_sequences,
    memory_budget,
    state_share,
)
from lesson_lib.model.presets import PRESETS, preset
from lesson_lib.model.ring import RingResult, Transfer, simulate_ring_allreduce
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import StepBreakdown, decode_step, prefill_step, speedup
from lesson_lib.model.units import (
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
    "PRESETS",
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
    "preset",
    "ring_allreduce_factor",
    "simulate_ring_allreduce",
    "speedup",
    "state_share",
]
