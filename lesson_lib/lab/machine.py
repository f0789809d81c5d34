"""Facts about the machine a lab run measures on, recorded beside its numbers."""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path


def _cpu_model() -> str:
    """This machine's CPU model name."""
    with (
        contextlib.suppress(OSError),
        open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh,
    ):
        for line in fh:
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def _last_level_cache_bytes() -> int | None:
    """Size of this CPU's largest cache."""
    best = None
    for size_file in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = size_file.read_text().strip()
        except OSError:
            continue
        scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:].upper(), 1)
        digits = text.rstrip("KkMmGg")
        if digits.isdigit():
            value = int(digits) * scale
            best = value if best is None else max(best, value)
    return best


def local_facts() -> dict:
    """Facts about the machine this process runs on (no MPI needed).

    Returns
    -------
    dict
        ``host``, ``cpu``, ``logical_cores``, ``usable_cores``, ``llc_bytes``
        (last-level cache, or None), ``load_1min`` (load average), ``os``, ``python``.
    """
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 1
    return {
        "host": platform.node() or "unknown",
        "cpu": _cpu_model(),
        "logical_cores": os.cpu_count() or 1,
        "usable_cores": usable,
        "llc_bytes": _last_level_cache_bytes(),
        "load_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }
