"""The shipped measured collectives (NVIDIA aiconfigurator 0.12.0) and the claims scored on them."""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib.measured import (
    DECODE_MESSAGE_BYTES,
    LIBRARY_KERNELS,
    _latency_at,
    evaluate_claims,
    link_class,
    load_collectives,
    measured_fabric,
    measured_table,
    systems,
)

DATA = Path(__file__).resolve().parents[1] / "lesson_lib" / "data" / "measured"


def _rows() -> list[dict]:
    with open(DATA / "collectives.csv") as f:
        return list(csv.DictReader(f))


def test_shipped_files_are_what_the_script_wrote():
    """Each file's SHA-256 is the one tools/fetch_measured.py recorded; the licence ships too."""
    manifest = json.loads((DATA / "MANIFEST.json").read_text())
    assert manifest["source"] == "aiconfigurator-core==0.12.0"
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name
    assert "Apache License" in (DATA / "LICENSE").read_text()
    assert "NVIDIA aiconfigurator" in (DATA / "NOTICE").read_text()


def test_schema_and_units():
    """Ten systems; bytes are whole 16-bit messages; seconds between 1 us and 10 s."""
    rows = _rows()
    assert list(rows[0]) == [
        "system", "runtime", "kernel", "op", "gpus", "message_bytes", "latency_s", "samples",
    ]  # fmt: skip
    assert len(systems()) == 10 and {r["system"] for r in rows} == set(systems())
    assert {r["op"] for r in rows} == {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}
    assert {int(r["gpus"]) for r in rows} == {2, 4, 8, 16}
    assert all(int(r["message_bytes"]) % 2 == 0 for r in rows)
    seconds = [float(r["latency_s"]) for r in rows]
    assert 1e-6 < min(seconds) and max(seconds) < 10.0
    assert len(load_collectives()) == len(rows)


def test_a_record_read_by_hand():
    """H100 SXM, vLLM 0.19.0's custom all-reduce of 128 bf16 elements (256 B) on 2 GPUs:
    0.004267 ms in a CUDA graph and 0.021208 ms eagerly in the source table."""
    _, m, t = measured_table("h100_sxm", 2, "vllm_graph", runtime="vllm 0.19.0")
    _, _, e = measured_table("h100_sxm", 2, "vllm_eager", runtime="vllm 0.19.0")
    assert m[0] == 256
    assert_allclose(t[0], 4.267e-6, rtol=1e-3)
    assert_allclose(e[0], 21.208e-6, rtol=1e-3)


def test_runtime_labels_are_what_the_rows_say():
    """Each row's runtime names its own kernel's library or engine, with the version its rows give.

    The wheel's folders disagree: h100_sxm's ``nccl/2.27.3`` holds NCCL 2.29.2 rows, pooled with
    ``nccl/2.29.2``'s (8 GPUs, 512 B all-reduce: 15.46, 15.55 and 15.59 us, median 15.55);
    ``sglang/0.5.6.post2`` holds TensorRT-LLM 1.2.0rc5 rows; the L40S's four trtllm folders
    hold one table, TensorRT-LLM 1.0.0, read once.
    """
    for r in load_collectives():
        name = r.kernel if r.kernel in LIBRARY_KERNELS else r.kernel.split("_")[0]
        assert r.runtime.startswith(f"{name} "), r
    h100 = {r.runtime for r in load_collectives() if (r.system, r.kernel) == ("h100_sxm", "nccl")}
    assert h100 == {"nccl 2.23", "nccl 2.29.2"}  # 2.23's table has no version column
    row = next(
        r
        for r in load_collectives()
        if (r.system, r.kernel, r.op, r.gpus, r.message_bytes)
        == ("h100_sxm", "nccl", "all_reduce", 8, 512)
    )
    assert (row.runtime, row.latency_s, row.samples) == ("nccl 2.29.2", 15.55e-6, 3)
    l40s = {
        (r.runtime, r.samples)
        for r in load_collectives()
        if (r.system, r.kernel) == ("l40s", "trtllm")
    }
    assert l40s == {("trtllm 1.0.0", 1)}


def test_library_all_reduce_latency_does_not_fall_with_size_beyond_noise():
    """In every NCCL and oneCCL all-reduce table a larger message never takes 30 % less time.

    36 tables (system, runtime, GPUs): a100 3, b200 NCCL 2.27.5, 2.28.9 and 2.29.2 x 3 GPU counts
    = 9, b300 3, b60 oneCCL 2021.15.9 on 3 and 2021.17.2-5 on 2, gb200 2, gb300 2, h100 3, h200 3,
    l40s 3, rtx_pro_6000_server 3 (h100's and h200's NCCL 2.23 timed no all-reduce).
    """
    tables = defaultdict(list)
    for r in load_collectives():
        if r.kernel in LIBRARY_KERNELS and r.op == "all_reduce":
            tables[(r.system, r.runtime, r.gpus)].append((r.message_bytes, r.latency_s))
    assert len(tables) == 36
    for key, points in tables.items():
        times = [t for _, t in sorted(points)]
        assert all(b >= 0.7 * a for a, b in itertools.pairwise(times)), key
        assert times[-1] > 10 * times[0], key  # 512 MiB take far longer than 512 B


def test_fitted_fabric_reproduces_the_table_where_it_fits():
    """H100 SXM, NCCL, 2 GPUs: alpha about the small messages' 6-7 us; the fit's times follow
    the table within 20 % at 4 KiB and at 64 MiB (the ranges it was fitted on)."""
    fitted = measured_fabric("h100_sxm", 2)
    _, m, t = measured_table("h100_sxm", 2)
    assert 5e-6 < fitted.fabric.latency < 8e-6 and 5e-6 < t[0] < 8e-6
    for size in (4096, 64 * 2**20):
        assert_allclose(fitted.fit.predict(size), _latency_at(m, t, size), rtol=0.2)
    assert fitted.fabric.bandwidth == pytest.approx(fitted.fit.bus_bandwidth)


def test_link_class_by_measured_bandwidth():
    """PCIe-class are the three cards without NVLink in the tables: L40S, RTX PRO 6000, Arc B60."""
    pcie = {s for s in systems() if link_class(s) == "PCIe-class"}
    assert pcie == {"l40s", "rtx_pro_6000_server", "b60"}


def _smallest(system: str, gpus: int, kernel: str) -> float:
    rows = [
        float(r["latency_s"])
        for r in _rows()
        if (r["system"], int(r["gpus"]), r["kernel"], r["op"])
        == (system, gpus, kernel, "all_reduce")
    ]
    return min(rows)


def test_four_slow_lose_breaks_on_the_l40s_by_hand():
    """With measured latencies the four PCIe GPUs win: the lesson's 50 us is pessimistic.

    By hand from the table's smallest messages: L40S at 4 GPUs about 11.7 us, H100 SXM at 2
    about 6.2 us. Four L40S-linked H100s: 54e9 / 4 / 3.35e12 = 4.03 ms + 128 x 11.7 us
    = 5.5 ms; two NVLinked: 8.06 ms + 128 x 6.2 us = 8.9 ms.
    """
    l40s, h100 = _smallest("l40s", 4, "nccl"), _smallest("h100_sxm", 2, "nccl")
    assert 10e-6 < l40s < 14e-6 and 5e-6 < h100 < 8e-6
    four = 54e9 / 4 / 3.35e12 + 128 * l40s
    two = 54e9 / 2 / 3.35e12 + 128 * h100
    assert four < two
    claim = {c.key: c for c in evaluate_claims()}["four_slow_lose"]
    assert any(case.startswith("l40s:") for case in claim.breaks)
    assert claim.total == 3


def test_graph_beats_eager_and_fast_latency_claims_by_hand():
    """H100: 4.27 us in a graph against 21.2 us eager holds; GB200's 2-GPU NCCL messages of
    512 B take 10.6 us or more, above the stated 10 us: the claim breaks there."""
    claims = {c.key: c for c in evaluate_claims()}
    graph = claims["graph_cuts_latency"]
    assert any(case.startswith("h100_sxm vllm 0.19.0 x2:") for case in graph.holds)
    assert _smallest("gb200", 2, "nccl") > 10.5e-6  # NCCL 2.29.2, both folders' runs pooled
    fast = claims["fast_latency_upper"]
    assert any(case.startswith("gb200:") for case in fast.breaks)
    assert any(case.startswith("h100_sxm:") for case in fast.holds)  # 6.3 us


def test_every_claim_can_fail_somewhere_or_is_tested_widely():
    """Each claim is scored on at least three cases, and some break: the registry can fail."""
    results = evaluate_claims()
    assert len(results) >= 8
    assert all(r.total >= 3 for r in results)
    assert any(r.breaks for r in results)
    verdicts = {r.key: r.verdict for r in results}
    assert verdicts["four_slow_lose"] == "holds on 0 of 3"
    assert verdicts["decode_latency_bound"].endswith("of 28")


def test_bad_requests_name_what_exists():
    """An unknown system lists the known ones; a missing table lists the system's tables."""
    with pytest.raises(ValueError, match="system must be one of a100_sxm"):
        measured_table("tpu_v5", 2)
    with pytest.raises(ValueError, match=r"no all_reduce table of kernel 'nccl' on 16 GPUs"):
        measured_table("h100_sxm", 16)
    _, m, t = measured_table("h100_sxm", 2)
    with pytest.raises(ValueError, match="message_bytes must be within"):
        _latency_at(m, t, 1.0)
    assert _latency_at(m, t, DECODE_MESSAGE_BYTES) == pytest.approx(
        np.exp(np.interp(np.log(10240), np.log(m), np.log(t)))
    )
    # an empty table once raised IndexError, a NaN one returned NaN
    for sizes, times in (([], []), ([8.0, 64.0], [np.nan, np.nan]), ([8.0, 64.0], [1e-6, 0.0])):
        with pytest.raises(ValueError, match="table must hold rows of finite sizes and latencies"):
            _latency_at(np.array(sizes), np.array(times), 16.0)


def test_smallest_engine_latency_by_mode():
    """H100 SXM, 2 GPUs: the quickest graph kernel's smallest message is below vLLM 0.19's
    4.27 us (SGLang 0.5.14 measured 2.4 us) and the quickest eager one above 17 us; the B60's
    engine kernel runs only eagerly."""
    from lesson_lib.measured import smallest_engine_latency

    graph = smallest_engine_latency("h100_sxm", 2, "graph")
    assert graph is not None and graph <= 4.267e-6
    assert smallest_engine_latency("h100_sxm", 2, "eager") > 17e-6
    assert smallest_engine_latency("b60", 2, "graph") is None


def test_engine_kernel_claim_leaves_out_pcie_systems_above_two_gpus():
    """Engines run NCCL on more than two PCIe-only GPUs, so those tables are not scored.

    Of 28 (system, GPUs) pairs with an engine kernel, six are PCIe-class above two
    GPUs (b60, l40s and rtx_pro_6000_server at 4 and 8): 22 remain. The one that
    breaks is the B60 at two GPUs, whose engine kernel runs eagerly: 74.9 us against
    the library's 16.1 us.
    """
    from lesson_lib.measured import evaluate_claims

    claim = next(c for c in evaluate_claims() if c.key == "engine_kernel_beats_library")
    cases = claim.holds + claim.breaks
    assert len(cases) == 22 and claim.verdict == "holds on 21 of 22"
    for system in ("b60", "l40s", "rtx_pro_6000_server"):
        assert not any(c.startswith((f"{system} x4", f"{system} x8")) for c in cases)
    assert claim.breaks == ("b60 x2: vllm_eager 74.9 us, library 16.1 us",)
    assert "left out" in claim.tested
