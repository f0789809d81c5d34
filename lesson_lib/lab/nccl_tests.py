"""Read the text output of nccl-tests' ``all_reduce_perf`` (GPU all-reduce).

The saved output of, for example, ``all_reduce_perf -b 8 -e 128M -f 2 -g 4``
becomes the same :class:`~lesson_lib.lab.records.Measurement` as the MPI sweep.
Columns as since nccl-tests 2.x (older ones lack ``root``; ``#wrong`` may read
``N/A``). Times are microseconds (``(ms)`` is honoured) and are averages over
iterations, not medians. A line that cannot be read is reported with its number.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from lesson_lib.lab.records import (
    FORMAT,
    MAX_BYTES,
    MAX_RANKS,
    MIN_SECONDS,
    Measurement,
    measurement_from_dict,
)
from lesson_lib.model._safe_io import read_file
from lesson_lib.model._validate import require_int

#: Longest line read, characters (a line of the table or a rank line is about 100-200).
MAX_LINE_CHARS = 4096
_LOG_LINE = re.compile(r"\bNCCL (INFO|WARN|TRACE)\b")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class ParseProblem:
    """One line of nccl-tests output that could not be read."""

    #: 1-based line number.
    line: int
    #: The line as found.
    text: str
    #: What is wrong with it.
    reason: str

    def __str__(self) -> str:
        text = self.text.strip()
        shown = text if len(text) <= 60 else text[:57] + "..."
        return f"line {self.line}: {self.reason}: {shown!r}"


class NcclTestsFormatError(ValueError):
    """nccl-tests output with malformed lines or no data."""

    #: Every malformed line, in order.
    problems: list[ParseProblem]
    #: The message without the list of lines.
    summary: str

    def __init__(self, message: str, problems: list[ParseProblem] | None = None) -> None:
        self.problems = list(problems or [])
        self.summary = message
        if self.problems:
            listed = self.problems[:_MAX_LISTED]
            message += ":\n" + "\n".join(f"  {p}" for p in listed)
            if len(self.problems) > len(listed):
                message += f"\n  ... and {len(self.problems) - len(listed)} more"
        super().__init__(message)


#: Lines that may follow the table and are not data.
_FOOTER = ("Out of bounds", "Avg bus bandwidth", "Errors with asterisks", "Collective test")
#: Problems listed in one message at most.
_MAX_LISTED = 10


@dataclass(frozen=True)
class _Layout:
    """Where each needed column sits in a data line."""

    width: int
    size: int = 0
    times: tuple[int, ...] = (5, 9)
    algbw: tuple[int, ...] = (6, 10)
    busbw: tuple[int, ...] = (7, 11)
    wrong: tuple[int, ...] = (8, 12)  # nccl-tests' count of wrong results ("#wrong")

    @classmethod
    def from_header(cls, names: list[str]) -> _Layout | None:
        """The layout a header line describes, or None if it is not a usable header."""
        lowered = [n.lower() for n in names]
        times = tuple(i for i, n in enumerate(lowered) if n == "time")
        algbw = tuple(i for i, n in enumerate(lowered) if n == "algbw")
        busbw = tuple(i for i, n in enumerate(lowered) if n == "busbw")
        wrong = tuple(i for i, n in enumerate(lowered) if n in ("#wrong", "wrong"))
        if "size" not in lowered or not times or len(algbw) < len(times) or len(busbw) < len(times):
            return None
        return cls(len(names), lowered.index("size"), times, algbw, busbw, wrong)

    @classmethod
    def guess(cls, width: int) -> _Layout:
        """The layout of a table without header, from its number of columns."""
        if width >= 13:  # size count type redop root | time algbw busbw #wrong (x2)
            return cls(width=13)
        if width == 12:  # size count type redop | time algbw busbw error (x2)
            return cls(width=12, times=(4, 8), algbw=(5, 9), busbw=(6, 10), wrong=())
        # size count type | time algbw busbw error (x2): no redop column
        return cls(width=11, times=(3, 7), algbw=(4, 8), busbw=(5, 9), wrong=())


def _rank_line(body: str) -> tuple[int, str, str] | None:
    """(rank, host, device) of a line ``Rank 0 Group 0 Pid 1234 on node1 device 0 [0x07] GPU``."""
    words = body.split()
    if len(words) < 2 or words[0] != "Rank" or not (words[1].isascii() and words[1].isdigit()):
        return None
    for i in range(2, len(words) - 4):
        if words[i] == "on" and words[i + 2] == "device":
            number, bracket = words[i + 3], words[i + 4]
            if number.isascii() and number.isdigit() and bracket.startswith("["):
                break
    else:
        return None
    host = words[i + 1]
    # the device name is the rest of the line after the bracket's closing "]"; one
    # search from the first bracket, never one per candidate
    close = body.find("]", body.find(bracket))
    if close < 0:
        return None
    return int(words[1]), host, body[close + 1 :].strip()


def _number(tokens: list[str], col: int, name: str) -> float:
    text = tokens[col]
    if not _NUMBER.match(text):
        raise ValueError(f"the {name} (column {col + 1}) should be a number but is {text[:20]!r}")
    return float(text)


def _row(tokens: list[str], layout: _Layout, block: int) -> tuple[int, float, float]:
    """(size, time, busbw/algbw ratio) of one data line, using one block of columns."""
    wrong = layout.wrong[block : block + 1]  # an older table's "error" column is not read
    need = max(layout.times[block], layout.algbw[block], layout.busbw[block], *wrong) + 1
    if len(tokens) < need:
        raise ValueError(
            f"this line has {len(tokens)} values but the table has {layout.width} columns "
            "(was it cut short when copied?)"
        )
    size = tokens[layout.size]
    if not (size.isascii() and size.isdigit() and len(size) < 20 and int(size) <= MAX_BYTES):
        raise ValueError(
            f"the size (column {layout.size + 1}) should be a whole number from 0 to "
            f"{MAX_BYTES:.0f} bytes but is {size[:20]!r}"
        )
    if wrong and tokens[wrong[0]] not in ("0", "N/A"):
        raise ValueError(
            f"nccl-tests found {tokens[wrong[0]][:20]!r} wrong results in this row (#wrong, "
            f"column {wrong[0] + 1}): a wrong result is not a measurement"
        )
    seconds = _number(tokens, layout.times[block], "time")
    algbw = _number(tokens, layout.algbw[block], "algbw")
    busbw = _number(tokens, layout.busbw[block], "busbw")
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError("the time should be a positive number")
    ratio = busbw / algbw if algbw > 0 else math.nan
    return int(size), seconds, ratio


def parse_all_reduce_perf(
    text: str, *, ranks: int | None = None, in_place: bool = False, strict: bool = True
) -> Measurement:
    """Parse ``all_reduce_perf`` output into a :class:`~lesson_lib.lab.records.Measurement`.

    Columns are read from the header line (with or without ``redop``, ``root`` or the leading ``#``,
    log lines mixed in), else guessed from the number of values on a line.

    Parameters
    ----------
    text : str
    ranks : int, optional
        GPUs; default the ``Rank`` lines' count, or inferred from busbw / algbw = 2(N-1)/N.
    in_place : bool, default False
        Use the in-place times instead of the out-of-place ones.
    strict : bool, default True
        False: malformed data lines are skipped, their numbers in ``config["skipped_lines"]``.

    Returns
    -------
    lesson_lib.lab.records.Measurement
        ``median_s`` holds nccl-tests' average times, in seconds; spreads are NaN.

    Raises
    ------
    NcclTestsFormatError
        Listing the malformed lines (``strict``), or when no data line is found.
    """
    problems: list[ParseProblem] = []
    rows: list[tuple[int, float]] = []
    rank_hosts: dict[int, str] = {}
    devices: list[str] = []
    layout: _Layout | None = None
    header_line = 0
    scale = 1e-6  # microseconds unless the units line says otherwise
    ratios: list[tuple[float, float]] = []  # (algbw, busbw/algbw) of each row
    last_size, last_line = 0, 0
    block = 1 if in_place else 0
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            problems.append(ParseProblem(number, line[:80], "the line is too long to be output"))
            continue
        stripped = line.strip()
        if not stripped or _LOG_LINE.search(stripped):
            continue
        commented = stripped.startswith("#")
        body = stripped.lstrip("#").strip()
        tokens = body.split()
        if not tokens:
            continue
        found = _Layout.from_header(tokens)
        if found is not None:
            layout, header_line = found, number
            continue
        if tokens[0] == "(B)":
            scale = 1e-3 if "(ms)" in tokens else 1e-6
            continue
        rank = _rank_line(body)
        if rank is not None:
            rank_hosts[rank[0]] = rank[1]
            devices.append(rank[2])
            continue
        if commented or not tokens[0].isdigit():
            if not commented and header_line and not body.startswith(_FOOTER):
                if layout is not None and not any(c.isdigit() for c in body):
                    problems.append(ParseProblem(number, line, "this is not a line of the table"))
            continue
        table = layout or _Layout.guess(len(tokens))
        if block >= len(table.times):
            problems.append(ParseProblem(number, line, "the table has no in-place columns"))
            continue
        try:
            size, seconds, ratio = _row(tokens, table, block)
        except ValueError as exc:
            problems.append(ParseProblem(number, line, str(exc)))
            continue
        if size == 0:  # nccl-tests' zero-byte row times no transfer
            continue
        reason = _out_of_order(size, seconds, scale, last_size, last_line)
        if reason:
            problems.append(ParseProblem(number, line, reason))
            continue
        last_size, last_line = size, number
        rows.append((size, seconds * scale))
        algbw = size / (seconds * scale)
        ratios.append((algbw, ratio))
    if problems and strict:
        raise NcclTestsFormatError(
            f"{len(problems)} line(s) of the all_reduce_perf table could not be read "
            "(fix or delete them, or use --lenient to skip them)",
            problems,
        )
    if not rows:
        raise NcclTestsFormatError(
            "no measurements found: expected the all_reduce_perf table, lines such as "
            "'8  2  float  sum  -1  10.48  0.00  0.00  0 ...' under a header line "
            "'size  count  type  redop  root  time  algbw  busbw ...'",
            problems,
        )
    if ranks is None:
        ranks = len(rank_hosts) or _ranks_from_ratio(ratios)
        if not 2 <= ranks <= MAX_RANKS:  # not typed by the user: say where it came from
            how = "its Rank lines" if rank_hosts else "busbw / algbw"
            raise NcclTestsFormatError(
                f"the output shows {ranks} GPU(s) ({how}), not 2 to {MAX_RANKS}; give --ranks"
            )
    ranks = require_int("ranks", ranks, minimum=2, maximum=MAX_RANKS)
    machine = {
        "devices": devices,
        "hosts": sorted(set(rank_hosts.values())),
        "nodes": len(set(rank_hosts.values())) or None,
    }
    config = {
        "in_place": in_place,
        "time_statistic": "mean",
        "skipped_lines": [p.line for p in problems],
    }
    return _measurement(rows, ranks, machine, config)


def _measurement(
    rows: list[tuple[int, float]], ranks: int, machine: dict, config: dict
) -> Measurement:
    """The Measurement of the table's (size, seconds) rows; its bandwidths follow from them."""
    data = {
        "format": FORMAT,
        "source": "nccl-tests",
        "complete": True,
        "ranks": ranks,
        "started": "",
        "machine": machine,
        "config": config,
        "records": [{"bytes": size, "median_s": seconds} for size, seconds in rows],
    }
    return measurement_from_dict(data)


def _out_of_order(size: int, seconds: float, scale: float, last_size: int, last_line: int) -> str:
    """Why a row (its time in units of ``scale`` seconds) cannot be read, or ``""``."""
    if size <= last_size:
        return (
            f"the size {size} is not larger than the one before it (line {last_line}: "
            f"{last_size}); were two runs pasted together?"
        )
    if seconds * scale < MIN_SECONDS:
        unit = "us" if scale == 1e-6 else "ms"
        return f"the time {seconds:g} {unit} is below {MIN_SECONDS:g} s, not a measured time"
    return ""


def _ranks_from_ratio(ratios: list[tuple[float, float]]) -> int:
    """Invert busbw / algbw = 2(N-1)/N at the fastest row (two decimals need >= 1 GB/s)."""
    usable = [(a, r) for a, r in ratios if a >= 1e9 and math.isfinite(r)]
    if not usable:
        raise NcclTestsFormatError(
            "cannot tell how many GPUs took part: the output has no 'Rank ... device' lines "
            "and no sizes fast enough (1 GB/s or more) to work it out from busbw / algbw; "
            "give the number with --ranks (Python: ranks=)"
        )
    ratio = max(usable)[1]
    if not 0.9 <= ratio < 2.0:
        raise NcclTestsFormatError(
            f"cannot tell how many GPUs took part: busbw / algbw is {ratio:.3g}, not 2(N-1)/N "
            "as for an all-reduce (is this all_reduce_perf output?); give the number with --ranks"
        )
    return max(2, round(2.0 / (2.0 - ratio)))


def read_all_reduce_perf(path: str | os.PathLike, **kwargs: object) -> Measurement:
    """Read a saved ``all_reduce_perf`` output file (:func:`parse_all_reduce_perf`).

    Parameters
    ----------
    path : str or path-like
    **kwargs
        Passed to :func:`parse_all_reduce_perf`.

    Returns
    -------
    lesson_lib.lab.records.Measurement
        With ``path`` set; a file that cannot be read or parsed is a NcclTestsFormatError naming it.
    """
    p = Path(path)
    data = read_file(p, "nccl-tests output", NcclTestsFormatError, limit=16 * 2**20)
    text = data.decode(errors="replace")
    try:
        m = parse_all_reduce_perf(text, **kwargs)
    except NcclTestsFormatError as exc:
        raise NcclTestsFormatError(f"{p}: {exc.summary}", exc.problems) from None
    return replace(m, path=str(p))
