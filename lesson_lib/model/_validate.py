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
    """Return ``value`` as an ``int`` if it is a whole number in range; else an error naming ``name``.

    TypeError unless an integer (not ``bool``, not ``2.0``); ValueError outside the inclusive bounds
    ``minimum`` and ``maximum`` (``None``: no upper bound).
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


def require_number(
    name: str,
    value: object,
    *,
    minimum: float = 0.0,
    strict: bool = False,
    maximum: float | None = None,
    unit: str = "",
) -> float:
    """Return ``value`` as a finite ``float`` if it lies in the allowed range.

    Parameters
    ----------
    name : str
        Parameter name used in the error message.
    value : object
        A real number (``int``, ``float`` or NumPy scalar, not ``bool``: else
        TypeError); NaN, infinity or a value out of range is a ValueError.
    minimum, strict, maximum : float, bool, float, default 0.0, False, None
        Lower bound, exclusive (``> minimum``) if ``strict``; inclusive upper bound (None: none).
    unit : str, optional
        Unit named in the message, e.g. ``"bytes/s"``.

    Returns
    -------
    float
    """
    op = ">" if strict else ">="
    allowed = f"{op} {minimum:g}" + ("" if maximum is None else f" and <= {maximum:g}")
    suffix = f" {unit}" if unit else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number {allowed}{suffix}, got {value!r} ({type(value).__name__})"
        )
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be {allowed}{suffix}, got a number too large") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number {allowed}{suffix}, got {value}")
    too_low = value <= minimum if strict else value < minimum
    if too_low or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {allowed}{suffix}, got {value:g}")
    return value


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
