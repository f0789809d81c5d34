"""The shared input checkers: messages name the parameter and the range."""

import math

import numpy as np
import pytest

from lesson_lib.model._validate import require_int, require_number


def test_require_int_accepts_numpy_integers():
    """NumPy integers are whole numbers too."""
    assert require_int("n", np.int64(4)) == 4


@pytest.mark.parametrize("value", [2.0, "2", None, True])
def test_require_int_rejects_non_integers(value):
    """Floats, strings, None and bools are TypeErrors naming the parameter and range."""
    with pytest.raises(TypeError, match=r"n must be an integer >= 1"):
        require_int("n", value)


def test_require_int_range_message():
    """Out of range says the allowed range."""
    with pytest.raises(ValueError, match=r"tp must be an integer from 1 to 8, got 9"):
        require_int("tp", 9, maximum=8)
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got 0"):
        require_int("n", 0)


def test_require_number_bounds():
    """Strict bounds exclude the minimum; NaN and inf are rejected."""
    assert require_number("b", 1) == 1.0
    with pytest.raises(ValueError, match=r"bandwidth must be > 0 bytes/s, got 0"):
        require_number("bandwidth", 0, strict=True, unit="bytes/s")
    with pytest.raises(ValueError, match="finite"):
        require_number("x", math.nan)
    with pytest.raises(ValueError, match="<= 5"):
        require_number("x", 6, maximum=5)
    with pytest.raises(TypeError, match="x must be a number"):
        require_number("x", False)
