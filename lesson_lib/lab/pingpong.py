"""MPI's own probe, ``python -m mpi4py.bench pingpong``, as a sanity check of the fit.

mpi4py reports half a round trip between ranks 0 and 1 (seconds) for sizes 1 B, 2 B, 4 B, ...; a
fitted 2-rank ``alpha`` should be about 1-3x this latency. The probe runs as a job of its own
(:func:`run_pingpong`) or, after a sweep, on the sweep's ranks (:func:`probe_in_job`, ``lab run
--pingpong``), which saves starting MPI again. Output parsed (mpi4py 4.x)::

    # MPI PingPong Test
    # Size [B]  Bandwidth [MB/s] | Time Mean [s] ± StdDev [s]  Samples
             1              0.55 | 1.8265244e-06 ± 9.6155e-07    10000
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from lesson_lib.lab.launch import LaunchResult, run_mpiexec
from lesson_lib.lab.machine import local_facts
from lesson_lib.lab.records import MIN_SECONDS
from lesson_lib.model._validate import require_int, require_number

FORMAT = "lesson_lib.lab.pingpong/1"
#: The signs mpi4py.bench prints between a mean and its standard deviation.
_PLUS_MINUS = ("\u00b1", "+/-")
#: Sizes at or below this many bytes define the latency.
SMALL_BYTES = 8
#: Longest line of the table read, characters (a row is about 60).
MAX_LINE_CHARS = 1000
#: Largest message of the probe run after a sweep, in bytes; enough for the latency (<= 8 B).
IN_JOB_MAX_BYTES = 1 << 10


class PingPongError(RuntimeError):
    """The pingpong probe could not run or its output could not be read."""


@dataclass(frozen=True)
class PingPong:
    """One pingpong measurement."""

    #: Message sizes, bytes.
    bytes: np.ndarray
    #: Mean one-way time (half a round trip), seconds.
    mean_s: np.ndarray
    #: Its standard deviation, seconds.
    std_s: np.ndarray
    #: Round trips timed per size.
    samples: np.ndarray
    #: ISO 8601 time of the run (UTC) or ``""``.
    started: str = ""
    #: Where it ran.
    machine: dict | None = None

    @property
    def latency_s(self) -> float:
        """One-way latency in seconds, the median of the mean times of messages <= 8 B."""
        small = self.bytes <= SMALL_BYTES
        if not small.any():
            small = self.bytes == self.bytes.min()
        return float(np.median(self.mean_s[small]))

    @property
    def bandwidth(self) -> float:
        """Largest point-to-point rate seen, bytes/second (size / one-way time)."""
        return float(np.max(self.bytes / self.mean_s))

    def to_dict(self) -> dict:
        """JSON-ready content (see ``_pingpong_from_dict``)."""
        return {
            "format": FORMAT,
            "started": self.started,
            "machine": self.machine or {},
            "bytes": [int(b) for b in self.bytes],
            "mean_s": [float(t) for t in self.mean_s],
            "std_s": [float(s) for s in self.std_s],
            "samples": [int(n) for n in self.samples],
        }


def _row(line: str) -> tuple[int, str, str, int] | None:
    """(size, mean, std, samples) of a row ``size bw | mean ± std n``, split on white space."""
    if len(line) > MAX_LINE_CHARS:
        return None
    left, bar, right = line.partition("|")
    first, second = left.split(), right.split()
    if not bar or len(first) != 2 or len(second) != 4 or second[1] not in _PLUS_MINUS:
        return None
    size, n = first[0], second[3]
    if not (size.isascii() and size.isdigit() and n.isascii() and n.isdigit()):
        return None
    return int(size), second[0], second[2], int(n)


def _parse_pingpong(text: str) -> PingPong:
    """Read the table ``python -m mpi4py.bench pingpong`` prints."""
    rows = []
    for line in text.splitlines():
        row = _row(line)
        if row is None:
            continue
        size, mean_text, std_text, n = row
        try:
            mean, std = float(mean_text), float(std_text)
        except ValueError:
            continue
        if math.isfinite(mean) and mean >= MIN_SECONDS:
            rows.append((size, mean, std, n))
    if not rows:
        raise PingPongError("no pingpong table found in the output of mpi4py.bench pingpong")
    sizes, means, stds, counts = zip(*rows, strict=True)
    return PingPong(np.array(sizes, float), np.array(means), np.array(stds), np.array(counts))


def _pingpong_from_dict(data: dict) -> PingPong:
    """Rebuild a :class:`PingPong` from :meth:`PingPong.to_dict` content."""
    if data.get("format") != FORMAT:
        raise PingPongError(f"not a pingpong file: format is {data.get('format')!r}")
    try:
        arrays = [np.asarray(data[k], dtype=float) for k in ("bytes", "mean_s", "std_s", "samples")]
    except (KeyError, TypeError, ValueError) as exc:
        raise PingPongError(f"pingpong file is malformed: {exc}") from None
    if len({a.shape for a in arrays}) != 1 or arrays[0].size == 0 or np.any(arrays[1] <= 0):
        raise PingPongError("pingpong file is malformed: arrays differ in length or times <= 0")
    return PingPong(*arrays, started=str(data.get("started", "")), machine=data.get("machine"))


def _read_pingpong(path: str | os.PathLike) -> PingPong:
    """Read a pingpong JSON file (empty or corrupt files raise a clear error)."""
    from lesson_lib.lab.records import read_json

    return _pingpong_from_dict(read_json(path, what="pingpong file"))


def load_reference_pingpong() -> PingPong:
    """The pingpong measured with the shipped reference all-reduce sweeps.

    Returns
    -------
    PingPong
    """
    from lesson_lib.lab.records import REFERENCE_PINGPONG, reference_path

    return _read_pingpong(reference_path(REFERENCE_PINGPONG))


def _pingpong_args(max_bytes: int = 1 << 22, loop: int = 2000) -> list[str]:
    """Arguments after the Python interpreter for a short pingpong run."""
    max_bytes = require_int("max_bytes", max_bytes)
    loop = require_int("loop", loop)
    return [
        "-m", "mpi4py.bench", "pingpong", "-n", str(max_bytes), "-l", str(loop),
        "--loop-large", str(max(loop // 10, 10)), "--loop-huge", "10",
    ]  # fmt: skip


def probe_in_job(comm: object, max_bytes: int = IN_JOB_MAX_BYTES, loop: int = 2000) -> PingPong:
    """Run mpi4py.bench's pingpong between ranks 0 and 1 of a running MPI job; every rank calls it.

    It is the function ``python -m mpi4py.bench pingpong`` calls with ``MPI.COMM_WORLD``, given the
    arguments :func:`run_pingpong` passes, so both ways measure alike; other ranks wait at its
    barriers.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The job's communicator, at least two ranks.
    max_bytes, loop : int
        Largest message, bytes, and round trips per size (fewer for large ones).

    Returns
    -------
    PingPong
        The same on every rank.
    """
    from datetime import UTC, datetime

    from mpi4py.bench import pingpong

    started = datetime.now(UTC).isoformat(timespec="seconds")
    args = _pingpong_args(max_bytes, loop)[3:]  # the options after "-m mpi4py.bench pingpong"
    rows = [r for r in pingpong(comm, args, verbose=False) if r[1] >= MIN_SECONDS]
    if not rows:
        raise PingPongError("the pingpong probe timed no message")
    sizes, means, stds = (np.array(column, float) for column in zip(*rows, strict=True))
    # mpi4py.bench times fewer round trips above 16 KiB (--loop-large) and 1 MiB (--loop-huge)
    samples = np.where(sizes > 1 << 14, max(loop // 10, 10), loop)
    samples = np.where(sizes > 1 << 20, min(loop, 10), samples)
    return PingPong(sizes, means, stds, samples, started=started, machine=local_facts())


def run_pingpong(
    max_bytes: int = 1 << 22,
    loop: int = 2000,
    *,
    timeout: float = 60.0,
    mpiexec: str | None = None,
    relay: TextIO | None = None,
) -> PingPong:
    """Run ``mpiexec -n 2 python -m mpi4py.bench pingpong`` and parse it.

    Parameters
    ----------
    max_bytes, loop : int
        Largest message, bytes, and round trips per size (fewer for large ones).
    timeout : float, default 60
        Seconds before the job is stopped.
    mpiexec : str, optional
    relay : text stream, optional
        Where to copy the probe's output as it runs.

    Returns
    -------
    PingPong

    Raises
    ------
    PingPongError
        If the job fails, times out or prints no table
        (:class:`~lesson_lib.lab.launch.MPIUnavailableError` without ``mpiexec``).
    """
    from datetime import UTC, datetime

    timeout = require_number("timeout", timeout, strict=True, unit="s")
    started = datetime.now(UTC).isoformat(timespec="seconds")
    result: LaunchResult = run_mpiexec(
        2, _pingpong_args(max_bytes, loop), timeout=timeout, mpiexec=mpiexec, relay=relay
    )
    if result.timed_out:
        raise PingPongError(f"pingpong did not finish within {timeout:g} s and was stopped")
    if result.returncode != 0:
        tail = "\n".join(result.output.strip().splitlines()[-5:])
        raise PingPongError(f"pingpong failed (mpiexec exit status {result.returncode}):\n{tail}")
    pp = _parse_pingpong(result.output)
    return PingPong(
        pp.bytes, pp.mean_s, pp.std_s, pp.samples, started=started, machine=local_facts()
    )


def write_pingpong(path: str | os.PathLike, pingpong: PingPong) -> Path:
    """Save a pingpong measurement as JSON, atomically.

    Parameters
    ----------
    path : str or path-like
    pingpong : PingPong

    Returns
    -------
    pathlib.Path
    """
    from lesson_lib.lab.records import write_json

    return write_json(path, pingpong.to_dict())
