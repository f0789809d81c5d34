"""The all-reduce benchmark that runs on every rank of an MPI job.

For each size: warm up; agree (by a reduction) on how many calls one timed batch of about
``batch_time`` seconds holds; time ``reps`` batches after barriers, each as its slowest rank; keep
the median and 10th / 90th percentiles, in seconds. Messages up to :data:`SINGLE_MAX_BYTES` are
also timed one by one, every time kept, for their p50 and p99. Rank 0 checks the time budget before
each size. :mod:`mpi4py` is imported only inside :func:`run_rank`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import numpy as np

from lesson_lib.lab.machine import local_facts
from lesson_lib.model._validate import require_int, require_number
from lesson_lib.model.collectives import ring_allreduce_factor
from lesson_lib.model.units import MiB, format_bytes, format_rate, format_seconds

#: Element types the sweep can reduce, with their size in bytes.
DTYPES: dict[str, int] = {"float32": 4, "float64": 8, "int32": 4, "int64": 8}
#: Ways a rank can be told to fail, to see (and test) the failure handling.
FAILURES = ("exit", "raise", "hang")

#: Largest message also timed one all-reduce at a time, bytes (the decode message is 10 KiB).
SINGLE_MAX_BYTES = 64 * 2**10
#: Largest message the sweep times, bytes (each rank holds two buffers of this size).
MAX_MESSAGE_BYTES = 2**30
#: Most ranks ``lab run`` starts.
MAX_RANKS = 256

#: Exit status of a rank when the time budget ran out.
EXIT_BUDGET = 3
#: Exit status of a rank that hit an error (after MPI_Abort).
EXIT_RANK_FAILED = 4


@dataclass(frozen=True)
class SweepConfig:
    """Settings of one sweep; every rank must use the same ones."""

    #: Smallest message, bytes (rounded up to a whole element).
    min_bytes: int = 8
    #: Largest message, bytes.
    max_bytes: int = int(64 * MiB)
    #: Sizes per doubling (1 gives powers of two, 2 adds the midpoints, ...).
    per_octave: int = 1
    #: Element type summed, one of :data:`DTYPES`.
    dtype: str = "float32"
    #: Timed batches per size, which the statistics are over.
    reps: int = 21
    #: Target seconds per timed batch, from 1e-5 to 10 s; sets the iterations.
    batch_time: float = 0.001
    #: Upper bound on all-reduces per batch.
    max_iterations: int = 10_000
    #: Untimed all-reduces per size before timing.
    warmup: int = 2
    #: Seconds the sweep may take; rank 0 stops it (exit status 3) when exceeded.
    budget: float = 60.0
    #: Results file rank 0 writes.
    out: str = "lab-results.json"
    #: True for no progress lines.
    quiet: bool = False
    #: The last rank fails so after the first size, ``"exit"``, ``"raise"`` or ``"hang"`` (tests).
    fail: str | None = None
    #: All-reduces timed one at a time (no barrier between them) per size up to
    #: :data:`SINGLE_MAX_BYTES`, each one's slowest rank kept; 0 for none.
    single: int = 200
    #: Microseconds the last rank waits (busy, in user space) before every all-reduce.
    straggler_us: float = 0.0

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        require_int("min_bytes", self.min_bytes, maximum=MAX_MESSAGE_BYTES)
        require_int("max_bytes", self.max_bytes, minimum=self.min_bytes, maximum=MAX_MESSAGE_BYTES)
        require_int("per_octave", self.per_octave, maximum=8)
        require_int("reps", self.reps, minimum=3, maximum=1000)
        # A batch shorter than a few all-reduces times the clock, not the wire.
        require_number("batch_time", self.batch_time, minimum=1e-5, maximum=10.0, unit="s")
        require_int("max_iterations", self.max_iterations)
        require_int("warmup", self.warmup, minimum=0)
        require_number("budget", self.budget, strict=True, maximum=86_400.0, unit="s")
        require_int("single", self.single, minimum=0, maximum=100_000)
        require_number("straggler_us", self.straggler_us, maximum=1e6, unit="us")
        if self.fail is not None and self.fail not in FAILURES:
            raise ValueError(
                f"fail must be one of {', '.join(FAILURES)} or None, got {self.fail!r}"
            )

    @property
    def sizes(self) -> list[int]:
        """The message sizes of the sweep, bytes (see ``_message_sizes``)."""
        return _message_sizes(self.min_bytes, self.max_bytes, self.per_octave, DTYPES[self.dtype])


def incomplete_path(out: str | os.PathLike) -> str:
    """Where a sweep stopped by its time budget saves its partial results.

    Parameters
    ----------
    out : str or path-like
        The results file asked for (``--out``).

    Returns
    -------
    str
        ``lab/results.json`` -> ``lab/results.incomplete.json``.
    """
    p = Path(out)
    stem = p.stem if p.suffix == ".json" else p.name
    return str(p.with_name(f"{stem}.incomplete.json"))


def _message_sizes(
    min_bytes: int, max_bytes: int, per_octave: int = 1, itemsize: int = 4
) -> list[int]:
    """Log-spaced message sizes from ``min_bytes`` to ``max_bytes``, whole elements."""
    min_bytes = require_int("min_bytes", min_bytes)
    max_bytes = require_int("max_bytes", max_bytes, minimum=min_bytes)
    per_octave = require_int("per_octave", per_octave)
    itemsize = require_int("itemsize", itemsize)
    steps = int(np.ceil(np.log2(max_bytes / min_bytes) * per_octave - 1e-9))
    raw = min_bytes * 2.0 ** (np.arange(steps + 1) / per_octave)
    raw[-1] = max_bytes
    whole = np.maximum(np.ceil(np.minimum(raw, max_bytes) / itemsize).astype(int), 1) * itemsize
    return sorted({int(s) for s in whole})


def _summarize(samples: np.ndarray) -> dict[str, float]:
    """Median, 10th and 90th percentiles and minimum of per-call times."""
    s = np.asarray(samples, dtype=float)
    if s.size == 0 or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError("samples must be a non-empty array of positive, finite seconds")
    p10, med, p90 = (float(x) for x in np.percentile(s, [10, 50, 90]))
    return {"median_s": med, "p10_s": p10, "p90_s": p90, "min_s": float(s.min())}


def _make_record(
    nbytes: int, ranks: int, dtype: str, iterations: int, samples: np.ndarray, each: np.ndarray = ()
) -> dict:
    """One result row: size, statistics and bandwidths (nccl-tests' definitions), and the times
    of ``each`` all-reduce timed alone with their p50 and p99."""
    stats = _summarize(samples)
    if len(each):
        p50, p99 = np.percentile(each, [50, 99])
        stats |= {"p50_s": float(p50), "p99_s": float(p99), "each_s": [float(t) for t in each]}
    algbw = nbytes / stats["median_s"]
    return {
        "bytes": int(nbytes),
        "count": int(nbytes // DTYPES[dtype]),
        "dtype": dtype,
        "ranks": int(ranks),
        "iterations": int(iterations),
        "samples": len(samples),
        **stats,
        "algbw": algbw,
        "busbw": algbw * ring_allreduce_factor(ranks),
    }


def _progress(stream: TextIO, text: str) -> None:
    stream.write(f"[lab] {text}\n")
    stream.flush()


def _note_failure(rank: int, text: str) -> None:
    """Leave a failure note where the launcher looks, and print it."""
    from lesson_lib.lab.launch import STATUS_ENV

    folder = os.environ.get(STATUS_ENV)
    if folder and os.path.isdir(folder):
        with contextlib.suppress(OSError):
            Path(folder, f"rank-{rank}.txt").write_text(text, encoding="utf-8")
    sys.stderr.write(f"[lab] rank {rank}: {text}\n")
    sys.stderr.flush()


def _inject(config: SweepConfig, rank: int, size: int) -> None:
    if config.fail is None or rank != size - 1:
        return
    if config.fail == "exit":
        _note_failure(rank, "exiting on purpose (--simulate-failure exit)")
        os._exit(9)
    if config.fail == "raise":
        raise RuntimeError("error raised on purpose (--simulate-failure raise)")
    if config.fail == "hang":
        _note_failure(rank, "hanging on purpose (--simulate-failure hang)")
        time.sleep(3600)


def _time_size(
    comm: object, mpi: object, nbytes: int, config: SweepConfig
) -> tuple[int, np.ndarray, np.ndarray]:
    """Time all-reduces of ``nbytes`` on ``comm``: (iterations, seconds per call, single calls)."""
    itemsize = DTYPES[config.dtype]
    send = np.ones(nbytes // itemsize, dtype=config.dtype)
    recv = np.empty_like(send)
    allreduce, barrier, wtime = comm.Allreduce, comm.Barrier, mpi.Wtime
    late = config.straggler_us * 1e-6 if comm.Get_rank() == comm.Get_size() - 1 else 0.0
    if late:

        def allreduce(a: np.ndarray, b: np.ndarray) -> None:
            # The straggler, late at every all-reduce; busy, as time.sleep overshoots by ~50 us.
            end = time.perf_counter() + late
            while time.perf_counter() < end:
                pass
            comm.Allreduce(a, b)

    def timed(iterations: int) -> float:
        barrier()
        t0 = wtime()
        for _ in range(iterations):
            allreduce(send, recv)
        return wtime() - t0

    def batch(iterations: int) -> float:
        # The slowest rank's time: identical on every rank, so all agree below.
        return comm.allreduce(timed(iterations), op=mpi.MAX)

    for _ in range(config.warmup):
        allreduce(send, recv)
    # Iterations per batch: grow until a batch lasts >= half the target. A long batch is timed
    # twice (keeping the shorter), so one preemption of a busy machine cannot make it look huge.
    iterations = 1
    while True:
        elapsed = batch(iterations)
        if elapsed >= config.batch_time / 2:
            elapsed = min(elapsed, batch(iterations))
        if elapsed >= config.batch_time / 2 or iterations >= config.max_iterations:
            break
        grow = config.batch_time / max(elapsed, 1e-9)
        iterations = min(config.max_iterations, max(2 * iterations, int(iterations * grow)))
    samples = np.array([timed(iterations) / iterations for _ in range(config.reps)])
    comm.Allreduce(mpi.IN_PLACE, samples, op=mpi.MAX)
    each = np.empty(config.single if nbytes <= SINGLE_MAX_BYTES else 0)
    barrier()
    for i in range(len(each)):  # back to back, as a token's all-reduces follow each other
        t0 = wtime()
        allreduce(send, recv)
        each[i] = wtime() - t0
    comm.Allreduce(mpi.IN_PLACE, each, op=mpi.MAX)
    return iterations, samples, each


def _machine(comm: object, mpi: object) -> dict:
    import mpi4py

    facts = local_facts()
    everyone = comm.allgather((mpi.Get_processor_name(), facts["usable_cores"]))
    per_node: dict[str, list[int]] = {}
    for name, cores in everyone:
        per_node.setdefault(name, []).append(cores)
    oversubscribed = any(len(v) > v[0] for v in per_node.values())
    version = mpi.Get_version()
    return {
        **facts,
        "nodes": len(per_node),
        "ranks_per_node": max(len(v) for v in per_node.values()),
        "oversubscribed": oversubscribed,
        "mpi_library": " ".join(
            mpi.Get_library_version().strip().splitlines()[0].replace("Version:", "").split()
        ),
        "mpi_standard": f"{version[0]}.{version[1]}",
        "mpi4py": mpi4py.__version__,
        "numpy": np.__version__,
    }


def run_rank(config: SweepConfig, stream: TextIO | None = None, pingpong: str | None = None) -> int:
    """Run the sweep as one rank of an MPI job; rank 0 writes ``config.out``.

    Parameters
    ----------
    config : SweepConfig
    stream : text stream, optional
        Progress output of rank 0; defaults to ``sys.stderr``.
    pingpong : str, optional
        After a complete sweep, the same ranks run MPI's pingpong probe
        (:func:`~lesson_lib.lab.pingpong.probe_in_job`) and rank 0 writes it to this file.

    Returns
    -------
    int
        0 done, 3 time budget exceeded (partial results written, marked
        incomplete). A rank that fails leaves a note and calls ``MPI_Abort`` (4).
    """
    from mpi4py import MPI

    from lesson_lib.lab.launch import JOB_ENV
    from lesson_lib.lab.records import FORMAT, write_results

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    stream = sys.stderr if stream is None else stream
    try:
        started = datetime.now(UTC)
        t_start = time.perf_counter()
        machine = _machine(comm, MPI)
        sizes = config.sizes
        if rank == 0 and not config.quiet:
            over = " (oversubscribed: more ranks than cores)" if machine["oversubscribed"] else ""
            _progress(
                stream,
                f"all-reduce sweep: {size} ranks on {machine['nodes']} node(s){over}, "
                f"{len(sizes)} sizes from {format_bytes(sizes[0], 'B')} to "
                f"{format_bytes(sizes[-1], system='binary')}, {config.dtype}, "
                f"budget {format_seconds(config.budget, 's')}",
            )
        records: list[dict] = []
        stopped_early = False
        for index, nbytes in enumerate(sizes):
            stop = time.perf_counter() - t_start > config.budget if rank == 0 else None
            if comm.bcast(stop, root=0):
                stopped_early = True
                break
            iterations, samples, each = _time_size(comm, MPI, nbytes, config)
            record = _make_record(nbytes, size, config.dtype, iterations, samples, each)
            records.append(record)
            if rank == 0 and not config.quiet:
                _progress(
                    stream,
                    f"{index + 1:>3}/{len(sizes)} {format_bytes(nbytes, system='binary'):>10}  "
                    f"median {format_seconds(record['median_s']):>10}  "
                    + (f"p99 {format_seconds(record['p99_s']):>10}  " if len(each) else "")
                    + f"busbw {format_rate(record['busbw']):>11}  "
                    f"x{iterations:<5} t={time.perf_counter() - t_start:5.1f} s",
                )
            if index == 0:
                _inject(config, rank, size)
        elapsed = time.perf_counter() - t_start
        if rank == 0:
            data = {
                "format": FORMAT,
                "source": "mpi-allreduce",
                "complete": not stopped_early,
                "stop_reason": (
                    f"time budget of {format_seconds(config.budget, 's')} exceeded after "
                    f"{len(records)} of {len(sizes)} sizes"
                    if stopped_early
                    else None
                ),
                "job": os.environ.get(JOB_ENV),
                "started": started.isoformat(timespec="seconds"),
                "elapsed_s": elapsed,
                "ranks": size,
                "machine": machine,
                "config": asdict(config),
                "records": records,
            }
            # A sweep stopped early never replaces a complete file: it goes next to it.
            target = incomplete_path(config.out) if stopped_early else config.out
            write_results(target, data)
            if not config.quiet:
                done = "stopped early: " + data["stop_reason"] if stopped_early else "done"
                _progress(stream, f"{done} in {elapsed:.1f} s; wrote {target}")
        if pingpong and not stopped_early:
            from lesson_lib.lab.pingpong import probe_in_job, write_pingpong

            probe = probe_in_job(comm)
            if rank == 0:
                write_pingpong(pingpong, probe)
        comm.Barrier()
        return EXIT_BUDGET if stopped_early else 0
    except Exception as exc:  # a rank must never leave the others waiting
        _note_failure(rank, f"{type(exc).__name__}: {exc}")
        time.sleep(0.2)  # let the note reach the launcher before the abort
        comm.Abort(EXIT_RANK_FAILED)
        return EXIT_RANK_FAILED  # not reached
