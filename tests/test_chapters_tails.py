"""The tails page's numbers, derived a second way by hand."""

import json
import math

import numpy as np
import pytest

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.lab.records import REFERENCE_TAILS, reference_path

US = 1e-6


def _number(text: str) -> float:
    return float(text.split()[0].rstrip("x").replace(",", ""))


@pytest.fixture(scope="module")
def values():
    return chapter_numbers("tails")


def test_means_per_token_by_hand(values):
    """H_4 = 25/12. Busy, 5 us: one wait 10.4167 us; 128 of them 1.3333 ms; the fast 4-GPU line
    4.0299 + 1.28 = 5.3099 ms, so 6.6433 ms and 1 / 6.6433 ms = 150.5 tokens/s. Quiet, 1 us:
    128 x 2.0833 us = 0.2667 ms, 5.5766 ms. A straggler 5 us late: 128 x 5 us = 0.64 ms."""
    assert values["tails_h4"] == "2.08x" and values["tails_h8"] == "2.72x"  # 761/280 = 2.7179
    assert values["tails_wait_busy"] == "10.42 us"
    assert values["tails_extra_busy"] == "1.33 ms" and values["tails_mean_busy"] == "6.64 ms"
    assert values["tails_tokens_busy"] == "151"
    assert values["tails_extra_quiet"] == "0.27 ms" and values["tails_mean_quiet"] == "5.58 ms"
    assert values["tails_straggler"] == "0.64 ms"


def test_p99_sits_just_above_the_normal_approximation(values):
    """The slowest of 4 exponentials has variance theta^2 (1 + 1/4 + 1/9 + 1/16) = 1.4236 theta^2;
    128 of them: mean 266.67 theta, sd sqrt(128 x 1.4236) = 13.50 theta. Normal p99: mean +
    2.3263 sd = 298.07 theta, i.e. 5.3099 ms + 298.07 x 5 us = 6.800 ms. The sum is skewed
    right, so the exact p99 lies a little above, within 0.02 ms."""
    sd = math.sqrt(128 * (1 + 1 / 4 + 1 / 9 + 1 / 16))
    normal = 5.3099 + (128 * 25 / 12 + 2.3263 * sd) * 5 * US * 1e3
    assert normal == pytest.approx(6.800, abs=1e-3)
    assert 0 <= _number(values["tails_p99_busy"]) - normal <= 0.02
    # a heavier tail of the same mean: a later p99
    assert _number(values["tails_p99_ln_busy"]) > _number(values["tails_p99_busy"])


def test_lab_numbers_read_the_recorded_runs(values):
    """p50 and p99 recomputed from every recorded time; the straggler's prediction adds its
    100 us; the spread of the slowest of two exponentials of mean 1 at p99 and p50 is
    -ln(1 - sqrt 0.99) + ln(1 - sqrt 0.5) = 5.2958 - 1.2279 = 4.0679."""
    plain, late = (json.loads(reference_path(n).read_text())["records"][0] for n in REFERENCE_TAILS)
    p50, p99 = np.percentile(plain["each_s"], [50, 99])
    assert values["lab_tails_p50"] == f"{p50 / US:.2f} us"
    assert values["lab_tails_p99"] == f"{p99 / US:.2f} us"
    assert values["lab_tails_delay"] == "100 us"
    late_p50 = np.percentile(late["each_s"], 50)
    assert values["lab_tails_p50_growth"] == f"{(late_p50 - p50) / US:.2f} us"
    assert values["lab_tails_predicted_p50"] == f"{(p50 + 100 * US) / US:.2f} us"
    assert values["lab_tails_spread"] == "4.07x"
    jitter = (p99 - p50) / 4.0679
    assert _number(values["lab_tails_jitter"]) == pytest.approx(jitter / US, abs=0.01)
    assert values["lab_tails_token_straggler"] == "12.8 ms"  # 128 x 100 us
    # the recorded straggler moved the median by about its delay
    assert 80 * US < late_p50 - p50 < 120 * US
