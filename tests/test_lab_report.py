"""Tests of lesson_lib.lab.report: live-or-reference runs, the page's numbers, the table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lesson_lib.lab.fit import fabric_from_fit
from lesson_lib.lab.reading import _oversubscription, _regime
from lesson_lib.lab.records import load_reference, measurement_to_dict, write_results
from lesson_lib.lab.report import (
    _provenance,
    _small_message_time,
    fabric_table,
    lab_numbers,
    load_pingpong,
    load_run,
)
from lesson_lib.model.specimen import FAST, SLOW
from lesson_lib.model.units import format_seconds

#: Each test runs an MPI job or looks at MPICH's segments: one worker at a time.
pytestmark = pytest.mark.usefixtures("mpi_alone")


def test_successful_run_is_live(tmp_path):
    """Status 0 and a good file: the run is live, with no note."""
    path = write_results(tmp_path / "r.json", measurement_to_dict(load_reference(2)))
    run = load_run(path, 0, 2)
    assert run.live and run.note == ""


@pytest.mark.parametrize(
    ("status", "content", "note"),
    [
        (6, None, "no MPI is installed here"),
        (4, None, "a rank failed"),
        (0, "", "could not be used"),
        (0, "{broken", "could not be used"),
    ],
)
def test_failed_run_falls_back_to_reference(tmp_path, status, content, note):
    """Any failure gives the shipped reference and a note saying why, never an exception."""
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    run = load_run(path, status, 2)
    assert not run.live and note in run.note
    assert run.measurement.ranks == 2


def test_incomplete_run_falls_back(tmp_path):
    """A sweep stopped by its budget is not shown as the measurement."""
    data = measurement_to_dict(load_reference(2))
    data.update(complete=False, stop_reason="time budget of 1 s exceeded")
    run = load_run(write_results(tmp_path / "r.json", data), 0, 2)
    assert not run.live and "stopped early" in run.note


def test_lab_numbers_are_formatted_strings():
    """Every number is a string with its unit, consistent with the fit."""
    run2, run4 = load_run("/nonexistent", 6, 2), load_run("/nonexistent", 6, 4)
    nums = lab_numbers(run2, 3e-6, run4)
    assert all(isinstance(v, str) and v for v in nums.values())
    assert nums["lab_alpha"] == format_seconds(run2.fit.alpha)
    assert nums["lab_provenance"].startswith("MPI could not run here")
    assert "reference measurement that ships" in nums["lab_provenance"]
    assert nums["lab_decode_latency_total"].endswith(" ms")
    assert nums["lab_small_4_over_2"].endswith("x")
    assert "MPICH" in nums["lab_provenance"]


def test_small_message_time():
    """The small-message time is the median of the medians up to 1 KiB."""
    m = load_reference(2)
    assert m.median_s.min() <= _small_message_time(m) <= m.median_s[m.bytes <= 1024].max()
    with pytest.raises(ValueError, match="no size"):
        _small_message_time(m, max_bytes=1)


def test_provenance_of_a_live_run(tmp_path):
    """A live run's sentence names its machine, date and load."""
    path = write_results(tmp_path / "r.json", measurement_to_dict(load_reference(2)))
    text = _provenance(load_run(path, 0, 2))
    assert text.startswith("This run: ")
    assert "UTC" in text and "load average" in text


def test_fabric_table_rows():
    """One HTML row per fabric (plus the header), decode and prefill in ms."""
    fabric = fabric_from_fit(load_run("/nonexistent", 6, 2).fit)
    table = fabric_table([FAST, SLOW, fabric], 2)
    assert table.count("<tr") == 4 and "<caption>" in table
    assert fabric.name in table and table.count(" ms<") == 12


def test_pingpong_of_the_sweep_or_the_reference(tmp_path):
    """The probe's file after a good run; the reference, with a note, after a failed or empty one."""
    from lesson_lib.lab.pingpong import load_reference_pingpong, write_pingpong

    reference = load_reference_pingpong()
    mine = replace(reference, mean_s=reference.mean_s * 2)
    path = write_pingpong(tmp_path / "pp.json", mine)
    pp, note = load_pingpong(path, 0)
    assert note == "" and pp.latency_s == pytest.approx(2 * reference.latency_s)
    pp, note = load_pingpong(path, 6)
    assert pp.latency_s == reference.latency_s and "exit status 6" in note
    pp, note = load_pingpong(tmp_path / "missing.json", 0)
    assert pp.latency_s == reference.latency_s and "could not be used" in note


def test_regime_words_follow_the_crossover():
    """Messages well below, near and far above alpha x B get the matching words."""
    fit = load_run("/nonexistent", 6, 2).fit
    cross = fit.crossover_bytes
    assert _regime(cross / 10, fit).startswith("well below it") and "latency-bound" in _regime(
        cross / 10, fit
    )
    assert _regime(cross, fit).startswith("close to it (1x)")
    assert _regime(cross * 100, fit) == "far above it (100x): bandwidth-bound"


def test_oversubscription_sentence():
    """The 4-rank reference on 2 cores is called oversubscribed; the 2-rank one is not."""
    assert "oversubscribed, more ranks than cores" in _oversubscription(load_reference(4))
    assert "not oversubscribed" in _oversubscription(load_reference(2))


def test_small_sizes_only_run_is_kept_without_a_fit(tmp_path):
    """A sweep of small messages only cannot give B: kept with fit=None unless a fit is required."""
    data = measurement_to_dict(load_reference(4))
    data["records"] = [r for r in data["records"] if r["bytes"] <= 64 * 1024]
    path = write_results(tmp_path / "r.json", data)
    run = load_run(path, 0, 4, require_fit=False)
    assert run.live and run.fit is None and run.measurement.bytes.max() == 64 * 1024
    strict = load_run(path, 0, 4)
    assert not strict.live and "needs sizes" in strict.note


def test_b_relation_says_which_fit_the_page_b_lands_on():
    """Near the in-cache B, near the beyond-cache B, between them, or no cache fits."""
    from types import SimpleNamespace

    from lesson_lib.lab.reading import _b_relation

    def fit(b):
        return SimpleNamespace(bandwidth=b)

    assert "in-cache" in _b_relation(fit(10.0), fit(10.5), fit(3.0))
    assert "beyond-cache" in _b_relation(fit(3.1), fit(10.0), fit(3.0))
    assert _b_relation(fit(6.0), fit(10.0), fit(3.0)).startswith("falls between the two")
    assert "large sizes" in _b_relation(fit(6.0), None, fit(3.0))
    # This build's case: fits of 1.11 and 1.12 GB/s and a page B of 1.14 agree.
    assert _b_relation(fit(1.14), fit(1.11), fit(1.12)).startswith("agrees with both")
    assert _b_relation(fit(12.0), fit(10.0), fit(3.0)).startswith("lies outside both")


def test_line_verdict_follows_the_measured_ratio():
    from lesson_lib.lab.reading import _line_verdict

    run2 = load_run("/nonexistent", 6, 2)
    m, fit = run2.measurement, run2.fit
    top = float(m.bytes.max())
    ratio = m.median_s[-1] / fit.predict(m.bytes[-1])
    verdict = _line_verdict(m, fit, top)
    if ratio > 1.2:
        assert verdict.startswith("a lower bound")
    elif ratio < 1 / 1.2:
        assert verdict.startswith("an upper bound")
    else:
        assert verdict.startswith("close to")
    assert _line_verdict(m, fit, top * 100).startswith("an extrapolation")


def test_comparison_words_follow_the_numbers():
    """10 % either way is 'about the same'; beyond it the larger side wins."""
    from lesson_lib.lab.reading import _compare

    assert _compare(23.6e-6, 10e-6) == "larger than"  # a measured alpha 2.36x the fast one
    assert _compare(3.4e-6, 10e-6) == "smaller than"
    assert _compare(10.5e-6, 10e-6) == "about the same as"
    with pytest.raises(ValueError, match="reference"):
        _compare(1.0, 0.0)


def test_alpha_reading_never_claims_a_win_the_fit_does_not_show():
    """A fit slower than the fast fabric's 10 us is not said to match or beat it."""
    from dataclasses import replace

    from lesson_lib.lab.reading import _alpha_reading

    fit = load_run("/nonexistent", 6, 2).fit
    slow = _alpha_reading(replace(fit, alpha=23.6e-6))
    assert "23.6 us, is larger than the 10 us" in slow and "can get there" not in slow
    fast = _alpha_reading(replace(fit, alpha=3.4e-6))
    assert "is smaller than the 10 us" in fast and "can get there" in fast


def test_split_verdict_says_latency_bound_only_well_below_the_crossover():
    """Decode at 0.77x the crossover is 'both terms count', not 'latency-bound'."""
    from lesson_lib.lab.reading import _split_summary, _split_verdict

    fit = load_run("/nonexistent", 6, 2).fit
    cross = fit.crossover_bytes
    near = _split_verdict(fit, 0.77 * cross, 3000 * cross)
    assert "decode is latency-bound" not in near and "both terms count" in near
    clean = _split_verdict(fit, 0.1 * cross, 3000 * cross)
    assert "decode is latency-bound" in clean and "prefill is bandwidth-bound" in clean
    assert _split_summary(fit, 0.1 * cross, 3000 * cross).startswith("decode feels")
    assert "both" in _split_summary(fit, cross, cross)


def test_cache_sizes_name_a_single_size_once(tmp_path):
    """A fit to one measured size reads 'the one size 1 MiB', never '1 MiB to 1 MiB'."""
    from lesson_lib.lab.report import lab_numbers

    data = measurement_to_dict(load_reference(2))
    data["machine"]["llc_bytes"] = 8 * 2**20  # an eighth of it is 1 MiB: one size in cache
    run = load_run(write_results(tmp_path / "r.json", data), 0, 2)
    numbers = lab_numbers(run, 5e-6)
    assert numbers["lab_in_cache_sizes"] == "the one size 1 MiB"
    assert numbers["lab_beyond_cache_sizes"].startswith("the sizes from 8 MiB to ")
