"""Fit the lesson's model, t(m) = alpha + m / B, to measured all-reduce times.

Two methods, :data:`METHODS`; the default ``"ranges"`` skips the middle sizes, where MPICH switches
algorithm. ``m`` is the payload, so ``B`` is the algorithm bandwidth; a
:class:`~lesson_lib.model.specs.Fabric` wants the bus bandwidth ``B x 2(N-1)/N`` (nccl-tests').
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lesson_lib.model._validate import require_int
from lesson_lib.model.collectives import ring_allreduce_factor
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import KiB, MiB, format_bytes

#: How each method fits, in one sentence (printed by the CLI and the chapter).
METHODS: dict[str, str] = {
    "ranges": (
        "alpha = median of (t - m/B) over the small sizes, B = median of m/(t - alpha) over "
        "the large sizes, iterated to agreement; the middle sizes are not used"
    ),
    "wls": (
        "least squares of t = alpha + m/B with each size weighted by 1/t^2, so each counts "
        "by its relative error (a log-space fit); alpha, 1/B >= 0"
    ),
}
#: Default upper end of the "small" sizes (below MPICH's switch near 8 KiB), bytes.
SMALL_MAX = int(4 * KiB)
#: Default lower end of the "large" sizes, bytes.
LARGE_MIN = int(1 * MiB)


@dataclass(frozen=True)
class AlphaBetaFit:
    """The fitted model and how well it fits."""

    #: Fixed cost of one all-reduce, seconds.
    alpha: float
    #: ``B``, algorithm bandwidth, bytes/second (payload / time, large messages).
    bandwidth: float
    ranks: int
    #: Every measured size, bytes.
    bytes: np.ndarray
    #: Its measured (median) time, seconds.
    measured_s: np.ndarray
    #: Boolean mask of the sizes the fit used.
    used: np.ndarray
    #: The smallest size used, bytes.
    min_bytes: float
    #: The largest, bytes.
    max_bytes: float
    #: A key of :data:`METHODS`.
    method: str = "ranges"
    #: For ``"ranges"``, the largest size that gave alpha, bytes.
    small_max: float | None = None
    #: For ``"ranges"``, the smallest size that gave B, bytes.
    large_min: float | None = None

    @property
    def description(self) -> str:
        """How the fit was made, with the size ranges, in one sentence."""

        def b(x: float) -> str:
            return format_bytes(x, system="binary")

        if self.method == "ranges":
            return (
                f"alpha from the sizes {b(self.min_bytes)} .. {b(self.small_max)}, B from "
                f"{b(self.large_min)} .. {b(self.max_bytes)} ({METHODS['ranges']})"
            )
        return f"{METHODS['wls']}; sizes {b(self.min_bytes)} .. {b(self.max_bytes)}"

    def predict(self, nbytes: float | np.ndarray) -> np.ndarray:
        """Model time ``alpha + m / B``, seconds, for payload sizes ``nbytes`` in bytes."""
        return self.alpha + np.asarray(nbytes, dtype=float) / self.bandwidth

    @property
    def residuals(self) -> np.ndarray:
        """Relative residual at every measured size, ``measured / model - 1``."""
        return self.measured_s / self.predict(self.bytes) - 1.0

    @property
    def rms_residual(self) -> float:
        """Root-mean-square relative residual over the sizes used."""
        return float(np.sqrt(np.mean(self.residuals[self.used] ** 2)))

    @property
    def max_residual(self) -> float:
        """Largest absolute relative residual over the sizes used."""
        return float(np.max(np.abs(self.residuals[self.used])))

    @property
    def bus_bandwidth(self) -> float:
        """``B x 2(N-1)/N``: bytes/second each rank sends, comparable to a link speed."""
        return self.bandwidth * ring_allreduce_factor(self.ranks)

    @property
    def crossover_bytes(self) -> float:
        """Payload where the two terms are equal, ``alpha x B`` bytes: below it latency-bound."""
        return self.alpha * self.bandwidth


def _check(nbytes: np.ndarray, seconds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = np.asarray(nbytes, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if m.shape != t.shape or m.ndim != 1:
        raise ValueError(
            f"nbytes and seconds must be 1-D and equally long, got {m.shape} and {t.shape}"
        )
    if not (np.all(np.isfinite(m)) and np.all(m > 0) and np.all(np.isfinite(t)) and np.all(t > 0)):
        raise ValueError("nbytes and seconds must be positive, finite numbers")
    return m, t


def _wls(m: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """Relative-weighted least squares; returns (alpha, beta = 1/B)."""
    # Rows divided by t_i: [1/t, m/t] @ [alpha, beta] ~ 1.
    design = np.column_stack([1.0 / t, m / t])
    (alpha, beta), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
    if alpha < 0:  # no measurable fixed cost: refit with alpha = 0
        alpha, beta = 0.0, float(np.sum(m / t) / np.sum((m / t) ** 2))
    return float(alpha), float(beta)


def _ranges(
    m: np.ndarray, t: np.ndarray, small: np.ndarray, large: np.ndarray
) -> tuple[float, float]:
    """Alpha from the small sizes, B from the large, iterated; returns (alpha, beta)."""
    alpha = float(np.median(t[small]))
    beta = float(np.median((t[large] - alpha) / m[large]))
    for _ in range(50):
        new_alpha = max(float(np.median(t[small] - m[small] * max(beta, 0.0))), 0.0)
        new_beta = float(np.median((t[large] - new_alpha) / m[large]))
        done = abs(new_beta - beta) <= 1e-9 * abs(beta)
        done = done and abs(new_alpha - alpha) <= 1e-12 + 1e-9 * alpha
        alpha, beta = new_alpha, new_beta
        if done:
            break
    return alpha, beta


def fit_alpha_beta(
    nbytes: np.ndarray,
    seconds: np.ndarray,
    *,
    ranks: int = 2,
    method: str = "ranges",
    min_bytes: float | None = None,
    max_bytes: float | None = None,
    small_max: float = SMALL_MAX,
    large_min: float = LARGE_MIN,
) -> AlphaBetaFit:
    """Fit ``t(m) = alpha + m / B`` to measured all-reduce times.

    Parameters
    ----------
    nbytes, seconds : numpy.ndarray
        Payload sizes (bytes) and measured all-reduce times (seconds): 1-D, as long, all > 0.
    ranks : int, default 2
        Ranks of the measurement (for the bus bandwidth).
    method : {"ranges", "wls"}, default "ranges"
        See :data:`METHODS`.
    min_bytes, max_bytes : float, optional
        Smallest and largest sizes used (default all); ``"wls"`` needs two sizes between them.
    small_max, large_min : float, default 4 KiB and 1 MiB
        ``"ranges"``: alpha from sizes to ``small_max``, B from ``large_min``; neither range empty.

    Returns
    -------
    AlphaBetaFit
        Times that do not grow with size fit no bandwidth: a ValueError. Times
        of exactly 5 us + m / (2 GB/s) fit alpha 5 us and 2 GB/s.
    """
    ranks = require_int("ranks", ranks, minimum=2)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    m, t = _check(nbytes, seconds)
    lo = float(m.min()) if min_bytes is None else float(min_bytes)
    hi = float(m.max()) if max_bytes is None else float(max_bytes)
    in_range = (m >= lo) & (m <= hi)
    if method == "wls":
        used = in_range
        if used.sum() < 2:
            raise ValueError(
                f"need at least 2 sizes between min_bytes={lo:g} and max_bytes={hi:g} bytes, "
                f"got {int(used.sum())}"
            )
        alpha, beta = _wls(m[used], t[used])
    else:
        small = in_range & (m <= small_max)
        large = in_range & (m >= large_min)
        if not small.any() or not large.any() or small_max >= large_min:
            raise ValueError(
                f"method 'ranges' needs sizes <= small_max={small_max:g} and >= "
                f"large_min={large_min:g} bytes (small_max < large_min) within "
                f"[{lo:g}, {hi:g}]; found {int(small.sum())} small and {int(large.sum())} large"
            )
        used = small | large
        alpha, beta = _ranges(m, t, small, large)
    if beta <= 0:
        raise ValueError(
            "the times do not grow with size in the range fitted, so no bandwidth can be "
            "fitted; include larger messages (max_bytes)"
        )
    mu = m[used]
    return AlphaBetaFit(
        alpha=alpha,
        bandwidth=1.0 / beta,
        ranks=ranks,
        bytes=m,
        measured_s=t,
        used=used,
        min_bytes=float(mu.min()),
        max_bytes=float(mu.max()),
        method=method,
        small_max=float(m[used & (m <= small_max)].max()) if method == "ranges" else None,
        large_min=float(m[used & (m >= large_min)].min()) if method == "ranges" else None,
    )


def fabric_from_fit(fit: AlphaBetaFit, name: str | None = None) -> Fabric:
    """A :class:`~lesson_lib.model.specs.Fabric` that reproduces the fitted all-reduce times.

    ``latency = alpha`` and ``bandwidth = B x 2(N-1)/N`` (bus bandwidth), so
    ``allreduce_time(m, N, fabric)`` equals ``fit.predict(m)`` at the fit's ``N``.

    Parameters
    ----------
    fit : AlphaBetaFit
    name : str, optional
        Display name; defaults to one naming the rank count.

    Returns
    -------
    Fabric
    """
    name = name or f"measured ({fit.ranks} ranks)"
    return Fabric(name=name, latency=fit.alpha, bandwidth=fit.bus_bandwidth)
