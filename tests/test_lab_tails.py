"""The lab's one-by-one timing: p50 and p99 per small size, and a straggler under real MPI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from lesson_lib.lab import main
from lesson_lib.lab.records import FORMAT, ResultsError, load_reference, read_results
from lesson_lib.lab.sweep import SweepConfig, _make_record

US = 1e-6


def test_record_keeps_every_time_and_its_p50_p99():
    """1, 2, ..., 100 us: the p50 interpolates to 50.5 us, the p99 to 99 + 0.01 = 99.01 us."""
    each = np.arange(1, 101) * US
    rec = _make_record(8, 2, "float32", 10, np.full(5, 4 * US), each)
    assert rec["p50_s"] == pytest.approx(50.5 * US)
    assert rec["p99_s"] == pytest.approx(99.01 * US)
    assert len(rec["each_s"]) == 100 and rec["median_s"] == pytest.approx(4 * US)
    assert "p50_s" not in _make_record(8, 2, "float32", 10, np.full(5, 4 * US))


@pytest.mark.parametrize(("option", "value"), [("single", -1), ("straggler_us", -5.0)])
def test_config_refuses_bad_tail_options(option, value):
    with pytest.raises(ValueError, match=option):
        SweepConfig(**{option: value})


def _file(tmp_path, **extra):
    record = {"bytes": 8, "median_s": 4e-6, **extra}
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": FORMAT, "ranks": 2, "records": [record]}))
    return path


def test_files_without_single_times_still_load():
    """The shipped reference files predate the one-by-one timing: p50 and p99 are NaN."""
    m = load_reference(2)
    assert np.all(np.isnan(m.p50_s)) and np.all(np.isnan(m.p99_s))


def test_show_prints_p50_and_p99(tmp_path, capsys):
    path = _file(tmp_path, p50_s=5e-6, p99_s=9e-6, each_s=[5e-6, 9e-6])
    assert read_results(path).p99_s[0] == 9e-6
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "p50" in shown and "9 us" in shown


@pytest.mark.parametrize("each", [[1e-6, -1.0], "fast", [float("1e7")]])
def test_bad_single_times_are_refused(tmp_path, each):
    with pytest.raises(ResultsError, match="each_s"):
        read_results(_file(tmp_path, each_s=each))


@pytest.mark.usefixtures("mpi_alone")
def test_straggler_under_mpi_adds_its_delay_to_the_median(tmp_path):
    """Two ranks, the last one 400 us late at every all-reduce: the p50 grows by about 400 us.

    Every one-by-one time is the slowest rank's, which waited the delay first: none is shorter. The
    growth of the p50 is held to the delay within -25 % and +50 % when the machine was not busy
    (load average at most its cores, as both results files record); on a busy one a rank that
    loses its core for a scheduler slice (milliseconds) inflates any time, and only the bound
    below holds.
    """
    delay = 400.0
    p50, quiet = [], True
    for straggler in (0.0, delay):
        out = tmp_path / f"s{straggler:g}.json"
        argv = [sys.executable, "-m", "lesson_lib.lab", "run", "-n", "2", "--out", str(out)]
        argv += ["--max-bytes", "64", "--reps", "3", "--single", "100", "--quiet"]
        argv += ["--straggler-us", str(straggler)]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "p50" in proc.stdout and "p99" in proc.stdout
        m = read_results(out)
        assert m.config["straggler_us"] == straggler
        each = json.loads(out.read_text())["records"][0]["each_s"]
        assert len(each) == 100 and min(each) >= straggler * US
        p50.append(float(np.median(m.p50_s)))
        quiet &= m.machine["load_1min"] <= m.machine["logical_cores"]
    assert p50[1] > delay * US
    if quiet:
        assert 0.75 * delay * US < p50[1] - p50[0] < 1.5 * delay * US
