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

#: Each test runs an MPI job or looks at MPICH's segments: one worker at a time.
pytestmark = pytest.mark.usefixtures("mpi_alone")


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
    before = launch._shm_files()
    yield tag
    assert launch._job_processes(tag) == [], "processes of the job were left running"
    left = launch._stale_shm_files(before)
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
    assert status == cli.EXIT_USAGE and "ranks must be an integer from 2 to 256" in err


def test_an_mpi_job_of_one_rank_is_refused_naming_mpiexec_n(tmp_path, job):
    """Under the user's own ``mpiexec -n 1`` the sweep once ran, then its reader refused the
    file ("'ranks' must be ... got 1"), a count typed to mpiexec, not to this command."""
    out = tmp_path / "one.json"
    command = [launch._find_mpiexec(), "-n", "1", sys.executable, "-m", "lesson_lib.lab"]
    proc = subprocess.run(
        [*command, "run", "--out", str(out), "-q"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == cli.EXIT_USAGE, proc.stderr
    assert "lab: bad option: mpiexec -n must be from 2 to 4096 for a sweep, got '1'" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("size", ["5000", "x"])
def test_an_mpi_job_too_large_is_refused_before_mpi_starts(monkeypatch, size):
    """5,000 ranks once failed at the first size with "n must be ...", a name nobody typed."""
    monkeypatch.setenv("PMI_RANK", "0")
    monkeypatch.setenv("PMI_SIZE", size)
    status, _, err = run_main("run -q --out never.json")
    assert status == cli.EXIT_USAGE
    assert f"mpiexec -n must be from 2 to 4096 for a sweep, got '{size}'" in err


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
    """Over its budget: status 3, partial results beside --out, a complete --out untouched."""
    out = tmp_path / "r.json"
    good = _good_results(out)
    status, _, err = run_main(f"run -n 2 --out {out} --budget 0.05 --reps 3 -q --timeout 60")
    assert status == cli.EXIT_BUDGET
    assert "time budget of 0.05 s exceeded" in err and f"{out} was not changed" in err
    assert out.read_bytes() == good
    partial_path = tmp_path / "r.incomplete.json"
    partial = read_results(partial_path)
    assert not partial.complete and "time budget" in partial.stop_reason
    assert 1 <= len(partial.bytes) < 24
    assert json.loads(partial_path.read_text())["complete"] is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.incomplete.json", "r.json"]


def _good_results(out):
    """Put a complete earlier results file (the shipped 2-rank reference) at ``out``."""
    from lesson_lib.lab.records import REFERENCE_FILES, reference_path

    data = reference_path(REFERENCE_FILES[2]).read_bytes()
    out.write_bytes(data)
    return data


def test_mpiexec_that_runs_nothing_never_reports_the_old_file(job, tmp_path):
    """An 'mpiexec' that exits 0 without starting ranks: status 4, the old --out unchanged."""
    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    out = tmp_path / "r.json"
    good = _good_results(out)
    status, stdout, err = run_main(f"run -n 2 --out {out} --mpiexec {fake} -q --timeout 30")
    assert status == cli.EXIT_RANK_FAILED
    assert "without writing any results" in err and f"{out} was not changed" in err
    assert "wrote" not in stdout
    assert out.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mpiexec", "r.json"]


@pytest.mark.slow
def test_a_complete_run_replaces_the_file_with_a_fresh_one(job, tmp_path):
    """A run that finishes writes --out atomically, tagged with this job, no temp file left."""
    out = tmp_path / "r.json"
    _good_results(out)
    status, stdout, _ = run_main(f"run -n 2 --out {out} --max-bytes 4KiB --reps 3 -q --timeout 60")
    assert status == 0 and f"wrote 10 sizes to {out}" in stdout
    data = json.loads(out.read_text())
    assert data["job"] == job and data["complete"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.slow
def test_run_with_pingpong_probes_on_the_sweeps_ranks_in_one_job(job, tmp_path, monkeypatch):
    """--pingpong: one mpiexec runs the sweep and the probe; both files written, no temp file."""
    launched = []
    real = launch.run_mpiexec
    monkeypatch.setattr(launch, "run_mpiexec", lambda *a, **k: launched.append(a) or real(*a, **k))
    out, probe = tmp_path / "r.json", tmp_path / "pp.json"
    status, stdout, err = run_main(
        f"run -n 2 --out {out} --max-bytes 64 --reps 3 -q --timeout 60 --pingpong {probe}"
    )
    assert status == 0, err
    assert len(launched) == 1
    assert f"wrote {probe}" in stdout and "pingpong one-way latency" in stdout
    data = json.loads(probe.read_text())
    # sizes 1, 2, 4, ..., 1024 B: 2**0 to 2**10, eleven, each 2000 round trips (none over 16 KiB)
    assert data["bytes"] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert data["samples"] == [2000] * 11
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pp.json", "r.json"]


def test_pingpong_file_that_is_a_folder_is_refused_before_mpi_starts(tmp_path):
    """--pingpong naming a folder is a usage error naming the option."""
    status, _, err = run_main(f"run -n 2 --out {tmp_path / 'r.json'} --pingpong {tmp_path}")
    assert status == cli.EXIT_USAGE and "--pingpong" in err


@pytest.mark.parametrize(
    "argv, expected",
    [
        ("run -n 100000", "ranks must be an integer from 2 to 256"),
        ("run --max-bytes 99999999999999G", "size must be at most"),
        ("run --max-bytes 4G", "max_bytes must be an integer from 8 to 1073741824"),
        ("run --max-bytes " + "9" * 400, "size must be at most"),
        ("run --budget 1e300", "budget must be"),
        ("run --timeout inf", "--timeout must be"),
    ],
)
def test_out_of_range_options_are_usage_errors(argv, expected):
    """Sizes, ranks and times beyond their bounds: status 2 and a message, before MPI starts."""
    status, _, err = run_main(argv)
    assert status == cli.EXIT_USAGE, err
    assert expected in err and "Traceback" not in err


def _hostile_files(tmp_path):
    """Odd inputs a results-reading command can be given, by name."""
    from lesson_lib.lab.records import REFERENCE_FILES, reference_path

    ref = json.loads(reference_path(REFERENCE_FILES[2]).read_text())
    files = {"folder": tmp_path / "a-folder"}
    files["folder"].mkdir()
    huge = dict(ref, records=[dict(ref["records"][0], bytes=10**400)])
    files["huge"] = tmp_path / "huge.json"
    files["huge"].write_text(json.dumps(huge))
    files["deep"] = tmp_path / "deep.json"
    files["deep"].write_text("[" * 100_000 + "]" * 100_000)
    files["binary"] = tmp_path / "binary.json"
    files["binary"].write_bytes(bytes(range(256)) * 100)
    files["ranks"] = tmp_path / "ranks.json"
    files["ranks"].write_text(json.dumps(dict(ref, ranks=10**400)))
    files["config"] = tmp_path / "config.json"
    files["config"].write_text(json.dumps(dict(ref, config=[1, 2])))
    # more ranks than the model's collectives accept once read as "bad option: n must be"
    files["many_ranks"] = tmp_path / "many-ranks.json"
    files["many_ranks"].write_text(json.dumps(dict(ref, ranks=5000)))
    files["fifo"] = tmp_path / "fifo.json"
    os.mkfifo(files["fifo"])
    files["zero"] = tmp_path / "zero.json"
    files["zero"].symlink_to("/dev/zero")
    return files


@pytest.mark.parametrize(
    "case", ["folder", "huge", "deep", "binary", "ranks", "config", "many_ranks", "fifo", "zero"]
)
def test_show_turns_odd_files_into_one_line(tmp_path, case):
    """show on a folder, bytes of 10**400, 100k-deep JSON, binary junk, 5000 ranks, a FIFO, a
    link to /dev/zero: status 7, one line."""
    path = _hostile_files(tmp_path)[case]
    status, out, err = run_main(["show", str(path)])
    assert status == cli.EXIT_BAD_FILE, (out, err)
    assert err.startswith("lab: ") and err.count("\n") == 1 and len(err) < 400
    assert "Traceback" not in err


@pytest.mark.parametrize("case", ["folder", "deep", "binary", "fifo", "zero"])
def test_nccl_import_turns_odd_files_into_one_line(tmp_path, case):
    """The nccl importer on a folder, junk, a FIFO or /dev/zero: status 7 and a short message."""
    path = _hostile_files(tmp_path)[case]
    status, _, err = run_main(["nccl", str(path), "--out", str(tmp_path / "r.json")])
    assert status == cli.EXIT_BAD_FILE
    assert err.startswith("lab: ") and "Traceback" not in err and len(err) < 600


def test_output_paths_that_are_folders_are_usage_errors(tmp_path):
    """--out naming a folder (or a missing folder) is refused before any work."""
    src = tmp_path / "perf.txt"
    src.write_text("# nothing\n")
    for argv in (
        ["nccl", str(src), "--out", str(tmp_path)],
        ["nccl", str(src), "--out", str(tmp_path / "no" / "such" / "r.json")],
        ["run", "--out", str(tmp_path)],
        ["pingpong", "--out", str(tmp_path)],
    ):
        status, _, err = run_main(argv)
        assert status == cli.EXIT_USAGE, (argv, err)
        assert "--out" in err


def test_odd_machine_facts_do_not_break_show(tmp_path):
    """A non-string mpi_library or cpu (hand-edited file) is dropped, not a traceback."""
    from lesson_lib.lab.records import REFERENCE_FILES, reference_path

    ref = json.loads(reference_path(REFERENCE_FILES[2]).read_text())
    ref["machine"].update(mpi_library=12, cpu=["x"], devices=[1, 2], logical_cores=10**400)
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(ref))
    status, out, err = run_main(["show", str(path)])
    assert status == 0, err
    assert "MPI all-reduce, 2 ranks" in out


def test_output_paths_that_are_special_files_are_refused(tmp_path):
    """A link like /dev/stdout, a FIFO, another link or a copy of a device node as --out: exit 2, and the special
    file stays what it was (as root a rename over it would have made it a regular file)."""
    import stat
    from pathlib import Path

    src = Path(__file__).parent / "data" / "nccl-tests" / "gb10-2ranks-from-8KiB.txt"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    stdout = tmp_path / "stdout"  # what /dev/stdout is, without risking the real one
    stdout.symlink_to("/proc/self/fd/1")
    targets = [str(stdout), str(fifo), str(link)]
    if os.geteuid() == 0:
        os.mknod(tmp_path / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        targets.append(str(tmp_path / "null"))
    for target in targets:
        for argv in (["nccl", str(src), "--out", target], ["run", "--out", target]):
            status, _, err = run_main(argv)
            assert status == cli.EXIT_USAGE, (argv, err)
            assert "not a regular file" in err or "a symbolic link" in err, err
    assert stdout.is_symlink() and stat.S_ISFIFO(fifo.lstat().st_mode)
    assert link.is_symlink() and not (tmp_path / "elsewhere.json").exists()
    if os.geteuid() == 0:
        assert stat.S_ISCHR((tmp_path / "null").lstat().st_mode)


def _reference_data() -> dict:
    from lesson_lib.lab.records import REFERENCE_FILES, read_json, reference_path

    return read_json(reference_path(REFERENCE_FILES[2]))


def test_show_escapes_every_field_it_prints_from_the_file(tmp_path):
    """A results file whose facts hold a clipboard write, a screen clear, a title change and
    a newline that would forge a line: show prints them as visible escapes, one line each."""
    data = _reference_data()
    data["machine"]["cpu"] = "Xeon\x1b]52;c;cHduZWQ=\x07"
    data["machine"]["mpi_library"] = "MPICH\x1b[2J\x1b[H"
    data["machine"]["devices"] = ["GPU\x1b]0;owned\x07"]
    data["complete"] = False
    data["stop_reason"] = "budget\nfit t(m) = alpha + m/B over 8 B .. 64 MiB: forged"
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    status, out, _ = run_main(["show", str(path)])
    assert status == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]52;c;" in out and "\\x1b[2J" in out
    assert not any(line.startswith("fit t(m)") and "forged" in line for line in out.splitlines())
    assert "budget\\nfit t(m)" in out


def test_show_and_nccl_refuse_a_fifo_at_once(tmp_path):
    """A FIFO as the file: exit 7 without waiting for a writer (it would block for ever)."""
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    for argv in (["show", str(fifo)], ["nccl", str(fifo), "--out", str(tmp_path / "r.json")]):
        proc = subprocess.run(
            [sys.executable, "-m", "lesson_lib.lab", *argv],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == cli.EXIT_BAD_FILE, proc.stderr
        assert "a FIFO (named pipe), not a regular file" in proc.stderr
        assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("time_text", ["1e-320", "0.0000000000000001", "5e-324"])
def test_nccl_refuses_a_denormal_or_tiny_time_with_exit_7(tmp_path, time_text):
    """A time that passes 'seconds > 0' but is below a picosecond: a malformed line (exit 7),
    named with its number, never a ZeroDivisionError; --lenient skips it."""
    text = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        "           8             2     float     sum      -1    10.48    0.00    0.00      0"
        "    10.32    0.00    0.00      0\n"
        f"        1024           256     float     sum      -1    {time_text}    0.10    0.10"
        "      0    10.32    0.10    0.10      0\n"
    )
    src = tmp_path / "perf.txt"
    src.write_text(text)
    out = tmp_path / "r.json"
    status, _, err = run_main(["nccl", str(src), "--out", str(out), "--ranks", "2"])
    assert status == cli.EXIT_BAD_FILE and "line 3" in err and "below 1e-12 s" in err
    assert "Traceback" not in err and not out.exists()
    status, stdout, _ = run_main(["nccl", str(src), "--out", str(out), "--ranks", "2", "--lenient"])
    assert status == 0 and "skipped malformed lines: 3" in stdout


def test_show_refuses_a_denormal_time_in_a_results_file(tmp_path):
    """A results file with median_s = 1e-320: exit 7, the record and field named."""
    data = _reference_data()
    data["records"][0]["median_s"] = 1e-320
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    status, _, err = run_main(["show", str(path)])
    assert status == cli.EXIT_BAD_FILE and "record 0 needs a number 'median_s' from 1e-12" in err


@pytest.mark.slow
def test_sigterm_stops_a_run_cleanly(job, tmp_path):
    """SIGTERM to `lab run` while its ranks hang: exit 143, one line and no traceback, the
    earlier --out file untouched, no staging file, no launcher folder, no rank left (the
    job fixture checks the processes and MPICH's segments)."""
    import tempfile
    import time
    from pathlib import Path

    out = tmp_path / "r.json"
    good = _good_results(out)
    scratch = Path(tempfile.mkdtemp(prefix="lab-tmp-"))  # its own TMPDIR: /tmp is shared
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "lesson_lib.lab", "run", "-n", "2", "--out", str(out),
            "--max-bytes", "64KiB", "--reps", "3", "--simulate-failure", "hang",
            "--timeout", "120",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(launch._job_processes(job)) < 3:  # mpiexec and both ranks
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(1)
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "interrupted" in err and "Traceback" not in err
    assert out.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    assert list(scratch.iterdir()) == []
    scratch.rmdir()
