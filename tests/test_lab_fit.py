"""The alpha-beta fit (lesson_lib.model.alpha_beta_fit), the Fabric built from it, and the lab's
fit of a measurement (lesson_lib.lab.fit)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib.lab.fit import fit_measurement
from lesson_lib.lab.records import load_reference
from lesson_lib.model.alpha_beta_fit import fabric_from_fit, fit_alpha_beta
from lesson_lib.model.collectives import allreduce_time, crossover_bytes

ALPHA, BANDWIDTH = 4e-6, 3e9
SIZES = 2.0 ** np.arange(3, 27)


def noisy(seed: int, sigma: float = 0.05) -> np.ndarray:
    """Times from the known model with multiplicative log-normal noise."""
    rng = np.random.default_rng(seed)
    return (ALPHA + SIZES / BANDWIDTH) * rng.lognormal(0.0, sigma, SIZES.size)


@pytest.mark.parametrize("method", ["ranges", "wls"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recovers_alpha_and_bandwidth_from_noisy_data(method, seed):
    """With 5% noise both methods recover alpha and B within 3%."""
    fit = fit_alpha_beta(SIZES, noisy(seed), method=method)
    assert_allclose(fit.alpha, ALPHA, rtol=0.03)
    assert_allclose(fit.bandwidth, BANDWIDTH, rtol=0.03)


@pytest.mark.parametrize("method", ["ranges", "wls"])
def test_exact_data_fit_exactly(method):
    """Noise-free data give the true parameters and zero residuals."""
    fit = fit_alpha_beta(SIZES, ALPHA + SIZES / BANDWIDTH, method=method)
    assert_allclose([fit.alpha, fit.bandwidth], [ALPHA, BANDWIDTH], rtol=1e-9)
    assert_allclose(fit.residuals, 0.0, atol=1e-9)
    assert fit.rms_residual < 1e-9


def test_ranges_fit_ignores_middle_sizes_and_outliers():
    """The default fit skips the middle sizes and shrugs off a wild small-size outlier."""
    t = ALPHA + SIZES / BANDWIDTH
    t[(SIZES > 4096) & (SIZES < 2**20)] *= 5  # an algorithm switch in the middle
    t[2] *= 20  # one preempted small size
    fit = fit_alpha_beta(SIZES, t)
    assert_allclose([fit.alpha, fit.bandwidth], [ALPHA, BANDWIDTH], rtol=0.02)
    assert not fit.used[(SIZES > 4096) & (SIZES < 2**20)].any()
    assert (fit.small_max, fit.large_min) == (4096.0, 2.0**20)
    assert "alpha from the sizes 8 B .. 4 KiB" in fit.description
    assert fit.residuals[2] > 10


def test_size_range_limits_are_honoured():
    """min_bytes / max_bytes restrict the sizes used and are reported."""
    fit = fit_alpha_beta(SIZES, ALPHA + SIZES / BANDWIDTH, method="wls", max_bytes=2**20)
    assert fit.max_bytes == 2**20 and fit.used.sum() == 18
    assert fit.residuals.shape == SIZES.shape


def test_crossover_and_bus_bandwidth():
    """Crossover is alpha x B; bus bandwidth is B x 2(N-1)/N."""
    fit = fit_alpha_beta(SIZES, ALPHA + SIZES / BANDWIDTH, ranks=4)
    assert_allclose(fit.crossover_bytes, ALPHA * BANDWIDTH)
    assert_allclose(fit.bus_bandwidth, 1.5 * BANDWIDTH)


@pytest.mark.parametrize("ranks", [2, 4])
def test_fabric_from_fit_reproduces_the_fit(ranks):
    """The Fabric gives the same all-reduce times and crossover as the fit."""
    fit = fit_alpha_beta(SIZES, ALPHA + SIZES / BANDWIDTH, ranks=ranks)
    fabric = fabric_from_fit(fit)
    for m in (8.0, 10 * 1024.0, 40 * 2.0**20):
        assert_allclose(allreduce_time(m, ranks, fabric), fit.predict(m))
    assert_allclose(crossover_bytes(fabric, ranks), fit.crossover_bytes)
    assert f"{ranks} ranks" in fabric.name


def test_bad_inputs_raise_with_the_reason():
    """Mismatched, non-positive, too few or flat data are refused with a reason."""
    with pytest.raises(ValueError, match="equally long"):
        fit_alpha_beta(SIZES, SIZES[:-1])
    with pytest.raises(ValueError, match="positive, finite"):
        fit_alpha_beta(SIZES, -np.ones_like(SIZES))
    with pytest.raises(ValueError, match="at least 2 sizes"):
        fit_alpha_beta(SIZES, SIZES, method="wls", min_bytes=2**30)
    with pytest.raises(ValueError, match="needs sizes <= small_max"):
        fit_alpha_beta(SIZES[:5], SIZES[:5])
    with pytest.raises(ValueError, match="do not grow with size"):
        fit_alpha_beta(SIZES, np.full_like(SIZES, 1e-5))
    with pytest.raises(ValueError, match="method must be one of"):
        fit_alpha_beta(SIZES, SIZES, method="magic")


def test_reference_fit_is_sane():
    """The shipped 2-rank reference fits to microseconds and GB/s."""
    fit = fit_measurement(load_reference(2))
    assert 1e-7 < fit.alpha < 1e-4
    assert 1e8 < fit.bandwidth < 1e11
