"""Input checks shared by every module: one clear error per bad argument.

Each names the parameter and the allowed range, so a student who passes ``n=0``
learns what was expected instead of getting a NaN or a silently wrong number.
"""

from __future__ import annotations

import math
import numbers

#: Most ranks (GPUs in a group) any public function accepts, a bound on input that
#: keeps every loop and array small and not a claim about hardware.
MAX_RANKS: int = 4096


def require_int(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if a whole number in range, else an error naming ``name``.

    Parameters
    ----------
    name : str
    value : object
        TypeError unless an integer (not ``bool``, not ``2.0``).
    minimum, maximum : int
        Inclusive bounds (``maximum`` None for none); ValueError outside them.

    Returns
    -------
    int
    """
    if type(value) is int and minimum <= value and (maximum is None or value <= maximum):
        return value  # the common case, before the message is built
    allowed = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer {allowed}, got {value!r} ({type(value).__name__})"
        )
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an integer {allowed}, got {value}")
    return value


def _range_text(minimum: float, strict: bool, maximum: float | None, unit: str) -> str:
    """The allowed range as an error message says it (``>= 0 and <= 1 s``)."""
    upper = "" if maximum is None else f" and <= {maximum:g}"
    return f"{'>' if strict else '>='} {minimum:g}{upper}" + (f" {unit}" if unit else "")


def require_number(
    name: str,
    value: object,
    *,
    minimum: float = 0.0,
    strict: bool = False,
    maximum: float | None = None,
    unit: str = "",
) -> float:
    """Return ``value`` as a finite ``float`` in the allowed range, else an error naming ``name``.

    Parameters
    ----------
    name : str
    value : object
        A real number (``int``, ``float`` or NumPy scalar, not ``bool``, else TypeError); NaN,
        infinity or a value out of range is a ValueError.
    minimum, strict, maximum : float, bool, float or None
        ``minimum`` is exclusive if ``strict``, ``maximum`` inclusive (None for none).
    unit : str
        Named in the message (``"bytes/s"``).

    Returns
    -------
    float
    """
    if type(value) not in (float, int) and (
        isinstance(value, bool) or not isinstance(value, numbers.Real)
    ):
        allowed = _range_text(minimum, strict, maximum, unit)
        raise TypeError(
            f"{name} must be a number {allowed}, got {value!r} ({type(value).__name__})"
        )
    try:
        value = float(value)
    except OverflowError:
        allowed = _range_text(minimum, strict, maximum, unit)
        raise ValueError(f"{name} must be {allowed}, got a number too large") from None
    too_low = value <= minimum if strict else value < minimum
    if math.isfinite(value) and not too_low and (maximum is None or value <= maximum):
        return value  # the common case, before the message is built
    allowed = _range_text(minimum, strict, maximum, unit)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number {allowed}, got {value}")
    raise ValueError(f"{name} must be {allowed}, got {value:g}")


def require_instance(name: str, value: object, kind: type) -> None:
    """Raise TypeError naming ``name`` unless ``value`` is an instance of ``kind``.

    Parameters
    ----------
    name : str
        Parameter name used in the error message.
    value : object
    kind : type
        The class it must be, e.g. :class:`~lesson_lib.model.specs.Fabric`.
    """
    if not isinstance(value, kind):
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"{name} must be {article} {kind.__name__}, got {type(value).__name__}")
