"""The lab page's sentences: what a measurement and its fit say, in words that follow the numbers."""

from __future__ import annotations

import numpy as np

from lesson_lib.lab.records import Measurement
from lesson_lib.model.alpha_beta_fit import AlphaBetaFit
from lesson_lib.model.specimen import FAST
from lesson_lib.model.units import format_ratio, format_seconds


def _regime(nbytes: float, fit: AlphaBetaFit) -> str:
    """Where ``nbytes`` sits against the crossover: ``"well below it (0.2x): latency-bound"``."""
    ratio = nbytes / fit.crossover_bytes
    shown = format_ratio(ratio, decimals=2 if ratio < 10 else 0)
    if ratio < 0.5:
        return f"well below it ({shown}): latency-bound"
    if ratio <= 2:
        return f"close to it ({shown}): both terms count"
    return f"far above it ({shown}): bandwidth-bound"


def _compare(value: float, reference: float) -> str:
    """``value`` is "smaller than", "larger than" or (within 10 %) "about the same as" the other."""
    if reference <= 0:
        raise ValueError(f"reference must be > 0, got {reference!r}")
    ratio = value / reference
    if abs(ratio - 1) <= 0.1:
        return "about the same as"
    return "smaller than" if ratio < 1 else "larger than"


def _alpha_reading(fit: AlphaBetaFit) -> str:
    """One sentence setting the measured alpha beside the fast fabric's assumed latency."""
    word = _compare(fit.alpha, FAST.latency)
    said = (
        f"This machine's alpha, {format_seconds(fit.alpha)}, is {word} the "
        f"{format_seconds(FAST.latency)} the lesson assumes for the fast fabric."
    )
    if word == "smaller than":
        return (
            f"{said} A CPU can get there because a rank is a process on the same chip and "
            "the all-reduce a copy through shared memory: there is no GPU kernel to launch "
            "and no physical link to cross."
        )
    return (
        f"{said} A rank here is a process on the same chip and the all-reduce a copy "
        "through shared memory, with no GPU kernel to launch and no link to cross, and "
        "still the fixed cost is not smaller: what remains of it is MPI's and the "
        "operating system's, which this lab does not take apart."
    )


def _split(fit: AlphaBetaFit, decode_bytes: float, prefill_bytes: float) -> str:
    """``"clean"``, ``"prefill"`` (only prefill far from the crossover) or ``"neither"``."""
    decode = decode_bytes / fit.crossover_bytes
    prefill = prefill_bytes / fit.crossover_bytes
    if prefill > 2:
        return "clean" if decode < 0.5 else "prefill"
    return "neither"


# What _split_verdict says of each split, and _split_summary in a clause.
_SPLIT_WORDS: dict[str, tuple[str, str]] = {
    "clean": (
        "That is the lesson's split, now in your own numbers: decode is latency-bound "
        "and forgiving of a slow but nimble wire, prefill is bandwidth-bound and is not.",
        "decode feels the wire's latency, prefill its bandwidth",
    ),
    "prefill": (
        "Prefill is bandwidth-bound here as in the lesson, but the decode message is not "
        "far enough below this machine's crossover to be latency-bound: both terms count, "
        "so on this wire decode feels its bandwidth too.",
        "prefill feels the wire's bandwidth, and here decode feels both its terms",
    ),
    "neither": (
        "On this machine the split is not clean: neither message is far from the crossover "
        "on both sides, so both terms count for both.",
        "both messages feel both terms of the wire",
    ),
}


def _split_verdict(fit: AlphaBetaFit, decode_bytes: float, prefill_bytes: float) -> str:
    """The lesson's decode/prefill split as far as the fit shows it (bound as ``_regime`` says)."""
    return _SPLIT_WORDS[_split(fit, decode_bytes, prefill_bytes)][0]


def _split_summary(fit: AlphaBetaFit, decode_bytes: float, prefill_bytes: float) -> str:
    """The summary's clause for ``_split_verdict``: ``"decode feels the wire's latency, ..."``."""
    return _SPLIT_WORDS[_split(fit, decode_bytes, prefill_bytes)][1]


def _measured_ratio(m: Measurement, fit: AlphaBetaFit, nbytes: float) -> float | None:
    """Measured over fitted time at the size nearest ``nbytes``; None if over 2x away."""
    i = int(np.argmin(np.abs(np.log(m.bytes) - np.log(nbytes))))
    near = 0.5 <= m.bytes[i] / nbytes <= 2
    return float(m.median_s[i] / fit.predict(m.bytes[i])) if near else None


def _line_verdict(m: Measurement, fit: AlphaBetaFit, nbytes: float) -> str:
    """How far to trust the fitted line at ``nbytes`` bytes: ``"a lower bound: ... 2.6x ..."``."""
    ratio = _measured_ratio(m, fit, nbytes)
    if ratio is None:
        return "an extrapolation: the sweep did not reach that message size"
    said = (
        f"at that message this machine measured {format_ratio(ratio, decimals=1)} the line's time"
    )
    if ratio > 1.2:
        return f"a lower bound: {said}"
    if ratio < 1 / 1.2:
        return f"an upper bound: {said}"
    return f"close to what was measured: {said}"


def _oversubscription(m: Measurement) -> str:
    """One sentence on whether a sweep had more ranks than cores."""
    cores = m.machine.get("usable_cores") or m.machine.get("logical_cores")
    per_node = m.machine.get("ranks_per_node", m.ranks)
    if m.machine.get("oversubscribed"):
        return (
            f"Here {per_node} ranks shared {cores} cores: the machine was oversubscribed, "
            "more ranks than cores."
        )
    return f"Here {per_node} ranks had {cores} cores, one each at least: not oversubscribed."


def _b_relation(
    main: AlphaBetaFit, inside: AlphaBetaFit | None, beyond: AlphaBetaFit | None
) -> str:
    """Where the page's B (a median of the large sizes) sits against ``cache_fits``' two fits."""
    if inside is None or beyond is None:
        return "comes from the large sizes this sweep measured"
    if abs(inside.bandwidth / beyond.bandwidth - 1) <= 0.1:
        return "agrees with both: on this machine the cache changes the bandwidth little"
    near_in = abs(main.bandwidth / inside.bandwidth - 1) <= 0.1
    near_out = abs(main.bandwidth / beyond.bandwidth - 1) <= 0.1
    if near_in != near_out:
        side, most = ("in-cache", "fit in") if near_in else ("beyond-cache", "exceed")
        return (
            f"lands on the {side} value: most of the large sizes {most} the cache, "
            "and one straight line cannot match both"
        )
    low, high = sorted((inside.bandwidth, beyond.bandwidth))
    if low < main.bandwidth < high:
        return "falls between the two, which no single straight line can match"
    return "lies outside both, a sign that the large sizes were noisy"
