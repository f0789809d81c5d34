"""Tests of lesson_lib.lab.sweep: sizes, statistics, records and a real MPI sweep."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib.lab import launch
from lesson_lib.lab.records import read_results
from lesson_lib.lab.sweep import SweepConfig, _make_record, _message_sizes, _summarize
from lesson_lib.model.collectives import ring_allreduce_factor

#: Each test runs an MPI job or looks at MPICH's segments: one worker at a time.
pytestmark = pytest.mark.usefixtures("mpi_alone")


def test_message_sizes_powers_of_two():
    """The default sweep is every power of two from 8 B to 64 MiB: 24 sizes."""
    sizes = SweepConfig().sizes
    assert sizes[0] == 8 and sizes[-1] == 64 * 2**20
    assert sizes == [2**e for e in range(3, 27)]


def test_message_sizes_per_octave_and_whole_elements():
    """Two sizes per doubling add the midpoints, rounded up to whole elements."""
    assert _message_sizes(8, 64, per_octave=2, itemsize=4) == [8, 12, 16, 24, 32, 48, 64]
    assert all(s % 8 == 0 for s in _message_sizes(8, 1000, per_octave=3, itemsize=8))
    assert _message_sizes(8, 1000)[-1] == 1000


def test_summarize_percentiles():
    """Median and 10th/90th percentiles of the batch times; bad samples raise."""
    stats = _summarize(np.arange(1.0, 12.0))
    assert stats["median_s"] == 6.0 and stats["min_s"] == 1.0
    assert_allclose([stats["p10_s"], stats["p90_s"]], [2.0, 10.0])
    with pytest.raises(ValueError, match="positive"):
        _summarize(np.array([1.0, -1.0]))


@pytest.mark.parametrize("ranks", [2, 3, 4, 8])
def test_record_bus_bandwidth_is_ring_factor_times_algbw(ranks):
    """busbw = algbw x 2(N-1)/N and algbw = bytes / median time (nccl-tests' definitions)."""
    rec = _make_record(1024, ranks, "float32", 10, np.array([1e-5, 2e-5, 3e-5]))
    assert rec["count"] == 256
    assert_allclose(rec["algbw"], 1024 / 2e-5)
    assert_allclose(rec["busbw"], rec["algbw"] * ring_allreduce_factor(ranks))


def test_config_validation_names_the_parameter():
    """Bad settings raise naming the parameter and the allowed values."""
    with pytest.raises(ValueError, match="dtype must be one of"):
        SweepConfig(dtype="bfloat16")
    with pytest.raises(ValueError, match="max_bytes must be an integer from 64 to 1073741824"):
        SweepConfig(min_bytes=64, max_bytes=8)
    with pytest.raises(ValueError, match="fail must be one of"):
        SweepConfig(fail="explode")


def test_batch_time_below_ten_microseconds_is_refused():
    """A batch of 1e-320 s would time the clock: 10 us is the least accepted."""
    assert SweepConfig(batch_time=1e-5).batch_time == 1e-5
    with pytest.raises(
        ValueError, match=r"batch_time must be >= 1e-05 and <= 10 s, got 9.99989e-321"
    ):
        SweepConfig(batch_time=1e-320)
    with pytest.raises(ValueError, match=r"batch_time must be >= 1e-05 and <= 10 s, got 9e-06"):
        SweepConfig(batch_time=9e-6)


def test_importing_the_lab_does_not_import_mpi4py():
    """`import lesson_lib.lab` works without starting (or even importing) MPI."""
    code = "import sys, lesson_lib, lesson_lib.lab; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "False"


@pytest.mark.slow
@pytest.mark.parametrize(("ranks", "max_bytes"), [(2, "4MiB"), (4, "16KiB")])
def test_end_to_end_sweep_under_mpiexec(tmp_path, ranks, max_bytes):
    """The CLI launches mpiexec, shows progress and writes one sane record per size."""
    out = tmp_path / "results.json"
    tag = uuid.uuid4().hex
    before = launch._shm_files()
    cmd = [sys.executable, "-m", "lesson_lib.lab", "run", "-n", str(ranks), "--out", str(out)]
    cmd += ["--max-bytes", max_bytes, "--reps", "7", "--timeout", "600", "--budget", "600"]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=900, env={**os.environ, launch.JOB_ENV: tag}
    )
    assert proc.returncode == 0, proc.stderr
    assert "[lab] all-reduce sweep:" in proc.stderr and "wrote" in proc.stdout
    m = read_results(out)
    expected = _message_sizes(8, 4 * 2**20 if ranks == 2 else 16 * 1024)
    assert m.complete and m.ranks == ranks
    assert m.bytes.astype(int).tolist() == expected
    assert np.all(m.median_s > 0) and np.all(m.p10_s <= m.median_s)
    assert np.all(m.median_s <= m.p90_s)
    assert_allclose(m.busbw, m.algbw * ring_allreduce_factor(ranks))
    assert m.machine["logical_cores"] >= 1 and "MPICH" in m.machine["mpi_library"]
    assert m.machine["oversubscribed"] == (ranks > m.machine["usable_cores"])
    # No speed is asserted on a live sweep: on a shared, busy machine any size's
    # time can be inflated many times. The fit and the report are tested on
    # fixed data (test_lab_fit.py, test_lab_report.py); here the record must be
    # well formed: sizes, sane percentiles, bandwidths consistent with times.
    assert_allclose(m.algbw, m.bytes / m.median_s)
    assert launch._job_processes(tag) == []
    assert launch._stale_shm_files(before) == []
