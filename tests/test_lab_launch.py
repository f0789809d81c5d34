"""Tests of lesson_lib.lab.launch: finding mpiexec, timeouts and clean-up."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from lesson_lib.lab import launch

#: Each test runs an MPI job or looks at MPICH's segments: one worker at a time.
pytestmark = pytest.mark.usefixtures("mpi_alone")


def test_under_mpi_reads_launcher_variables():
    """Hydra, Open MPI and PMIx variables each mark a rank; a plain shell does not."""
    assert launch.under_mpi({"PMI_RANK": "0"})
    assert launch.under_mpi({"OMPI_COMM_WORLD_SIZE": "2"})
    assert launch.under_mpi({"PMIX_RANK": "1"})
    assert not launch.under_mpi({"PATH": "/usr/bin"})


def test_find_mpiexec_prefers_the_one_next_to_python():
    """The mpich wheel's mpiexec sits beside the venv's python and is chosen first."""
    found = launch._find_mpiexec()
    assert Path(found).name == "mpiexec"
    assert os.access(found, os.X_OK)


def test_find_mpiexec_explicit_missing_path_is_a_clear_error():
    """A wrong --mpiexec names the path and says how to fix it."""
    with pytest.raises(
        launch.MPIUnavailableError, match=r"mpiexec not found at '/no/such/mpiexec'"
    ):
        launch._find_mpiexec("/no/such/mpiexec")


def test_find_mpiexec_none_installed(monkeypatch, tmp_path):
    """With no mpiexec beside python nor on PATH the message says how to install one."""
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(launch.MPIEXEC_ENV, raising=False)
    with pytest.raises(launch.MPIUnavailableError, match="mpich"):
        launch._find_mpiexec()


@pytest.fixture
def planted(monkeypatch):
    """Names for test segments that the lab's other jobs will not touch.

    ``SHM_PATTERN`` is changed in this process only, so an MPI job running
    at the same time elsewhere (the book build's lab chapter, another
    worker) neither lists nor removes these files.
    """
    if not launch.SHM_DIR.is_dir():
        pytest.skip("no /dev/shm on this system")
    monkeypatch.setattr(launch, "SHM_PATTERN", "lessontest_shm_*")
    made: list[Path] = []

    def name() -> Path:
        made.append(launch.SHM_DIR / f"lessontest_shm_{uuid.uuid4().hex}")
        return made[-1]

    yield name
    for path in made:
        path.unlink(missing_ok=True)


def test_remove_stale_shm_removes_only_new_unmapped_files(planted):
    """A segment that appeared during the job and nobody maps goes; older ones stay."""
    old, new = planted(), planted()
    old.write_bytes(b"x")
    before = launch._shm_files()
    new.write_bytes(b"x")
    assert launch._remove_stale_shm(before, settle_s=0.05) == [str(new)]
    assert old.exists() and not new.exists()


def test_stale_shm_spares_another_jobs_segment_mapped_while_it_settles(planted):
    """Another job's segment, created but not yet mapped at the first look, is not stale.

    A second job on the host (a real process) has created a segment and maps
    it during the settle time; it also creates a segment then, which is not
    this job's. The settle wait is where the other job acts: it is replaced
    by "let it act and confirm", so the test does not depend on timing.
    """
    mapped_late, appears_late = planted(), planted()
    before = launch._shm_files()
    mapped_late.write_bytes(b"x" * 4096)
    code = (
        "import mmap, sys; sys.stdin.readline(); open(sys.argv[2], 'wb').write(b'x'); "
        "f = open(sys.argv[1], 'r+b'); m = mmap.mmap(f.fileno(), 4096); "
        "print('mapped', flush=True); sys.stdin.readline()"
    )
    other_job = subprocess.Popen(
        [sys.executable, "-c", code, str(mapped_late), str(appears_late)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    settles = []

    def other_job_acts(seconds: float) -> None:
        settles.append(seconds)
        other_job.stdin.write("go\n")
        other_job.stdin.flush()
        assert other_job.stdout.readline() == "mapped\n"

    try:
        assert launch._stale_shm_files(before, sleep=other_job_acts) == []
        assert settles == [launch.SHM_SETTLE_S]
        assert mapped_late.exists() and appears_late.exists()
    finally:
        other_job.kill()
        other_job.wait()
        other_job.stdin.close()
        other_job.stdout.close()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find processes")
def test_stop_job_stops_tagged_processes_in_other_sessions():
    """A process in its own session, found only by its tag, is stopped."""
    tag = uuid.uuid4().hex
    env = {**os.environ, launch.JOB_ENV: tag}
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], env=env, start_new_session=True
    )
    try:
        for _ in range(100):
            if launch._job_processes(tag):
                break
            proc.poll()
            __import__("time").sleep(0.02)
        assert launch._job_processes(tag) == [proc.pid]
        assert launch.stop_job(tag, grace_s=2.0) == [proc.pid]
        proc.wait(timeout=5)
        assert launch._job_processes(tag) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_run_mpiexec_rejects_bad_arguments():
    """Rank count and timeout are checked before anything starts."""
    with pytest.raises(ValueError, match="n must be"):
        launch.run_mpiexec(0, ["-c", "pass"], timeout=5)
    with pytest.raises(ValueError, match="timeout must be"):
        launch.run_mpiexec(2, ["-c", "pass"], timeout=0)
    with pytest.raises(FileNotFoundError, match="hostfile"):
        launch.run_mpiexec(2, ["-c", "pass"], timeout=5, hostfile="/no/such/hosts")


@pytest.mark.slow
def test_run_mpiexec_timeout_stops_every_rank_and_cleans_shm():
    """A job stuck in MPI past its timeout is stopped: no rank or segment is left."""
    tag = uuid.uuid4().hex
    before = launch._shm_files()
    code = (
        "from mpi4py import MPI; import time; MPI.COMM_WORLD.Barrier(); "
        "print('ready', flush=True); time.sleep(60)"
    )
    # The ranks must be inside MPI when the limit strikes. On a busy machine
    # starting them can take longer than a short limit, so the limit doubles
    # until both got there (the test is about stopping them, not about speed).
    for timeout in (3, 6, 12, 24, 48):
        result = launch.run_mpiexec(2, ["-c", code], timeout=timeout, tag=tag)
        assert result.timed_out
        assert launch._job_processes(tag) == []
        if result.output.count("ready") == 2:
            break
    assert result.output.count("ready") == 2, "ranks never started within 48 s"
    assert timeout - 0.5 < result.elapsed_s < timeout + 60
    assert launch._job_processes(tag) == []
    assert launch._stale_shm_files(before) == []


@pytest.mark.slow
def test_run_mpiexec_success_relays_output(capsys):
    """A short job's output is both returned and copied to the relay stream."""
    # One write per line: print('rank', r) would make several writes, which
    # two ranks can interleave on the shared pipe.
    code = "import sys; from mpi4py import MPI; sys.stdout.write(f'rank {MPI.COMM_WORLD.rank}\\n')"
    result = launch.run_mpiexec(2, ["-c", code], timeout=300, relay=sys.stderr)
    assert result.returncode == 0 and not result.timed_out
    assert sorted(ln for ln in result.output.splitlines() if ln.startswith("rank")) == [
        "rank 0",
        "rank 1",
    ]
    assert "rank 0" in capsys.readouterr().err
