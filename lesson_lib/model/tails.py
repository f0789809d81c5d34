"""Tails: a collective waits for its slowest rank, a decoded token for every such wait.

Each of ``n`` ranks reaches a collective late by an independent random delay of mean
``jitter_s`` (operating-system noise, a late kernel launch); the collective ends when the
last rank arrives, so it pays the maximum of ``n`` delays, and a token the sum of its
collectives' maxima. This is the noise model of Hoefler, Schneider and Lumsdaine,
"Characterizing the Influence of System Noise on Large-Scale Applications by Simulation"
(SC 2010), one collective at a time. Seconds throughout.
"""

from __future__ import annotations

import math

import numpy as np

from lesson_lib.model._validate import MAX_RANKS, require_int, require_number
from lesson_lib.model.specimen import JITTER_SIGMA, MODEL

#: The per-rank delay laws, exponential and lognormal (heavier-tailed, of shape ``sigma``).
DISTRIBUTIONS: tuple[str, ...] = ("exponential", "lognormal")
#: Most collectives per token the functions take (it bounds the quantile's FFT length).
MAX_COLLECTIVES: int = 1024
#: Largest lognormal shape accepted (a heavier tail makes the quantile's grid too coarse).
MAX_SIGMA: float = 2.0
# Each rank's delay is cut at its 1 - _TAIL/n quantile: the slowest of n loses < _TAIL of its mass.
_TAIL = 1e-9


def _checked(n: object, jitter_s: object, distribution: object, sigma: object) -> tuple:
    if distribution not in DISTRIBUTIONS:
        raise ValueError(
            f"distribution must be one of {', '.join(DISTRIBUTIONS)}, got {distribution!r}"
        )
    return (
        require_int("n", n, maximum=MAX_RANKS),
        require_number("jitter_s", jitter_s, unit="s"),
        require_number("sigma", sigma, strict=True, maximum=MAX_SIGMA),
    )


def _upper_tail(z: np.ndarray) -> np.ndarray:
    """1 - Phi(z) of the standard normal, accurate far into the upper tail."""
    return 0.5 * np.frompyfunc(math.erfc, 1, 1)(np.asarray(z) / math.sqrt(2)).astype(float)


def slowest_rank_wait(
    n: int, jitter_s: float, distribution: str = "exponential", sigma: float = JITTER_SIGMA
) -> float:
    """Expected extra wait of one collective: the mean of the largest of ``n`` rank delays.

    Parameters
    ----------
    n : int
        Ranks in the collective, from 1 to 4096 (``MAX_RANKS``).
    jitter_s : float
        Mean delay of one rank, seconds, >= 0.
    distribution : {"exponential", "lognormal"}
        The law of one rank's delay (:data:`DISTRIBUTIONS`).
    sigma : float, default :data:`~lesson_lib.model.specimen.JITTER_SIGMA`
        Lognormal shape, the standard deviation of the delay's logarithm, > 0 and <=
        :data:`MAX_SIGMA`; the exponential ignores it.

    Returns
    -------
    float
        Seconds; ``jitter_s`` at ``n = 1``.

    Notes
    -----
    For exponential delays of mean :math:`\\theta`, the largest of :math:`n` is a sum of
    independent exponentials of means :math:`\\theta/n, \\theta/(n-1), \\dots, \\theta` (Rényi's
    representation: the gap after the :math:`k`-th arrival is the first of the :math:`n-k`
    remaining waits), so its mean is :math:`\\theta H_n` with :math:`H_n = \\sum_{k=1}^n 1/k`
    (H. A. David and H. N. Nagaraja, *Order Statistics*, 3rd ed., Wiley 2003, section 3.1).

    A lognormal delay of mean :math:`\\theta` is :math:`\\theta e^{\\sigma Z - \\sigma^2/2}` with
    :math:`Z` standard normal. The largest of :math:`n` has mean
    :math:`\\int_0^\\infty (1 - F(x)^n)\\,dx`; with :math:`x = \\theta e^{\\sigma z - \\sigma^2/2}`,
    :math:`F(x) = \\Phi(z)` and the integral is taken by the trapezoidal rule over :math:`z` in
    steps of 0.001, plus :math:`x(-37)` for :math:`z < -37`, where :math:`\\Phi(z)^n = 0` in
    double precision.
    """
    n, jitter_s, sigma = _checked(n, jitter_s, distribution, sigma)
    if distribution == "exponential" or jitter_s == 0:
        return jitter_s * math.fsum(1 / k for k in range(1, n + 1))
    z = np.arange(-37.0, sigma + 10 + math.sqrt(2 * math.log(n)), 0.001)
    x = jitter_s * np.exp(sigma * z - sigma**2 / 2)
    tail = _upper_tail(np.abs(z))  # Phi(z) is tail below 0 and 1 - tail above
    beyond = -np.expm1(n * np.where(z < 0, np.log(tail), np.log1p(-tail)))  # 1 - Phi(z)^n
    return float(x[0] + np.trapezoid(beyond * sigma * x, z))


def _delay_cdf(x: np.ndarray, jitter_s: float, distribution: str, sigma: float) -> np.ndarray:
    """CDF of one rank's delay at ``x`` > 0."""
    if distribution == "exponential":
        return -np.expm1(-x / jitter_s)
    return 1 - _upper_tail((np.log(x / jitter_s) + sigma**2 / 2) / sigma)


def token_time_quantile(
    q: float,
    n: int,
    jitter_s: float,
    collectives: int = MODEL.allreduces_per_token,
    base_s: float = 0.0,
    distribution: str = "exponential",
    sigma: float = JITTER_SIGMA,
) -> float:
    """Quantile ``q`` of one token's time: ``base_s`` plus the sum of its collectives' waits.

    Parameters
    ----------
    q : float
        The quantile, > 0 and <= 0.999 (0.5 the median, 0.99 the p99).
    n, jitter_s, distribution, sigma
        As for :func:`slowest_rank_wait`.
    collectives : int, default the specimen's 128
        Collectives per token, each an independent slowest-of-``n`` wait, 1 to
        :data:`MAX_COLLECTIVES`.
    base_s : float, default 0.0
        The token's time without jitter (compute plus fixed latencies), seconds, >= 0.

    Returns
    -------
    float
        Seconds. The mean is ``base_s + collectives * slowest_rank_wait(...)``.

    Notes
    -----
    The extra time is a sum of ``collectives`` independent copies of the slowest rank's delay
    (for exponential delays a hypoexponential sum: by Rényi, ``collectives`` exponentials of
    each mean :math:`\\theta/k`, :math:`k = 1..n`). Its quantile comes from a discrete
    convolution: the slowest delay's exact CDF :math:`F(x)^n`, cut where :math:`1 - F < 10^{-9}/n`,
    is split into ``2**19 // collectives`` bins of width :math:`h`, each bin's probability at its
    centre, and an FFT raises it to the ``collectives``-th convolution power, as long as the sum
    reaches but with probability :math:`10^{-12}` (a Chernoff bound; the rest wraps round). Each
    delay moves by at most :math:`h/2`, so the result is within ``collectives`` x :math:`h/2` of
    the exact quantile (0.12 % of the exponential p99 on 4 ranks with 128 collectives), and closer in practice as the rounding errors cancel.
    """
    q = require_number("q", q, strict=True, maximum=0.999)
    n, jitter_s, sigma = _checked(n, jitter_s, distribution, sigma)
    collectives = require_int("collectives", collectives, maximum=MAX_COLLECTIVES)
    base_s = require_number("base_s", base_s, unit="s")
    if jitter_s == 0:
        return base_s
    if distribution == "exponential":
        cut = jitter_s * math.log(n / _TAIL)
    else:  # 1 - Phi(z) <= exp(-z^2 / 2) / 2
        cut = jitter_s * math.exp(sigma * math.sqrt(2 * math.log(n / (2 * _TAIL))) - sigma**2 / 2)
    bins = 2**19 // collectives
    edges = np.linspace(0.0, cut, bins + 1)
    slowest = np.concatenate(([0.0], _delay_cdf(edges[1:], jitter_s, distribution, sigma) ** n))
    cdf = slowest[1:]  # one wait: each bin's probability is at its centre
    if collectives > 1:  # a sum of waits: the bins' convolution power, by FFT
        # Chernoff: the index sum passes m with probability <= exp(-s m) M(s)^collectives, M bounded
        # above over blocks of bins at their ends; the FFT stops at the least m of a grid of s where
        # that is 1e-12 (the mass past it wraps round and moves the CDF by no more).
        block = -(-bins // 4096)
        mass = np.diff(slowest[::block], append=slowest[-1])
        s = np.geomspace(0.01, 100.0, 60) / bins
        mgf = mass @ np.exp(np.outer(block * np.arange(1, mass.size + 1), s))
        reach = float(np.min((collectives * np.log(mgf) + math.log(1e12)) / s))
        length = min(collectives * bins, 2 ** math.ceil(math.log2(reach)))  # a fast FFT length
        spectrum = np.fft.rfft(np.diff(slowest), length)
        # numpy takes a complex power by squaring below 100, by (slower) logarithms above
        power = (spectrum**64) ** (collectives // 64) * spectrum ** (collectives % 64)
        cdf = np.cumsum(np.fft.irfft(power, length))
    j = int(np.argmax(cdf >= q))
    below = cdf[j - 1] if j else 0.0
    index = j - 1 + (q - below) / (cdf[j] - below)  # linear between lattice points
    return base_s + (index + collectives / 2) * (cut / bins)


def persistent_straggler_cost(
    delay_s: float, collectives: int = MODEL.allreduces_per_token
) -> float:
    """Extra time per token when one rank reaches every collective ``delay_s`` late.

    Parameters
    ----------
    delay_s : float
        How late the one slow rank is at each collective, seconds, >= 0.
    collectives : int, default the specimen's 128
        Collectives per token, 1 to :data:`MAX_COLLECTIVES`.

    Returns
    -------
    float
        ``collectives * delay_s`` seconds, whatever the number of ranks: every collective waits
        for the same late rank, and the others' being on time cannot shorten that wait.
    """
    delay_s = require_number("delay_s", delay_s, unit="s")
    return require_int("collectives", collectives, maximum=MAX_COLLECTIVES) * delay_s
