"""Units and the one place where numbers are formatted for people.

Every quantity in ``lesson_lib`` is a plain SI float: bytes, seconds, bytes per second, FLOP per
second. The lesson mixes unit systems on purpose (54 GB of weights, 16 GiB of KV cache), so the
formatters always print their unit: ``GB`` is decimal (10**9 bytes), ``GiB`` binary (2**30 bytes).
"""

from __future__ import annotations

import math
import re

from lesson_lib.model._validate import require_int, require_number

#: Decimal byte units (SI), as vendors and the lesson's "54 GB" use them.
KB: float = 1e3
MB: float = 1e6
GB: float = 1e9
TB: float = 1e12

#: Binary byte units (IEC), as memory allocators and the KV cache use them.
KiB: float = 2.0**10
MiB: float = 2.0**20
GiB: float = 2.0**30
TiB: float = 2.0**40

#: Time units, in seconds.
US: float = 1e-6
MS: float = 1e-3

#: Every byte unit the lesson names, with its size in bytes.
BYTE_UNITS: dict[str, float] = dict(
    B=1.0, KB=KB, MB=MB, GB=GB, TB=TB, KiB=KiB, MiB=MiB, GiB=GiB, TiB=TiB
)
#: Every time unit the lesson names, with its size in seconds.
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": MS, "us": US, "ns": 1e-9}
_DECIMAL = ("B", "KB", "MB", "GB", "TB")
_BINARY = ("B", "KiB", "MiB", "GiB", "TiB")


def _number(value: float, decimals: int) -> str:
    """Round to ``decimals`` places (0 to 12), drop trailing zeros, group thousands."""
    decimals = require_int("decimals", decimals, minimum=0, maximum=12)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = re.sub(r"\.?0+$", "", text)  # "1.250" -> "1.25", "54.00" -> "54"
    return "0" if text == "-0" else text


def _auto_unit(value: float, names: tuple[str, ...], table: dict[str, float]) -> str:
    """The largest of ``names`` (smallest first) that keeps ``value`` >= 1, else the smallest."""
    fitting = [name for name in names if abs(value) >= table[name]]
    return fitting[-1] if fitting else names[0]


def format_bytes(
    nbytes: float, unit: str | None = None, *, system: str = "decimal", decimals: int = 2
) -> str:
    """Format a byte count with an explicit unit, e.g. ``"54 GB"`` or ``"1.25 MiB"``.

    Parameters
    ----------
    nbytes : float
        Size in bytes (>= 0).
    unit : str, optional
        One of ``B KB MB GB TB KiB MiB GiB TiB``, else ``system``'s largest keeping it >= 1.
    system : {"decimal", "binary"}, default "decimal"
        Unit family used when ``unit`` is omitted.
    decimals : int, default 2
        Decimal places before trailing zeros are dropped, from 0 to 12.

    Returns
    -------
    str
        Number, space, unit: ``"54 GB"`` for ``54e9``, ``"50.29 GiB"`` with ``system="binary"``.
    """
    nbytes = require_number("nbytes", nbytes, unit="bytes")
    if unit is None:
        if system not in ("decimal", "binary"):
            raise ValueError(f"system must be 'decimal' or 'binary', got {system!r}")
        unit = _auto_unit(nbytes, _DECIMAL if system == "decimal" else _BINARY, BYTE_UNITS)
    if unit not in BYTE_UNITS:
        raise ValueError(f"unit must be one of {', '.join(BYTE_UNITS)}, got {unit!r}")
    return f"{_number(nbytes / BYTE_UNITS[unit], decimals)} {unit}"


def format_rate(
    bytes_per_s: float, unit: str | None = None, *, system: str = "decimal", decimals: int = 2
) -> str:
    """Format a bandwidth in bytes per second, e.g. ``"62.5 MiB/s"``.

    Parameters
    ----------
    bytes_per_s : float
        Rate in bytes/second (>= 0).
    unit, system, decimals
        As for :func:`format_bytes`; ``"/s"`` is appended to the unit.

    Returns
    -------
    str
    """
    require_number("bytes_per_s", bytes_per_s, unit="bytes/s")
    return format_bytes(bytes_per_s, unit, system=system, decimals=decimals) + "/s"


def format_seconds(seconds: float, unit: str | None = None, *, decimals: int = 2) -> str:
    """Format a duration, e.g. ``"1.28 ms"`` or ``"10 us"``.

    Parameters
    ----------
    seconds : float
        Duration in seconds (>= 0).
    unit : {"s", "ms", "us", "ns"}, optional
        If omitted, the largest unit that keeps the number >= 1.
    decimals : int, default 2
        Decimal places before trailing zeros are dropped, from 0 to 12.

    Returns
    -------
    str
        The number and its unit. Microseconds are written ``us``.
    """
    seconds = require_number("seconds", seconds, unit="s")
    if unit is None:
        unit = _auto_unit(seconds, ("ns", "us", "ms", "s"), TIME_UNITS)
    if unit not in TIME_UNITS:
        raise ValueError(f"unit must be one of {', '.join(TIME_UNITS)}, got {unit!r}")
    return f"{_number(seconds / TIME_UNITS[unit], decimals)} {unit}"


def format_ratio(ratio: float, *, decimals: int = 2) -> str:
    """Format a speed-up or ratio as ``"1.76x"``.

    Parameters
    ----------
    ratio : float
        The ratio (>= 0).
    decimals : int, default 2
        Decimal places before trailing zeros are dropped, from 0 to 12.

    Returns
    -------
    str
    """
    return f"{_number(require_number('ratio', ratio), decimals)}x"


def format_count(value: float, *, decimals: int = 0) -> str:
    """Format a plain count with thousands separators, e.g. ``"262,144"``.

    Parameters
    ----------
    value : float
        The count, any finite number (negative ones keep their sign).
    decimals : int, default 0
        Decimal places before trailing zeros are dropped, from 0 to 12.

    Returns
    -------
    str
    """
    return _number(require_number("value", value, minimum=-math.inf), decimals)
