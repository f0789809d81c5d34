"""Fit a lab measurement with the model's alpha-beta fit (:mod:`lesson_lib.model.alpha_beta_fit`)."""

from __future__ import annotations

import numpy as np

from lesson_lib.lab.records import Measurement
from lesson_lib.model.alpha_beta_fit import LARGE_MIN, SMALL_MAX, AlphaBetaFit, fit_alpha_beta
from lesson_lib.model.alpha_beta_fit import METHODS as METHODS  # the fit, read here too
from lesson_lib.model.alpha_beta_fit import fabric_from_fit as fabric_from_fit
from lesson_lib.model.units import format_bytes


def fit_measurement(measurement: Measurement, **kwargs: object) -> AlphaBetaFit:
    """Fit a :class:`~lesson_lib.lab.records.Measurement` (its median times).

    Parameters
    ----------
    measurement : Measurement
        From the sweep or nccl-tests.
    **kwargs
        ``method``, ``min_bytes``, ``max_bytes``, ``small_max``, ``large_min``
        as in :func:`~lesson_lib.model.alpha_beta_fit.fit_alpha_beta`.

    Returns
    -------
    AlphaBetaFit
    """
    return fit_alpha_beta(
        measurement.bytes, measurement.median_s, ranks=measurement.ranks, **kwargs
    )


def fit_what_the_sizes_allow(
    measurement: Measurement, min_bytes: float | None = None, max_bytes: float | None = None
) -> tuple[AlphaBetaFit, list[str]]:
    """Fit with ``"ranges"`` when the sizes allow it, else with ``"wls"``, and say so.

    ``"ranges"`` needs sizes up to 4 KiB for alpha and from 1 MiB for B;
    without them a note says which number is extrapolated.

    Parameters
    ----------
    measurement : Measurement
        From the sweep or nccl-tests.
    min_bytes, max_bytes : float, optional
        Size range to fit, bytes.

    Returns
    -------
    tuple
        The fit and a list of notes for the reader (empty for a ``"ranges"`` fit).

    Raises
    ------
    ValueError
        Fewer than two sizes in range, or times that do not grow with size.
    """
    m = np.asarray(measurement.bytes, dtype=float)
    lo = float(m.min()) if min_bytes is None else float(min_bytes)
    hi = float(m.max()) if max_bytes is None else float(max_bytes)
    in_range = m[(m >= lo) & (m <= hi)]
    if in_range.size < 2:
        raise ValueError(
            f"{in_range.size} message size(s) in range; a latency and a bandwidth need at least "
            "two different sizes (nccl-tests: all_reduce_perf -b 8 -e 128M -f 2)"
        )
    small, large = in_range.min() <= SMALL_MAX, in_range.max() >= LARGE_MIN
    if small and large:
        return fit_measurement(measurement, min_bytes=min_bytes, max_bytes=max_bytes), []
    fit = fit_measurement(measurement, method="wls", min_bytes=min_bytes, max_bytes=max_bytes)
    notes = []
    if not small:
        notes.append(
            f"the smallest size measured is {format_bytes(in_range.min(), system='binary')}, so "
            "alpha is extrapolated from larger messages by a straight-line fit over all sizes: "
            "treat it as a rough estimate (measure from 8 B for a real latency)"
        )
    if not large:
        notes.append(
            f"the largest size measured is {format_bytes(in_range.max(), system='binary')}, so "
            "B comes from small messages only: treat it as a rough estimate (measure up to "
            "64 MiB or more for the real bandwidth)"
        )
    return fit, notes
