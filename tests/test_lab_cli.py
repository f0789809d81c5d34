"""Tests of lesson_lib.lab.cli: options, messages and exit status of every failure."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid

import pytest

from lesson_lib.lab import cli, launch
from lesson_lib.lab.records import read_results


def run_main(argv):
    """Call cli.main in-process; returns (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def job(monkeypatch):
    """A fresh job tag; afterwards no tagged process and no stale MPICH segment may remain."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv(launch.JOB_ENV, tag)
    before = launch.shm_files()
    yield tag
    assert launch.job_processes(tag) == [], "processes of the job were left running"
    left = (launch.shm_files() - before) - launch.mapped_shm_files()
    assert not left, f"shared-memory files left behind: {left}"


def test_parse_size_units():
    """Plain, binary (K/M/G, KiB...) and decimal (KB/MB/GB) sizes parse to bytes."""
    assert cli.parse_size("8") == 8
    assert cli.parse_size("10KiB") == 10 * 1024
    assert cli.parse_size("64M") == 64 * 2**20
    assert cli.parse_size("1MB") == 10**6
    assert cli.parse_size("1.5K") == 1536


@pytest.mark.parametrize("bad", ["", "12Q", "-4", "0", "MiB", "0.2"])
def test_parse_size_rejects_non_sizes(bad):
    """Anything that is not a positive size raises ValueError naming the input."""
    with pytest.raises(ValueError, match="size must be"):
        cli.parse_size(bad)


def test_help_returns_zero(capsys):
    """--help prints usage and returns 0 instead of exiting the interpreter."""
    assert cli.main(["--help"]) == 0
    assert "python -m lesson_lib.lab" in capsys.readouterr().out


def test_bad_options_return_usage_status():
    """Unknown units and out-of-range settings give status 2 and say what is allowed."""
    status, _, err = run_main("run --max-bytes 12Q")
    assert status == cli.EXIT_USAGE and "size must be" in err
    status, _, err = run_main("run --reps 1")
    assert status == cli.EXIT_USAGE and "reps must be an integer from 3 to 1000" in err
    status, _, err = run_main("run -n 1")
    assert status == cli.EXIT_USAGE and "ranks must be an integer >= 2" in err


def test_missing_mpiexec_is_reported_with_non_zero_exit():
    """A terminal run with no usable mpiexec says so and exits 6, without a traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "lesson_lib.lab", "run", "--mpiexec", "/no/such/mpiexec"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, launch.JOB_ENV: uuid.uuid4().hex},
    )
    assert proc.returncode == cli.EXIT_NO_MPI
    assert "cannot start MPI: mpiexec not found" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_show_empty_corrupt_and_missing_files(tmp_path):
    """Empty, truncated and missing results files each give status 7 and a clear message."""
    empty = tmp_path / "empty.json"
    empty.write_text("")
    status, _, err = run_main(["show", str(empty)])
    assert status == cli.EXIT_BAD_FILE and "is empty" in err
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "lesson_lib.lab/1", "records": [')
    status, _, err = run_main(["show", str(broken)])
    assert status == cli.EXIT_BAD_FILE and "not valid JSON (line 1" in err
    status, _, err = run_main(["show", str(tmp_path / "absent.json")])
    assert status == cli.EXIT_BAD_FILE and "does not exist" in err


def test_show_reference_prints_table_and_fit():
    """show prints the label, one row per size and the fitted alpha and B."""
    from lesson_lib.lab.records import REFERENCE_FILES, reference_path

    status, out, _ = run_main(["show", str(reference_path(REFERENCE_FILES[2]))])
    assert status == 0
    assert "MPI all-reduce, 2 ranks" in out and "alpha = " in out and "B = " in out
    assert out.count(" us ") + out.count(" ms ") >= 10


def test_nccl_command_reports_malformed_lines(tmp_path):
    """Importing nccl-tests output with a broken line names the line and exits 7."""
    text = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        "           8             2     float     sum      -1    10.48    0.00    0.00      0"
        "    10.32    0.00    0.00      0\n"
        "        1024           256     float     sum      -1    oops\n"
    )
    src = tmp_path / "perf.txt"
    src.write_text(text)
    status, _, err = run_main(["nccl", str(src), "--out", str(tmp_path / "r.json"), "--ranks", "2"])
    assert status == cli.EXIT_BAD_FILE and "line 3" in err
    status, out, _ = run_main(
        ["nccl", str(src), "--out", str(tmp_path / "r.json"), "--ranks", "2", "--lenient"]
    )
    assert status == 0 and "skipped malformed lines: 3" in out


@pytest.mark.slow
def test_rank_that_exits_is_reported(job, tmp_path):
    """A rank that dies mid-sweep: status 4, the rank named, nothing left behind."""
    out = tmp_path / "r.json"
    status, _, err = run_main(
        f"run -n 2 --out {out} --max-bytes 64KiB --reps 3 --simulate-failure exit --timeout 300"
    )
    assert status == cli.EXIT_RANK_FAILED
    assert "the MPI job failed" in err and "rank 1: exiting on purpose" in err
    assert not out.exists()


@pytest.mark.slow
def test_rank_that_raises_aborts_the_job(job, tmp_path):
    """An exception in one rank aborts every rank (no hang): status 4 with the error text."""
    status, _, err = run_main(
        f"run -n 2 --out {tmp_path / 'r.json'} --max-bytes 64KiB --reps 3 "
        "--simulate-failure raise --timeout 300"
    )
    assert status == cli.EXIT_RANK_FAILED
    assert "RuntimeError: error raised on purpose" in err


@pytest.mark.slow
def test_hung_rank_is_stopped_at_the_timeout(job, tmp_path):
    """A rank that hangs: the job is stopped after --timeout, status 5, nothing left."""
    status, _, err = run_main(
        f"run -n 2 --out {tmp_path / 'r.json'} --max-bytes 64KiB --reps 3 "
        "--simulate-failure hang --timeout 3"
    )
    assert status == cli.EXIT_TIMEOUT
    assert "did not finish within its timeout of 3 s" in err


@pytest.mark.slow
def test_time_budget_exceeded(job, tmp_path):
    """A sweep over its budget stops early: status 3 and a partial file marked incomplete."""
    out = tmp_path / "r.json"
    status, _, err = run_main(f"run -n 2 --out {out} --budget 0.05 --reps 3 -q --timeout 60")
    assert status == cli.EXIT_BUDGET
    assert "time budget of 0.05 s exceeded" in err
    partial = read_results(out)
    assert not partial.complete and "time budget" in partial.stop_reason
    assert 1 <= len(partial.bytes) < 24
    assert json.loads(out.read_text())["complete"] is False
