"""lesson_lib: every number, figure and explorer of "Interconnects and clusters".

Two layers: :mod:`lesson_lib.model` (specs, units, the specimen, the cost
laws) and :mod:`lesson_lib.chapters` (one module per chapter, named as its
page), beside :mod:`lesson_lib.figures`, :mod:`lesson_lib.explorers`,
:mod:`lesson_lib.coursework` and :mod:`lesson_lib.lab`.

Quantities are plain SI floats (bytes, seconds, bytes/second, FLOP/second);
:mod:`lesson_lib.model.units` is the one place that formats them for people.
The worked example's inputs live in :mod:`lesson_lib.model.specimen`.

The model's modules keep their short paths too: ``lesson_lib.model.specimen`` is
:mod:`lesson_lib.model.specimen`, and so for ``specs``, ``units``,
``collectives``, ``ring``, ``memory``, ``step_time``, ``layout``, ``hf_config`` and
``presets``; the presets are also ``lesson_lib.models`` (``lesson_lib.models.PRESETS``).
"""

import sys as _sys

from lesson_lib.model import (
    collectives,
    hf_config,
    layout,
    memory,
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

# The same module objects under their short names, so `import lesson_lib.model.specimen`
# and `from lesson_lib.model.collectives import ...` keep working in readers' notebooks.
for _module in (
    collectives,
    hf_config,
    layout,
    memory,
    presets,
    ring,
    specimen,
    specs,
    step_time,
    units,
):
    _sys.modules[f"lesson_lib.{_module.__name__.rpartition('.')[2]}"] = _module
# The presets also answer to lesson_lib.models, as in ``lesson_lib.models.PRESETS``.
models = presets
_sys.modules["lesson_lib.models"] = presets

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
