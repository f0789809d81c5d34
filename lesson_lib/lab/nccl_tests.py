"""Read the text output of nccl-tests' ``all_reduce_perf`` (GPU all-reduce).

A GPU user runs, for example, ``all_reduce_perf -b 8 -e 128M -f 2 -g 4``
(or the same under ``mpirun`` across nodes), saves what it prints, and gets
the same :class:`~lesson_lib.lab.records.Measurement`, fit and figures as
the MPI sweep. The output looks like this (columns since nccl-tests 2.x;
older versions have no ``root`` column, and ``#wrong`` may read ``N/A``)::

    # nThread 1 nGpus 4 minBytes 8 maxBytes 134217728 step: 2(factor) ...
    #  Rank  0 Group  0 Pid  1234 on  node1 device  0 [0x07] NVIDIA A100-SXM4-80GB
    ...
    #       size         count      type   redop    root     time   algbw   busbw #wrong ...
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)        ...
               8             2     float     sum      -1    10.48    0.00    0.00      0 ...

Times are in microseconds (the units line says so; ``(ms)`` is honoured
too) and are *averages* over nccl-tests' iterations, not medians. Each data
line is checked; a line that cannot be read is reported with its number.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from lesson_lib._validate import require_int
from lesson_lib.collectives import ring_allreduce_factor
from lesson_lib.lab.records import FORMAT, Measurement, measurement_from_dict

_RANK_LINE = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\b.*?\bon\s+(?P<host>\S+)\s+device\s+\d+\s+\[[^\]]*\]\s*(?P<dev>.*)$"
)
_LOG_LINE = re.compile(r"\bNCCL (INFO|WARN|TRACE)\b")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class ParseProblem:
    """One line of nccl-tests output that could not be read.

    Attributes
    ----------
    line : int
        1-based line number.
    text : str
        The line as found.
    reason : str
        What is wrong with it.
    """

    line: int
    text: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}: {self.text.strip()!r}"


class NcclTestsFormatError(ValueError):
    """nccl-tests output with malformed lines or no data.

    Attributes
    ----------
    problems : list of ParseProblem
        Every malformed line, in order.
    summary : str
        The message without the list of lines.
    """

    def __init__(self, message: str, problems: list[ParseProblem] | None = None) -> None:
        self.problems = list(problems or [])
        self.summary = message
        if self.problems:
            message += ":\n" + "\n".join(f"  {p}" for p in self.problems)
        super().__init__(message)


def _row(tokens: list[str], has_root: bool | None) -> tuple[int, float, float, str, str]:
    """(size, out-of-place time, in-place time, type, redop) of one data row."""
    if has_root is None:  # no header seen: guess from the width
        has_root = len(tokens) >= 13
    first_time = 5 if has_root else 4
    want = first_time + 8
    if len(tokens) < want:
        raise ValueError(f"expected {want} columns, found {len(tokens)}")
    if not tokens[0].isdigit() or not tokens[1].isdigit():
        raise ValueError("size and count must be whole numbers")
    if has_root and not re.fullmatch(r"-?\d+", tokens[4]):
        raise ValueError(f"root must be an integer, got {tokens[4]!r}")
    for col in (first_time, first_time + 1, first_time + 2, first_time + 4):
        if not _NUMBER.match(tokens[col]):
            raise ValueError(f"column {col + 1} must be a number, got {tokens[col]!r}")
    out_t, in_t = float(tokens[first_time]), float(tokens[first_time + 4])
    if not (math.isfinite(out_t) and math.isfinite(in_t)) or out_t <= 0 or in_t <= 0:
        raise ValueError("times must be positive")
    return int(tokens[0]), out_t, in_t, tokens[2], tokens[3]


def parse_all_reduce_perf(
    text: str, *, ranks: int | None = None, in_place: bool = False, strict: bool = True
) -> Measurement:
    """Parse ``all_reduce_perf`` output into a :class:`~lesson_lib.lab.records.Measurement`.

    Parameters
    ----------
    text : str
        The whole output (comment and log lines are fine).
    ranks : int, optional
        GPUs in the all-reduce. By default counted from the ``# Rank``
        lines, or else inferred from busbw / algbw = 2(N-1)/N.
    in_place : bool, default False
        Use the in-place times instead of the out-of-place ones.
    strict : bool, default True
        True: any malformed data line raises. False: such lines are skipped
        and their numbers kept in ``measurement.config["skipped_lines"]``.

    Returns
    -------
    lesson_lib.lab.records.Measurement
        ``median_s`` holds nccl-tests' average times, in seconds; spreads are NaN.

    Raises
    ------
    NcclTestsFormatError
        Listing every malformed line with its line number (``strict``), or
        when no data line is found at all.
    """
    problems: list[ParseProblem] = []
    rows: list[tuple[int, float, str, str]] = []
    rank_hosts: dict[int, str] = {}
    devices: list[str] = []
    has_root: bool | None = None
    scale = 1e-6  # microseconds unless the units line says otherwise
    bus_ratio: float | None = None
    last_size, last_line = 0, 0
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or _LOG_LINE.search(stripped):
            continue
        if stripped.startswith("#"):
            body = stripped.lstrip("#").split()
            if "size" in body and "count" in body and "busbw" in body:
                has_root = "root" in body
            elif body[:1] == ["(B)"]:
                scale = 1e-3 if "(ms)" in body else 1e-6
            match = _RANK_LINE.match(stripped)
            if match:
                rank_hosts[int(match["rank"])] = match["host"]
                devices.append(match["dev"].strip())
            continue
        tokens = stripped.split()
        try:
            size, out_t, in_t, dtype, redop = _row(tokens, has_root)
        except ValueError as exc:
            problems.append(ParseProblem(number, line, str(exc)))
            continue
        if size <= last_size:
            problems.append(
                ParseProblem(
                    number, line, f"size {size} does not grow (line {last_line} had {last_size})"
                )
            )
            continue
        if size == 0:
            continue
        last_size, last_line = size, number
        rows.append((size, (in_t if in_place else out_t) * scale, dtype, redop))
        first_time = 5 if (has_root if has_root is not None else len(tokens) >= 13) else 4
        algbw, busbw = float(tokens[first_time + 1]), float(tokens[first_time + 2])
        if algbw > 0:
            bus_ratio = busbw / algbw
    if problems and strict:
        raise NcclTestsFormatError(
            f"{len(problems)} malformed line(s) in all_reduce_perf output", problems
        )
    if not rows:
        raise NcclTestsFormatError(
            "no all_reduce_perf data lines found (expected lines such as "
            "'8  2  float  sum  -1  10.48  0.00  0.00  0 ...')",
            problems,
        )
    if ranks is None:
        ranks = len(rank_hosts) or _ranks_from_ratio(bus_ratio)
    ranks = require_int("ranks", ranks, minimum=2)
    records = []
    for size, seconds, dtype, redop in rows:
        algbw = size / seconds
        records.append(
            {
                "bytes": size,
                "dtype": dtype,
                "redop": redop,
                "ranks": ranks,
                "median_s": seconds,
                "p10_s": None,
                "p90_s": None,
                "algbw": algbw,
                "busbw": algbw * ring_allreduce_factor(ranks),
            }
        )
    data = {
        "format": FORMAT,
        "source": "nccl-tests",
        "complete": True,
        "ranks": ranks,
        "started": "",
        "machine": {
            "devices": devices,
            "hosts": sorted(set(rank_hosts.values())),
            "nodes": len(set(rank_hosts.values())) or None,
        },
        "config": {
            "in_place": in_place,
            "time_statistic": "mean",
            "skipped_lines": [p.line for p in problems],
        },
        "records": records,
    }
    return measurement_from_dict(data)


def _ranks_from_ratio(ratio: float | None) -> int:
    """Invert busbw / algbw = 2(N-1)/N."""
    if ratio is None or not 0.5 < ratio < 2.0:
        raise NcclTestsFormatError(
            "cannot tell how many GPUs took part (no '# Rank' lines and no usable "
            "busbw/algbw ratio): pass ranks="
        )
    return round(2.0 / (2.0 - ratio))


def read_all_reduce_perf(path: str | os.PathLike, **kwargs: object) -> Measurement:
    """Read a saved ``all_reduce_perf`` output file.

    Parameters
    ----------
    path : str or path-like
        The text file.
    **kwargs
        Passed to :func:`parse_all_reduce_perf`.

    Returns
    -------
    lesson_lib.lab.records.Measurement
        With ``path`` set.

    Raises
    ------
    NcclTestsFormatError
        As :func:`parse_all_reduce_perf`, the message naming the file.
    FileNotFoundError
        If the file does not exist.
    """
    p = Path(path)
    try:
        m = parse_all_reduce_perf(p.read_text(encoding="utf-8", errors="replace"), **kwargs)
    except NcclTestsFormatError as exc:
        raise NcclTestsFormatError(f"{p}: {exc.summary}", exc.problems) from None
    return replace(m, path=str(p))
