"""The tails figure: jitter's mean and p99 against the ranks, and the flat straggler line."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from lesson_lib.figures.tails import tails_figure


def test_lines_by_hand():
    """5 us jitter, 128 collectives: the exponential mean is 0.64 ms x H_n (1, 1.5, 25/12 at
    n = 1, 2, 4); the straggler line stays at 128 x 5 us = 0.64 ms."""
    fig = tails_figure(max_n=4)
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    mean = lines["jitter, exponential: mean"]
    assert list(mean.get_xdata()) == [1, 2, 4]
    np.testing.assert_allclose(mean.get_ydata(), [0.64, 0.96, 0.64 * 25 / 12], rtol=1e-9)
    assert lines["one straggler, every time"].get_ydata()[0] == pytest.approx(0.64)
    p99 = lines["jitter, exponential: p99"].get_ydata()
    assert np.all(p99 > mean.get_ydata())
    lognormal = lines["jitter, lognormal: mean"].get_ydata()
    assert lognormal[0] == pytest.approx(0.64, rel=1e-6) and lognormal[-1] > mean.get_ydata()[-1]
