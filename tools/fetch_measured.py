"""Write ``lesson_lib/data/measured/`` from NVIDIA aiconfigurator's measured collective tables.

The ``aiconfigurator-core`` wheel on PyPI (Apache-2.0) ships latency tables
of collectives measured on ten GPU systems, as Parquet files under
``aiconfigurator_core/systems/data/<system>/comm/<runtime>/<version>/``.
This script downloads the wheel once (``pip download --no-deps``, about
80 MB), reads the all-reduce, all-gather, reduce-scatter and all-to-all
tables of the communication libraries (NCCL, oneCCL) and of the serving
engines' own all-reduce kernels (vLLM, SGLang, TensorRT-LLM), and writes
them in SI units into one small CSV that the lesson ships:

* ``message_bytes`` = the table's ``message_size`` (elements) x 2 bytes:
  only the 16-bit rows (``half``, ``bfloat16``) are kept, the activations'
  type in serving;
* ``latency_s`` = the table's ``latency`` (milliseconds) / 1000;
* ``runtime`` = what the rows say ran them, not the folder's name: a
  library table's ``kernel_source`` (``nccl``, ``oneccl``) with its
  ``version`` column, the library's own version (the ``framework`` column
  there names the harness, TensorRT-LLM or vLLM); an engine table's
  ``framework`` (``vllm``, ``sglang``, ``trtllm``) with its ``version``.
  The folders disagree with their rows in places (``h100_sxm``'s
  ``nccl/2.27.3`` holds NCCL 2.29.2 rows, ``sglang/0.5.6.post2`` holds
  TensorRT-LLM 1.2.0rc5 rows); the rows win, and every disagreement is
  printed. Only the two tables with no version column (``h100_sxm``'s
  and ``h200_sxm``'s ``nccl/2.23``) keep the folder's label;
* folders whose rows carry one label are merged: a table whose converted
  rows repeat, row for row, another's already read under that label is a
  copy (the wheel's ``collection_meta.yaml`` calls some "carry-forward")
  and is read once; distinct tables pool their rows;
* repeated measurements of one (system, runtime, kernel, op, GPUs, size),
  within a table or pooled across tables, are merged into their median
  (``samples`` says how many).

It needs ``pyarrow``, which the lesson does not: run it from a scratch
environment, never at build or test time::

    python3 -m venv /tmp/measured && /tmp/measured/bin/pip install pyarrow
    /tmp/measured/bin/python tools/fetch_measured.py

``MANIFEST.json`` records the wheel's SHA-256 and every written file's;
``tests/test_measured.py`` checks the shipped files against it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "lesson_lib" / "data" / "measured"

#: The wheel the tables come from.
PACKAGE, VERSION = "aiconfigurator-core", "0.12.0"
#: Inside the wheel.
PREFIX = "aiconfigurator_core/systems/data/"
#: The tables read: a communication library's collectives, or an engine's all-reduce.
TABLES = ("nccl_perf.parquet", "oneccl_perf.parquet", "custom_allreduce_perf.parquet")
#: 16-bit element types, two bytes each.
SIXTEEN_BIT = {"half", "bfloat16", "float16"}
#: Columns of the CSV.
COLUMNS = ("system", "runtime", "kernel", "op", "gpus", "message_bytes", "latency_s", "samples")


def download_wheel(folder: Path) -> Path:
    """``pip download`` the wheel into ``folder``; return its path."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(folder)]
    subprocess.run([*command, f"{PACKAGE}=={VERSION}"], check=True)
    (wheel,) = folder.glob("aiconfigurator_core-*.whl")
    return wheel


def kernel_name(table: str, row: dict) -> str:
    """The kernel a row measured: ``nccl``, ``oneccl`` or the engine's backend (``vllm_graph``)."""
    if table != "custom_allreduce_perf.parquet":
        return str(row["kernel_source"]).lower()
    backend = row.get("backend")
    if backend:
        return str(backend)
    return str(row["kernel_source"]).lower()  # TRTLLM, TRTLLM_MNNVL_oneshot ...


def runtime_label(table: str, row: dict) -> str | None:
    """What ran a row, as the row says (``"nccl 2.29.2"``); None when it has no version column."""
    if not row.get("version"):
        return None
    library = table != "custom_allreduce_perf.parquet"
    name = row["kernel_source"] if library else row["framework"]
    return f"{str(name).lower()} {row['version']}"


def read_tables(wheel: Path) -> tuple[list[dict], list[str], dict[str, str]]:
    """Every kept row of the wheel's tables, the tables read, and each system's device name.

    Prints each table whose rows name another runtime than its folder, and each copy skipped.
    """
    import pyarrow.parquet as pq

    rows: list[dict] = []
    tables: list[str] = []
    devices: dict[str, str] = {}
    seen: dict[tuple, str] = {}  # a table's converted rows -> the first table that had them
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            if not name.startswith(PREFIX) or name.rsplit("/", 1)[-1] not in TABLES:
                continue
            system, comm, runtime, version, table = name[len(PREFIX) :].split("/")
            if comm != "comm":
                continue
            tables.append(name)
            folder = f"{runtime} {version}"
            kept = []
            for row in pq.read_table(io.BytesIO(archive.read(name))).to_pylist():
                dtype = row.get("nccl_dtype") or row.get("allreduce_dtype")
                if dtype not in SIXTEEN_BIT:
                    continue
                if row.get("device"):
                    devices.setdefault(system, row["device"])
                kept.append(
                    {
                        "system": system,
                        "runtime": runtime_label(table, row) or folder,
                        "kernel": kernel_name(table, row),
                        "op": row["op_name"],
                        "gpus": int(row["num_gpus"]),
                        "message_bytes": int(row["message_size"]) * 2,
                        "latency_s": float(row["latency"]) / 1e3,
                    }
                )
            where = name[len(PREFIX) :]
            labels = sorted({r["runtime"] for r in kept})
            if labels != [folder]:
                print(f"{where}: folder says {folder!r}, rows say {', '.join(labels)}")
            key = tuple(sorted(tuple(r.values()) for r in kept))
            if key in seen:
                print(f"{where}: a copy of {seen[key]}, read once")
                continue
            seen[key] = where
            rows += kept
    return rows, tables, devices


def merge_repeats(rows: list[dict]) -> list[dict]:
    """One row per (system, runtime, kernel, op, GPUs, size): the median latency."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        key = (r["system"], r["runtime"], r["kernel"], r["op"], r["gpus"], r["message_bytes"])
        groups[key].append(r["latency_s"])
    merged = []
    for key in sorted(groups):
        values = groups[key]
        merged.append(
            dict(zip(COLUMNS, (*key, f"{statistics.median(values):.6g}", len(values)), strict=True))
        )
    return merged


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write(wheel: Path) -> None:
    """Write the CSVs, NOTICE and MANIFEST.json into :data:`OUT`."""
    rows, tables, devices = read_tables(wheel)
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "collectives.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(merge_repeats(rows))
    with open(OUT / "systems.csv", "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(("system", "device"))
        writer.writerows(sorted(devices.items()))
    (OUT / "NOTICE").write_text(
        "The files collectives.csv and systems.csv are derived from the measured\n"
        f"communication tables of NVIDIA aiconfigurator ({PACKAGE} {VERSION} on PyPI,\n"
        "https://github.com/ai-dynamo/aiconfigurator), licensed under the Apache\n"
        "License 2.0 (LICENSE in this folder). Changes: only the 16-bit rows are\n"
        "kept, units converted to bytes and seconds, each row labelled with the\n"
        "runtime and version its own columns name (not its folder's), tables\n"
        "that repeat another's rows read once, repeated measurements merged\n"
        "into their median, by tools/fetch_measured.py. The tables read:\n"
        + "".join(f"  {t}\n" for t in tables)
    )
    files = ("collectives.csv", "systems.csv", "NOTICE")
    manifest = {
        "source": f"{PACKAGE}=={VERSION}",
        "wheel": wheel.name,
        "wheel_sha256": sha256(wheel),
        "files": {name: sha256(OUT / name) for name in files},
    }
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {len(merge_repeats(rows))} rows from {len(tables)} tables into {OUT}")


def main(argv: list[str] | None = None) -> int:
    """Download the wheel (or use the one given as the only argument) and write the data.

    Parameters
    ----------
    argv : list of str, optional
        ``[path to the wheel]`` to skip the download; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success.
    """
    args = sys.argv[1:] if argv is None else argv
    if args:
        write(Path(args[0]))
        return 0
    with tempfile.TemporaryDirectory(prefix="lesson-measured-") as tmp:
        write(download_wheel(Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
