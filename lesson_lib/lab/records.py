"""Results files: write them atomically, read them back with clear errors.

One JSON file holds one measurement (an MPI sweep or imported nccl-tests output): ``{"format":
"lesson_lib.lab/1", "source": ..., "ranks": ..., "records": [{"bytes": 8, "median_s": ...,
"algbw": ..., ...}, ...]}``, times in seconds, bandwidths in bytes/second. A small message's record
may also hold ``each_s``, the times of all-reduces timed one by one, with their ``p50_s`` and ``p99_s``. :func:`read_results`
turns a bad file into a :class:`ResultsError` that says what is wrong and what to do.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from lesson_lib.model._safe_io import printable, read_file, require_output_file
from lesson_lib.model._validate import MAX_RANKS  # the most a results file may hold, as the model
from lesson_lib.model.collectives import ring_allreduce_factor

#: Format tag written into every results file.
FORMAT = "lesson_lib.lab/1"
#: Reference measurements shipped with the package (``lesson_lib/lab/data``),
#: shown where MPI cannot start. Made on the lesson's 2-core build machine with::
#:
#:     python -m lesson_lib.lab run -n 2 --out lesson_lib/lab/data/reference-allreduce-2ranks.json
#:     python -m lesson_lib.lab run -n 4 --max-bytes 1MiB --reps 11 \
#:         --out lesson_lib/lab/data/reference-allreduce-4ranks.json
#:     python -m lesson_lib.lab pingpong --max-bytes 1MiB --out lesson_lib/lab/data/reference-pingpong.json
#:     python -m lesson_lib.lab run -n 2 --min-bytes 10KiB --max-bytes 10KiB --reps 11 \
#:         --single 2000 --out lesson_lib/lab/data/reference-tails-2ranks.json
#:     (the same with --straggler-us 100 --out lesson_lib/lab/data/reference-straggler-2ranks.json)
REFERENCE_FILES = {2: "reference-allreduce-2ranks.json", 4: "reference-allreduce-4ranks.json"}
REFERENCE_PINGPONG = "reference-pingpong.json"
REFERENCE_TAILS = ("reference-tails-2ranks.json", "reference-straggler-2ranks.json")


#: Largest message size a results file may hold, bytes (1 PiB).
MAX_BYTES = float(2**50)
#: Largest file the lab reads, bytes.
MAX_FILE_BYTES = 64 * 2**20
#: Shortest time a record may hold, in seconds (one picosecond). No collective is faster, and a
#: smaller (denormal, or zero after rounding) time would make its bandwidth infinite or divide by 0.
MIN_SECONDS = 1e-12


class ResultsError(ValueError):
    """A results file is missing, empty, corrupt or inconsistent."""


@dataclass(frozen=True)
class Measurement:
    """One all-reduce measurement, as arrays over message sizes."""

    #: ``"mpi-allreduce"`` or ``"nccl-tests"``.
    source: str
    #: Ranks (GPUs or processes) in the all-reduce.
    ranks: int
    #: Message sizes, bytes, ascending.
    bytes: np.ndarray
    #: The median (MPI) or average (nccl-tests) seconds per all-reduce.
    median_s: np.ndarray
    #: 10th percentile of the timed batches, seconds (NaN where unknown).
    p10_s: np.ndarray
    #: 90th percentile of the timed batches, seconds (NaN where unknown).
    p90_s: np.ndarray
    #: Algorithm bandwidth, bytes/second.
    algbw: np.ndarray
    #: Bus bandwidth (algorithm bandwidth x 2(N-1)/N), bytes/second.
    busbw: np.ndarray
    #: False if the sweep stopped before its last size.
    complete: bool = True
    #: ISO 8601 start time (UTC), or ``""``.
    started: str = ""
    #: Facts about where it ran (CPU, cores, MPI library, ...).
    machine: dict = field(default_factory=dict)
    #: The sweep's settings.
    config: dict = field(default_factory=dict)
    #: Why an incomplete sweep stopped.
    stop_reason: str | None = None
    #: The file it was read from, or ``""``.
    path: str = ""
    #: Median and 99th percentile of all-reduces timed one by one, seconds (NaN where not timed).
    p50_s: np.ndarray | None = None
    p99_s: np.ndarray | None = None

    def label(self) -> str:
        """One line saying what was measured, where and when.

        Returns
        -------
        str
            For example ``"MPI all-reduce, 2 ranks, Intel Xeon ..., MPICH 5.0.2, 2026-01-01 12:00 UTC"``.
        """
        m = self.machine
        what = "MPI all-reduce" if self.source == "mpi-allreduce" else "nccl-tests all_reduce_perf"
        parts = [what, f"{self.ranks} ranks"]
        if m.get("oversubscribed"):
            parts[-1] += " (oversubscribed)"
        if m.get("cpu"):
            cores = m.get("logical_cores")
            parts.append(f"{m['cpu']}" + (f" ({cores} logical cores)" if cores else ""))
        if m.get("devices"):
            parts.append(", ".join(sorted(set(m["devices"]))))
        if m.get("mpi_library"):
            parts.append(" ".join(m["mpi_library"].split()[:3]))
        if self.started:
            parts.append(self.started[:16].replace("T", " ") + " UTC")
        # the facts come from a file: no control character of theirs reaches a terminal
        return ", ".join(printable(part, 200) for part in parts)


def write_json(path: str | os.PathLike, data: dict) -> Path:
    """Write ``data`` as JSON atomically (a temporary file, then a rename): never half-written.

    Parameters
    ----------
    path : str or path-like
        Destination; its folder is created if missing.
    data : dict
        JSON-serialisable content (no NaN or infinity).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        If ``path`` exists and is not a regular file, which a rename would replace.
    """
    dest = require_output_file(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, allow_nan=False)
            fh.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes files private; results are for sharing
        require_output_file(dest)  # again: it may have been replaced meanwhile
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


def write_results(path: str | os.PathLike, data: dict) -> Path:
    """Validate results content (:func:`validate`) and write it atomically (:func:`write_json`).

    Parameters
    ----------
    path : str or path-like
    data : dict

    Returns
    -------
    pathlib.Path
    """
    validate(data, where=str(path))
    return write_json(path, data)


def read_json(path: str | os.PathLike, what: str = "results file") -> dict:
    """Read a JSON object; a missing, empty or corrupt file raises a :class:`ResultsError`.

    Parameters
    ----------
    path : str or path-like
    what : str, default "results file"
        How messages name it.

    Returns
    -------
    dict
    """
    p = Path(path)
    text = read_file(p, what, ResultsError, MAX_FILE_BYTES).decode(errors="replace")
    if not text.strip():
        raise ResultsError(
            f"{what} {str(p)!r} is empty: the run that should have written it did not "
            "finish; run it again"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"{what} {str(p)!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg}); it is corrupt or truncated, so run the sweep again"
        ) from None
    except (RecursionError, ValueError):
        raise ResultsError(
            f"{what} {str(p)!r} is not a results file: its JSON is nested too deeply or holds "
            "numbers too long to read"
        ) from None
    if not isinstance(data, dict):
        raise ResultsError(f"{what} {str(p)!r} holds a JSON {type(data).__name__}, not an object")
    return data


def _positive(value: object, maximum: float = 1e18, minimum: float = 0.0) -> bool:
    """A finite number above 0, at least ``minimum`` and at most ``maximum``."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        number = float(value)
    except OverflowError:
        return False
    return math.isfinite(number) and 0 < number <= maximum and number >= minimum


def _show(value: object) -> str:
    """A short description of a value for a message (never the 400 digits of a huge int)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**18:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TEXT_FACTS = ("host", "cpu", "os", "python", "mpi_library", "mpi_standard", "mpi4py", "numpy")
_LIST_FACTS = ("devices", "hosts")
_FLAG_FACTS = ("oversubscribed",)


def _clean_machine(machine: object) -> dict:
    """Only facts of the expected kind: text as text, lists of text, flags, finite numbers."""
    if not isinstance(machine, dict):
        return {}
    clean: dict = {}
    for key, value in list(machine.items())[:100]:
        if not isinstance(key, str) or value is None:
            continue
        if key in _TEXT_FACTS:
            if isinstance(value, str):
                clean[key] = value[:200]
        elif key in _LIST_FACTS:
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                clean[key] = [v[:200] for v in value[:1024]]
        elif key in _FLAG_FACTS or isinstance(value, bool):
            if isinstance(value, bool):
                clean[key] = value
        elif isinstance(value, int | float) and _positive(abs(value) or 1.0, 1e15):
            clean[key] = value
        elif isinstance(value, str):
            clean[key] = value[:200]
    return clean


def validate(data: dict, where: str = "results") -> None:
    """Check the structure and the numbers of a results dictionary.

    Parameters
    ----------
    data : dict
    where : str, default "results"
        Name used in messages (usually the path).

    Raises
    ------
    ResultsError
        Naming the first problem found (record and field included).
    """
    if data.get("format") != FORMAT:
        raise ResultsError(
            f"{where}: format is {_show(data.get('format'))}, expected {FORMAT!r}; "
            "is this a lesson_lib.lab results file?"
        )
    ranks = data.get("ranks")
    if not isinstance(ranks, int) or isinstance(ranks, bool) or not 2 <= ranks <= MAX_RANKS:
        raise ResultsError(
            f"{where}: 'ranks' must be an integer from 2 to {MAX_RANKS}, got {_show(ranks)}"
        )
    for key in ("machine", "config"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise ResultsError(
                f"{where}: '{key}' must be an object, got {type(data[key]).__name__}"
            )
    records = data.get("records")
    if not isinstance(records, list) or not records:
        raise ResultsError(f"{where}: 'records' must be a non-empty list of sizes")
    last = 0
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise ResultsError(f"{where}: record {i} is not an object")
        for key, low, top in (("bytes", 1.0, MAX_BYTES), ("median_s", MIN_SECONDS, 1e6)):
            if not _positive(rec.get(key), top, low):
                raise ResultsError(
                    f"{where}: record {i} needs a number '{key}' from {low:g} to {top:g}, "
                    f"got {_show(rec.get(key))}"
                )
        if rec["bytes"] <= last:
            raise ResultsError(f"{where}: record {i}: sizes must be strictly ascending")
        last = rec["bytes"]
        each = rec.get("each_s", [])
        if not isinstance(each, list) or not all(_positive(t, 1e6, MIN_SECONDS) for t in each):
            raise ResultsError(f"{where}: record {i}: 'each_s' must be a list of seconds")
        for key in ("p10_s", "p90_s", "p50_s", "p99_s"):
            if rec.get(key) is not None and not _positive(rec[key], 1e6, MIN_SECONDS):
                raise ResultsError(
                    f"{where}: record {i}: '{key}' must be from {MIN_SECONDS:g} to 1e+06 s, or null"
                )


def measurement_from_dict(data: dict, path: str = "") -> Measurement:
    """Build a :class:`Measurement` from results content, once :func:`validate` passes it.

    Parameters
    ----------
    data : dict
    path : str, optional
        Where it came from, for messages and labels.

    Returns
    -------
    Measurement
        Bandwidths from bytes and times (busbw = algbw x 2(N-1)/N), missing spreads NaN.
    """
    validate(data, where=path or "results")
    recs = data["records"]
    ranks = int(data["ranks"])
    nbytes = np.array([r["bytes"] for r in recs], dtype=float)
    median = np.array([r["median_s"] for r in recs], dtype=float)

    def column(key: str) -> np.ndarray:
        return np.array([np.nan if r.get(key) is None else r[key] for r in recs], dtype=float)

    algbw = nbytes / median
    return Measurement(
        source=str(data.get("source", "mpi-allreduce")),
        ranks=ranks,
        bytes=nbytes,
        median_s=median,
        p10_s=column("p10_s"),
        p90_s=column("p90_s"),
        algbw=algbw,
        busbw=algbw * ring_allreduce_factor(ranks),
        complete=bool(data.get("complete", True)),
        started=str(data.get("started") or ""),
        machine=_clean_machine(data.get("machine")),
        config=dict(data.get("config") or {}),
        stop_reason=None if data.get("stop_reason") is None else str(data["stop_reason"])[:500],
        path=path,
        p50_s=column("p50_s"),
        p99_s=column("p99_s"),
    )


def read_results(path: str | os.PathLike) -> Measurement:
    """Read and validate a results file (:class:`ResultsError` if it cannot be used).

    Parameters
    ----------
    path : str or path-like
        A file written by the sweep or by the nccl-tests import.

    Returns
    -------
    Measurement
        Check ``.complete``: a sweep stopped by its time budget is partial.
    """
    return measurement_from_dict(read_json(path), path=str(path))


def reference_path(name: str) -> Path:
    """Path of a reference file shipped in ``lesson_lib/lab/data``.

    Parameters
    ----------
    name : str

    Returns
    -------
    pathlib.Path
    """
    return Path(str(resources.files("lesson_lib.lab").joinpath("data", name)))


def load_reference(ranks: int = 2) -> Measurement:
    """The reference all-reduce measurement shipped with the package.

    Parameters
    ----------
    ranks : {2, 4}

    Returns
    -------
    Measurement
    """
    if ranks not in REFERENCE_FILES:
        raise ValueError(f"ranks must be one of {sorted(REFERENCE_FILES)}, got {ranks!r}")
    return read_results(reference_path(REFERENCE_FILES[ranks]))


def measurement_to_dict(measurement: Measurement) -> dict:
    """Results-file content for a measurement, as :func:`write_results` takes it.

    Parameters
    ----------
    measurement : Measurement

    Returns
    -------
    dict
    """
    m = measurement

    def opt(x: float) -> float | None:
        return None if math.isnan(x) else float(x)

    return {
        "format": FORMAT,
        "source": m.source,
        "complete": m.complete,
        "stop_reason": m.stop_reason,
        "ranks": m.ranks,
        "started": m.started,
        "machine": m.machine,
        "config": m.config,
        "records": [
            {
                "bytes": int(b),
                "ranks": m.ranks,
                "median_s": float(t),
                "p10_s": opt(lo),
                "p90_s": opt(hi),
                "algbw": float(a),
                "busbw": float(bb),
            }
            for b, t, lo, hi, a, bb in zip(
                m.bytes, m.median_s, m.p10_s, m.p90_s, m.algbw, m.busbw, strict=True
            )
        ],
    }
