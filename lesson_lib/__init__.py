"""lesson_lib: every number, figure and explorer of "Interconnects and clusters".

Layers that import one way, downwards: :mod:`lesson_lib.model` (specs,
units, the specimen, the cost laws) at the bottom; :mod:`lesson_lib.figures`,
:mod:`lesson_lib.explorers`, :mod:`lesson_lib.lab` and
:mod:`lesson_lib.coursework` above it; :mod:`lesson_lib.chapters` (one module
per chapter page, each with its glue table) on top.

Quantities are plain SI floats (bytes, seconds, bytes/second, FLOP/second);
:mod:`lesson_lib.model.units` is the one place that formats them for people.
The worked example's inputs live in :mod:`lesson_lib.model.specimen`.

The model's most used modules also have short paths, small modules that
re-export the same objects: ``lesson_lib.specimen`` holds the public names of
:mod:`lesson_lib.model.specimen` (``from lesson_lib.specimen import MODEL``),
and so do ``collectives``, ``ring``, ``memory``, ``step_time``, ``layout``,
``specs``, ``units``, ``hf_config`` and ``presets``; the presets are also
``lesson_lib.models`` (``lesson_lib.models.PRESETS``).
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
