"""The slowest-rank model against hand values, limits and seeded simulations.

Hand values are written out; the simulations draw raw per-rank delays and take the maximum and
the sum themselves, so nothing here recomputes an expectation with the code under test.
"""

import math

import numpy as np
import pytest

from lesson_lib.model.tails import (
    persistent_straggler_cost,
    slowest_rank_wait,
    token_time_quantile,
)

US = 1e-6


def test_exponential_hand_values():
    """H_4 = 1 + 1/2 + 1/3 + 1/4 = 25/12 = 2.08333; H_8 = 761/280 = 2.717857."""
    assert slowest_rank_wait(4, 1.0) == pytest.approx(2.08333, abs=5e-6)
    assert slowest_rank_wait(4, 3 * US) == pytest.approx(3 * US * 25 / 12, rel=1e-12)
    assert slowest_rank_wait(8, 1.0) == pytest.approx(761 / 280, rel=1e-12)
    assert slowest_rank_wait(8, 1.0) == pytest.approx(2.7179, abs=5e-5)


@pytest.mark.parametrize("distribution", ["exponential", "lognormal"])
def test_limits(distribution):
    """One rank waits for itself: the mean delay. No jitter: no wait, and the token keeps its base."""
    assert slowest_rank_wait(1, 2 * US, distribution) == pytest.approx(2 * US, rel=1e-9)
    assert slowest_rank_wait(8, 0.0, distribution) == 0.0
    assert token_time_quantile(0.99, 8, 0.0, base_s=5e-3, distribution=distribution) == 5e-3


@pytest.mark.parametrize("sigma", [0.05, 0.5, 2.0])
def test_lognormal_mean_at_one_rank_is_the_mean_for_any_shape(sigma):
    assert slowest_rank_wait(1, 1.0, "lognormal", sigma) == pytest.approx(1.0, rel=1e-6)


def test_wait_grows_with_n_and_the_heavier_tail_grows_faster():
    exp = [slowest_rank_wait(n, 1.0) for n in (1, 2, 4, 8)]
    logn = [slowest_rank_wait(n, 1.0, "lognormal", 1.0) for n in (1, 2, 4, 8)]
    assert exp == sorted(exp) and logn == sorted(logn)
    assert logn[-1] > exp[-1]


@pytest.mark.parametrize(("n", "distribution"), [(4, "exponential"), (8, "lognormal")])
def test_mean_against_seeded_simulation(n, distribution):
    """The simulated mean of the largest of n delays, within 5 standard errors (seeded)."""
    rng = np.random.default_rng(20261204 + n)
    draws = 400_000
    if distribution == "exponential":
        delays = rng.exponential(1.0, size=(draws, n))
    else:  # mean 1: mu = -sigma^2 / 2 with sigma = 1
        delays = rng.lognormal(-0.5, 1.0, size=(draws, n))
    slowest = delays.max(axis=1)
    stderr = slowest.std() / math.sqrt(draws)
    assert abs(slowest_rank_wait(n, 1.0, distribution) - slowest.mean()) < 5 * stderr


def test_quantile_closed_forms_with_one_collective():
    """n = 1: -ln(1 - q) x jitter (ln 100 = 4.60517 at p99). n = 2: F^2 = q, x = -ln(1 - sqrt q).
    Lognormal median at n = 1: exp(-sigma^2 / 2) = exp(-0.5) = 0.606531 of the mean."""
    assert token_time_quantile(0.99, 1, 1.0, collectives=1) == pytest.approx(4.60517, rel=1e-4)
    x = -math.log(1 - math.sqrt(0.5))  # 1.22795
    assert token_time_quantile(0.5, 2, 1.0, collectives=1) == pytest.approx(x, rel=1e-4)
    median = token_time_quantile(0.5, 1, 1.0, collectives=1, distribution="lognormal")
    assert median == pytest.approx(0.606531, rel=1e-3)


@pytest.mark.parametrize("distribution", ["exponential", "lognormal"])
@pytest.mark.parametrize("q", [0.5, 0.99])
def test_token_quantile_against_seeded_simulation(distribution, q):
    """A share q of simulated tokens (128 collectives on 4 ranks) lies below the quantile.

    The share below the true quantile of N draws is binomial: within 5 x sqrt(q(1 - q)/N).
    """
    rng = np.random.default_rng(7 if distribution == "exponential" else 11)
    draws, base = 20_000, 3e-3
    shape = (draws, 128, 4)
    if distribution == "exponential":
        delays = rng.exponential(2 * US, size=shape)
    else:
        delays = rng.lognormal(math.log(2 * US) - 0.5, 1.0, size=shape)
    tokens = base + delays.max(axis=2).sum(axis=1)
    value = token_time_quantile(q, 4, 2 * US, base_s=base, distribution=distribution)
    share = float(np.mean(tokens <= value))
    assert abs(share - q) < 5 * math.sqrt(q * (1 - q) / draws)


def test_token_median_sits_near_the_mean_and_p99_above():
    """128 exponential waits on 4 ranks: mean 128 x 25/12 = 266.67 jitters; the sum is nearly
    normal, so the median is close to it and the p99 above it."""
    p50 = token_time_quantile(0.5, 4, 1.0)
    assert p50 == pytest.approx(266.67, rel=2e-3)
    assert token_time_quantile(0.99, 4, 1.0) > p50 + 20


def test_persistent_straggler_costs_collectives_times_delay():
    """128 x 100 us = 12.8 ms per token, with no rank count to depend on."""
    assert persistent_straggler_cost(100 * US) == pytest.approx(12.8e-3, rel=1e-12)
    assert persistent_straggler_cost(5 * US, collectives=2) == pytest.approx(10 * US)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: slowest_rank_wait(0, 1e-6), "n"),
        (lambda: slowest_rank_wait(5000, 1e-6), "n"),
        (lambda: slowest_rank_wait(4, -1e-6), "jitter_s"),
        (lambda: slowest_rank_wait(4, float("nan")), "jitter_s"),
        (lambda: slowest_rank_wait(4, 1e-6, "gamma"), "distribution"),
        (lambda: slowest_rank_wait(4, 1e-6, "lognormal", sigma=0.0), "sigma"),
        (lambda: slowest_rank_wait(4, 1e-6, "lognormal", sigma=3.0), "sigma"),
        (lambda: token_time_quantile(1.0, 4, 1e-6), "q"),
        (lambda: token_time_quantile(0.0, 4, 1e-6), "q"),
        (lambda: token_time_quantile(0.5, 4, 1e-6, collectives=0), "collectives"),
        (lambda: token_time_quantile(0.5, 4, 1e-6, collectives=2000), "collectives"),
        (lambda: token_time_quantile(0.5, 4, 1e-6, base_s=-1.0), "base_s"),
        (lambda: persistent_straggler_cost(-1e-6), "delay_s"),
        (lambda: persistent_straggler_cost(1e-6, collectives=0), "collectives"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_the_quantile_is_that_of_the_whole_support():
    """The FFT stops where under 1e-12 of the sum lies beyond; over the whole support it agrees.

    Here the whole-support computation is written out: 4 exponential ranks of mean 1, cut
    at ln(4 / 1e-9), 2**19 / 128 = 4,096 bins, the slowest's bin masses F(x)^4 differenced,
    raised to the 128th convolution power by an FFT of 128 x 4,096 points, read at 0.99.
    """
    cut, bins, collectives = math.log(4 / 1e-9), 2**19 // 128, 128
    edges = np.linspace(0.0, cut, bins + 1)
    masses = np.diff(np.concatenate(([0.0], -(np.expm1(-edges[1:]) ** 4))))
    length = collectives * bins
    cdf = np.cumsum(np.fft.irfft(np.fft.rfft(masses, length) ** collectives, length))
    j = int(np.argmax(cdf >= 0.99))
    index = j - 1 + (0.99 - cdf[j - 1]) / (cdf[j] - cdf[j - 1])
    whole = (index + collectives / 2) * cut / bins
    assert token_time_quantile(0.99, 4, 1.0) == pytest.approx(whole, rel=1e-9)
