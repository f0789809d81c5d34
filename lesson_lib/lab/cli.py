"""The lab's command line: ``python -m lesson_lib.lab <command> ...``.

``run`` measures (``lesson_lib.lab.main("run -n 2 --out results.json")`` in a notebook cell):
outside MPI it starts ``mpiexec`` itself, with a timeout and clean-up; under ``mpiexec`` it is one
rank of the sweep. ``show`` prints a results file's table and fit, ``nccl`` imports nccl-tests
output, ``pingpong`` runs MPI's latency probe. Exit statuses: :data:`EXIT_MEANINGS`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import shlex
import signal
import sys
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from lesson_lib.lab.sweep import (
    DTYPES,
    EXIT_BUDGET,
    EXIT_RANK_FAILED,
    FAILURES,
    MAX_RANKS,
    SweepConfig,
    incomplete_path,
)
from lesson_lib.model._safe_io import printable, require_output_file
from lesson_lib.model.units import KiB, format_bytes, format_rate, format_seconds

if TYPE_CHECKING:
    from lesson_lib.lab.launch import LaunchResult

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_TIMEOUT = 5
EXIT_NO_MPI = 6
EXIT_BAD_FILE = 7
#: What each exit status means; the ``--help`` epilog, the book's lab reference and the lab
#: page's note on a failed run (:func:`~lesson_lib.lab.report.load_run`) print it.
EXIT_MEANINGS: dict[int, str] = {
    EXIT_OK: "the run finished and its results file was written",
    EXIT_USAGE: "the command line was wrong (the message names the option)",
    EXIT_BUDGET: "the sweep ran over its --budget (the sizes done so far go to "
    "<out>.incomplete.json, and an earlier --out file is left as it was)",
    EXIT_RANK_FAILED: "a rank failed or MPI could not start",
    EXIT_TIMEOUT: "the job ran past its hard --timeout and every rank was stopped",
    EXIT_NO_MPI: "no MPI is installed here (mpiexec or mpi4py missing)",
    EXIT_BAD_FILE: "a results or nccl-tests file was empty, corrupt or malformed",
}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([A-Za-z]*)\s*$")
#: Longest size text read (a longer one is not a size, whatever it holds).
_MAX_SIZE_CHARS = 1000
_SUFFIX = {"": 1.0, "B": 1.0}
_SUFFIX |= {p + i: KiB ** (n + 1) for n, p in enumerate("KMG") for i in ("", "iB")}
_SUFFIX |= {"KB": 1e3, "MB": 1e6, "GB": 1e9}


def parse_size(text: str) -> int:
    """Parse a message size such as ``"8"``, ``"10KiB"``, ``"64M"`` or ``"1MB"``.

    ``K``, ``M`` and ``G`` alone are binary (as nccl-tests' ``-e 128M``), ``KB``, ``MB``,
    ``GB`` decimal: ``"10K"`` is 10,240 bytes, ``"1MB"`` 1,000,000.

    Parameters
    ----------
    text : str

    Returns
    -------
    int
        Bytes.

    Raises
    ------
    ValueError
        If the text is not a size.
    """
    text = str(text)
    match = _SIZE.match(text) if len(text) <= _MAX_SIZE_CHARS else None
    if not match or match[2] not in _SUFFIX:
        raise ValueError(
            f"size must be a number with an optional unit ({', '.join(k for k in _SUFFIX if k)}), "
            f"got {printable(repr(text), 60)}"
        )
    value = float(match[1]) * _SUFFIX[match[2]]
    if not math.isfinite(value) or value > 2**60:
        raise ValueError(f"size must be at most 1 EiB, got {text[:40]!r}")
    if value < 1:
        raise ValueError(f"size must be at least 1 byte, got {printable(repr(text), 60)}")
    return round(value)


def _size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lesson_lib.lab",
        description="Measure an all-reduce on this machine and fit t(m) = alpha + m/B to it.",
        epilog="Exit status: "
        + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_MEANINGS.items())
        + ".",
    )
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the all-reduce sweep (starts mpiexec if needed)")
    run.add_argument("-n", "--ranks", type=int, default=2, help="ranks to start (default 2)")
    run.add_argument("--out", default="lab-results.json", help="results file (JSON)")
    run.add_argument("--min-bytes", type=_size_arg, default=8, help="smallest size (default 8)")
    run.add_argument(
        "--max-bytes", type=_size_arg, default=64 * 2**20, help="largest size (default 64MiB)"
    )
    run.add_argument("--per-octave", type=int, default=1, help="sizes per doubling (default 1)")
    run.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    run.add_argument("--reps", type=int, default=21, help="timed batches per size (default 21)")
    run.add_argument(
        "--batch-time",
        type=float,
        default=0.001,
        help="seconds per timed batch, 1e-5 to 10 (default 0.001)",
    )
    run.add_argument("--budget", type=float, default=60.0, help="sweep time budget, s (default 60)")
    run.add_argument("--single", type=int, default=200, help="one-by-one all-reduces per size")
    run.add_argument("--straggler-us", type=float, default=0.0, help="last rank's delay, us")
    run.add_argument("--timeout", type=float, help="hard limit for the job, s (default budget+30)")
    run.add_argument("--hostfile", help="Hydra host file, to run across nodes")
    run.add_argument("--mpiexec", help="mpiexec to use (default: next to python)")
    run.add_argument(
        "--pingpong",
        metavar="FILE",
        help="after the sweep, run MPI's pingpong probe (messages up to 1 KiB) on ranks 0 and 1 "
        "of the same job and save it (JSON), which saves starting MPI again",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    run.add_argument(
        "--simulate-failure",
        choices=FAILURES,
        help="make the last rank exit, raise or hang after the first size (to see the handling)",
    )

    show = sub.add_parser("show", help="print a results file and its fit")
    show.add_argument("file")
    show.add_argument("--min-bytes", type=_size_arg, help="fit from this size")
    show.add_argument("--max-bytes", type=_size_arg, help="fit up to this size")

    nccl = sub.add_parser("nccl", help="import nccl-tests all_reduce_perf output")
    nccl.add_argument("file", help="saved all_reduce_perf output")
    nccl.add_argument("--out", required=True, help="results file to write (JSON)")
    nccl.add_argument("--ranks", type=int, help="GPUs (default: from the output)")
    nccl.add_argument("--in-place", action="store_true", help="use the in-place times")
    nccl.add_argument("--lenient", action="store_true", help="skip malformed lines")

    ping = sub.add_parser("pingpong", help="run mpiexec -n 2 python -m mpi4py.bench pingpong")
    ping.add_argument("--max-bytes", type=_size_arg, default=4 * 2**20)
    ping.add_argument("--out", help="save the measurement (JSON)")
    ping.add_argument("--timeout", type=float, default=60.0)
    ping.add_argument("--mpiexec")
    return p


def _say(stream: TextIO, text: str) -> None:
    """Print ``text``, its line breaks kept and every other control character escaped: text from a
    file (a results file's facts, a rank's output) must not reach the terminal as escape sequences."""
    lines = text.rstrip("\n").split("\n")
    stream.write("\n".join(printable(line, 20_000) for line in lines) + "\n")
    stream.flush()


#: The ``run`` options that go to :class:`SweepConfig` and on to each rank as they are.
_SWEEP_OPTIONS = ("min_bytes", "max_bytes", "per_octave", "dtype", "reps", "batch_time", "budget")
_SWEEP_OPTIONS += ("single", "straggler_us")


def _config(args: argparse.Namespace) -> SweepConfig:
    options = {name: getattr(args, name) for name in (*_SWEEP_OPTIONS, "out")}
    return SweepConfig(**options, quiet=args.quiet, fail=args.simulate_failure)


def _rank_args(config: SweepConfig) -> list[str]:
    args = ["-m", "lesson_lib.lab", "run", "--out", os.path.abspath(config.out)]
    for name in _SWEEP_OPTIONS:
        value = getattr(config, name)
        # repr keeps every digit of a float; the dtype goes as the bare name
        args += ["--" + name.replace("_", "-"), value if isinstance(value, str) else repr(value)]
    if config.quiet:
        args.append("--quiet")
    if config.fail:
        args += ["--simulate-failure", config.fail]
    return args


def _fit_lines(
    measurement: object, min_bytes: int | None = None, max_bytes: int | None = None
) -> list[str]:
    from lesson_lib.lab.fit import fit_what_the_sizes_allow

    try:
        fit, notes = fit_what_the_sizes_allow(measurement, min_bytes=min_bytes, max_bytes=max_bytes)
    except ValueError as exc:
        return [f"no fit: {exc}"]
    how = "" if fit.method == "ranges" else " (one weighted straight-line fit over all sizes)"
    return [
        f"fit t(m) = alpha + m/B over {format_bytes(fit.min_bytes, system='binary')} .. "
        f"{format_bytes(fit.max_bytes, system='binary')}{how}:",
        f"  alpha = {format_seconds(fit.alpha)}   B = {format_rate(fit.bandwidth)} "
        f"(bus bandwidth {format_rate(fit.bus_bandwidth)})",
        f"  crossover alpha x B = {format_bytes(fit.crossover_bytes, system='binary')}; "
        f"rms residual {100 * fit.rms_residual:.0f}%, worst {100 * fit.max_residual:.0f}%",
        *[f"  note: {n}" for n in notes],
    ]


def _table(measurement: object) -> list[str]:
    m = measurement
    lines = [f"{'size':>10} {'median':>10} {'p10':>10} {'p90':>10} {'algbw':>12} {'busbw':>12}"]
    for b, *times, a, bb in zip(
        m.bytes, m.median_s, m.p10_s, m.p90_s, m.algbw, m.busbw, strict=True
    ):
        shown = "".join(f"{'-' if math.isnan(t) else format_seconds(t):>10} " for t in times)
        lines.append(
            f"{format_bytes(b, system='binary'):>10} {shown}{format_rate(a):>12} {format_rate(bb):>12}"
        )
    return lines


def _tail_lines(m: object) -> list[str]:
    """p50 and p99 of the sizes timed one all-reduce at a time."""
    timed = [i for i, t in enumerate(m.p50_s) if not math.isnan(t)] if m.p50_s is not None else []
    head = [f"timed one by one:{'':>9}{'p50':>10} {'p99':>10}"] if len(timed) else []
    return head + [
        f"{format_bytes(m.bytes[i], system='binary'):>25} "
        f"{format_seconds(m.p50_s[i]):>10} {format_seconds(m.p99_s[i]):>10}"
        for i in timed
    ]


def _check_out(path: str, option: str = "--out") -> None:
    """Refuse an output path that is not a new path or a regular file, or has no folder."""
    p = Path(path)
    require_output_file(p, option)  # a folder too
    if not p.parent.is_dir():
        raise ValueError(f"{option} {path!r}: the folder {str(p.parent)!r} does not exist")


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from lesson_lib.lab import launch

    config = _config(args)
    if launch.under_mpi():
        from lesson_lib.lab.records import MAX_RANKS as MOST  # a results file's, as the model's
        from lesson_lib.lab.sweep import run_rank

        # mpiexec's -n, which Hydra and Open MPI pass on: typed there, not to this command
        size = os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE") or "2"
        if not (size.isdecimal() and 2 <= int(size) <= MOST):
            raise ValueError(f"mpiexec -n must be from 2 to {MOST} for a sweep, got {size!r}")
        return run_rank(config, stream=err, pingpong=args.pingpong)
    if not 2 <= args.ranks <= MAX_RANKS:
        raise ValueError(
            f"-n/--ranks must be an integer from 2 to {MAX_RANKS}, got {args.ranks} "
            "(on one machine, more ranks than cores only measures the oversubscription)"
        )
    timeout = args.timeout if args.timeout is not None else config.budget + 30.0
    if not 0 < timeout <= 86_400:
        raise ValueError(f"--timeout must be from 0 to 86400 s, got {timeout:g}")
    _check_out(config.out)
    _check_out(incomplete_path(config.out), "--out (its partial results file)")
    if args.pingpong:
        _check_out(args.pingpong, "--pingpong")
    # The ranks write to a fresh file of this job only; --out is replaced only by a
    # complete result, so an old file is never reported as new.
    tag = os.environ.get(launch.JOB_ENV) or uuid.uuid4().hex
    final = config.out
    staging = _staging(final, tag)
    config = replace(config, out=staging)
    probe = _staging(args.pingpong, tag) if args.pingpong else None
    try:  # the staging files go, whatever ends the run (Ctrl-C and SIGTERM included)
        launch.require_mpi4py()
        result = launch.run_mpiexec(
            args.ranks,
            _rank_args(config) + (["--pingpong", os.path.abspath(probe)] if probe else []),
            timeout=timeout,
            hostfile=args.hostfile,
            mpiexec=args.mpiexec,
            relay=None if config.quiet else err,
            tag=tag,
        )
        status = _after_run(config, result, timeout, final, tag, out, err)
        if status == EXIT_OK and probe:
            status = _keep_pingpong(probe, args.pingpong, out, err)
        return status
    finally:
        for path in (staging, incomplete_path(staging), probe):
            if path:
                Path(path).unlink(missing_ok=True)


def _staging(final: str, tag: str) -> str:
    """The fresh file of this job the ranks write, beside ``final``, which it replaces when done."""
    return str(Path(final).with_name(f".{Path(final).name}.{tag[:12]}.tmp"))


def _keep_pingpong(probe: str, final: str, out: TextIO, err: TextIO) -> int:
    """Move the pingpong the ranks wrote to ``final`` and print its latency."""
    from lesson_lib.lab.pingpong import PingPongError, _read_pingpong
    from lesson_lib.lab.records import ResultsError

    try:
        pp = _read_pingpong(probe)
    except (PingPongError, ResultsError) as exc:
        _say(
            err, f"lab: the pingpong probe left no usable results ({exc}); {final} was not changed"
        )
        return EXIT_RANK_FAILED
    require_output_file(final, "--pingpong")  # checked before the run; it may have changed
    os.replace(probe, final)
    _say(out, f"{_pingpong_line(pp)}; wrote {final}")
    return EXIT_OK


def _pingpong_line(pp: object) -> str:
    return (
        f"pingpong one-way latency {format_seconds(pp.latency_s)} (messages <= 8 B), "
        f"peak {format_rate(pp.bandwidth)}"
    )


def _after_run(
    config: SweepConfig,
    result: LaunchResult,
    timeout: float,
    final: str,
    tag: str,
    out: TextIO,
    err: TextIO,
) -> int:
    """Report a finished MPI job; move its results to ``final`` only if complete and fresh."""
    notes = "".join(f"\n  rank {r}: {t}" for r, t in sorted(result.rank_notes.items()))
    cleaned = ""
    if result.stopped or result.removed_shm:
        cleaned = (
            f" Cleaned up {len(result.stopped)} leftover process(es) and "
            f"{len(result.removed_shm)} shared-memory file(s)."
        )
    if result.timed_out:
        _say(
            err,
            f"lab: the MPI job did not finish within its timeout of {timeout:g} s and was "
            f"stopped (all ranks).{cleaned}{notes}\n"
            "  Try fewer or smaller sizes (--max-bytes), or a longer --timeout.",
        )
        return EXIT_TIMEOUT
    if result.returncode == EXIT_BUDGET:
        partial = incomplete_path(final)
        where = f"{final} was not changed."
        if Path(incomplete_path(config.out)).is_file():
            os.replace(incomplete_path(config.out), partial)
            where = f"Partial results (marked incomplete) are in {partial}; {where}"
        _say(
            err,
            f"lab: time budget of {config.budget:g} s exceeded; the sweep stopped early. "
            f"{where}{cleaned}\n"
            "  Raise --budget or lower --max-bytes / --reps.",
        )
        return EXIT_BUDGET
    if result.returncode != 0:
        tail = "\n".join("  | " + ln for ln in result.output.strip().splitlines()[-6:])
        _say(
            err,
            f"lab: the MPI job failed (mpiexec exit status {result.returncode}): a rank died "
            f"or MPI could not start.{cleaned}{notes}"
            + (f"\n  last output:\n{tail}" if tail and config.quiet else ""),
        )
        return EXIT_RANK_FAILED
    from lesson_lib.lab.records import ResultsError, read_json, read_results

    if not Path(config.out).is_file():
        _say(
            err,
            f"lab: the MPI job ended (exit status 0) without writing any results, so "
            f"{final} was not changed. Did the ranks run? Check that --mpiexec "
            f"({result.command[0]}) is a working mpiexec.",
        )
        return EXIT_RANK_FAILED
    try:
        if read_json(config.out).get("job") != tag:
            raise ResultsError(f"{config.out} was not written by this run")
        measurement = read_results(config.out)
    except ResultsError as exc:
        _say(err, f"lab: {exc}; {final} was not changed")
        return EXIT_BAD_FILE
    if not measurement.complete:
        _say(err, f"lab: the sweep did not finish; {final} was not changed")
        return EXIT_RANK_FAILED
    require_output_file(final)  # the check before the run, again: it may have changed
    os.replace(config.out, final)
    _say_written(out, measurement, final)
    return EXIT_OK


def _say_written(out: TextIO, measurement: object, path: str) -> None:
    """Print what was written to ``path``, and the fit."""
    wrote = f"wrote {len(measurement.bytes)} sizes to {path}"
    _say(out, "\n".join([measurement.label(), wrote, *_tail_lines(measurement)]))
    _say(out, "\n".join(_fit_lines(measurement)))


def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from lesson_lib.lab.records import read_results

    m = read_results(args.file)
    _say(out, m.label())
    if not m.complete:
        _say(out, f"INCOMPLETE: {printable(m.stop_reason or 'the sweep stopped early', 500)}")
    _say(
        out,
        "\n".join([*_table(m), *_tail_lines(m), *_fit_lines(m, args.min_bytes, args.max_bytes)]),
    )
    return EXIT_OK


def _nccl(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from lesson_lib.lab.nccl_tests import read_all_reduce_perf
    from lesson_lib.lab.records import measurement_to_dict, write_results

    _check_out(args.out)
    m = read_all_reduce_perf(
        args.file, ranks=args.ranks, in_place=args.in_place, strict=not args.lenient
    )
    write_results(args.out, measurement_to_dict(m))
    skipped = m.config.get("skipped_lines") or []
    if skipped:
        _say(out, f"skipped malformed lines: {', '.join(map(str, skipped))}")
    _say_written(out, m, args.out)
    return EXIT_OK


def _pingpong(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from lesson_lib.lab import launch
    from lesson_lib.lab.pingpong import run_pingpong, write_pingpong

    if args.out:
        _check_out(args.out)
    launch.require_mpi4py()
    pp = run_pingpong(args.max_bytes, timeout=args.timeout, mpiexec=args.mpiexec, relay=err)
    if args.out:
        write_pingpong(args.out, pp)
    _say(out, _pingpong_line(pp))
    return EXIT_OK


def main(
    argv: Sequence[str] | str | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run a lab command and return its exit status; never raises for user errors.

    Parameters
    ----------
    argv : sequence of str or str, optional
        The arguments after ``python -m lesson_lib.lab``, a list or one string (``"run -n 2 --out
        results.json"``); default ``sys.argv[1:]``.
    stdout, stderr : text stream, optional
        Where results and progress go; default ``sys.stdout`` / ``sys.stderr``.

    Returns
    -------
    int
        Exit status (0 success; see :data:`EXIT_MEANINGS`).
    """
    from lesson_lib.lab.launch import MPIUnavailableError
    from lesson_lib.lab.nccl_tests import NcclTestsFormatError
    from lesson_lib.lab.pingpong import PingPongError
    from lesson_lib.lab.records import ResultsError

    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    if isinstance(argv, str):
        argv = shlex.split(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with contextlib.redirect_stderr(err):  # argparse writes usage errors to sys.stderr
            args = _parser().parse_args(argv)
    except SystemExit as exc:  # a usage error or --help: a status, not the process's end
        return int(exc.code or 0)
    try:
        command = {"run": _run, "show": _show, "nccl": _nccl, "pingpong": _pingpong}
        return command[args.command](args, out, err)
    except (ResultsError, NcclTestsFormatError, FileNotFoundError) as exc:
        _say(err, f"lab: {exc}")
        return EXIT_BAD_FILE
    except MPIUnavailableError as exc:
        _say(err, f"lab: cannot start MPI: {exc}")
        return EXIT_NO_MPI
    except PingPongError as exc:
        _say(err, f"lab: {exc}")
        return EXIT_RANK_FAILED
    except (ValueError, TypeError) as exc:
        _say(err, f"lab: bad option: {exc}")
        return EXIT_USAGE
    except OSError as exc:  # a file that cannot be read or written
        where = f" {exc.filename!r}" if exc.filename else ""
        _say(err, f"lab: cannot use{where}: {exc.strerror or exc}")
        return EXIT_BAD_FILE
    except KeyboardInterrupt as stop:
        _say(err, "lab: interrupted; the MPI job was stopped and --out left as it was")
        return 128 + getattr(stop, "signum", signal.SIGINT)
