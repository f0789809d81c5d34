"""Pinned chapter numbers: the formatted values the chapters glue, and their tables.

A snapshot, not a derivation: the literal values below were computed by the
current model and reviewed in the built chapters. They make any change to
what a reader is shown visible in a diff (and they kill most of the mutants
``make mutation`` makes in the ``*_numbers`` and table functions). A change
of the model meant to move them regenerates this file's data with
``python tests/test_chapter_number_pins.py`` (review the diff).
"""

from __future__ import annotations

import hashlib

import pytest

from lesson_lib.chapters.latency import decode_lines_table, scaling_numbers
from lesson_lib.chapters.payloads import payload_numbers, payload_table
from lesson_lib.chapters.prefill import prefill_numbers, regime_rows
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW

FUNCTIONS = {
    "scaling_numbers": scaling_numbers,
    "prefill_numbers": prefill_numbers,
    "payload_numbers": payload_numbers,
}


def digest(text: str) -> str:
    """Short SHA-256 of a rendered table."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tables() -> dict[str, str]:
    """Digest of each table a chapter shows."""
    out = {
        "decode_lines_table": digest(decode_lines_table()),
        "payload_table": digest(payload_table()),
    }
    for name, fabric in (("FAST", FAST), ("SLOW", SLOW)):
        for n in (2, 4):
            rows = regime_rows(MODEL, GPU, fabric, n, 4096)
            out[f"regime_rows {name} {n}"] = digest(repr(rows))
    return out


NUMBERS = {
    "scaling_numbers": {
        "hbm_bandwidth": "3.35 TB/s",
        "weights_share_2": "27 GB",
        "weights_share_4": "13.5 GB",
        "bandwidth_2_fast": "0.003 ms",
        "bandwidth_4_slow": "0.031 ms",
        "speedup_1_to_4_fast": "3.04x",
        "speedup_1_to_4_slow": "1.55x",
        "slow_4_vs_fast_2": "1.12x",
        "limit_fast": "12.6x",
        "limit_slow": "2.5x",
        "ceiling_tokens_per_s_slow": "156",
        "gpus_to_90_percent_slow": "23",
        "break_even_4_vs_2": "41.5 us",
        "break_even_2_vs_1": "63 us",
        "speedup_fast_16": "7x",
        "speedup_slow_16": "2.2x",
        "ring_hop": "1.725 us",
        "ring_base": "6.55 us",
        "ring_latency_8": "30.7 us",
        "ring_peak_n": "6",
        "ring_peak_speedup": "2.8x",
    },
    "prefill_numbers": {
        "fast_bandwidth": "450 GB/s",
        "slow_bandwidth": "64 GB/s",
        "crossover_fast_mib": "4.29 MiB",
        "crossover_fast_4": "3 MB",
        "crossover_slow": "3.2 MB",
        "crossover_tokens_fast": "439",
        "decode_below_crossover": "439x",
        "prefill_above_crossover": "9.3x",
        "decode_bandwidth_term_fast": "23 ns",
        "prefill_allreduce_fast": "103 us",
        "prefill_weights_4": "4.03 ms",
        "decode_flops_4": "13.65 us",
        "prefill_total_fast_4": "75.09 ms",
        "prefill_total_slow_4": "188.14 ms",
        "prefill_per_token_fast_4": "18.3 us",
        "prefill_per_token_slow_4": "45.9 us",
        "decode_per_token_fast_4": "5.31 ms",
        "prefill_cheaper_fast_4": "290x",
        "prefill_slowdown_slow_4": "2.51x",
        "prefill_tokens_per_s_fast_4": "54,550",
        "chip_crossover_tokens": "295",
    },
    "payload_numbers": {
        "rate_4_mb": "98.3 MB/s",
        "rate_4_gb": "0.0983 GB/s",
        "mib_bytes": "1,048,576",
        "gb_bytes": "1,000,000,000",
        "headroom_nvlink_4": "4,578",
        "headroom_pcie_4": "651",
        "headroom_ib_4": "509",
        "pcie_share_4": "0.15 %",
        "fill_pcie_4": "32,552",
        "nvlink_bandwidth": "450 GB/s",
        "pcie_bandwidth": "64 GB/s",
        "ib_bandwidth": "50 GB/s",
        "nvlink_both_directions": "900 GB/s",
        "wire_8": "2.1875 MiB",
        "wire_time_8_slow": "0.036 ms",
        "latency_8_slow": "6.4 ms",
        "latency_over_bytes_8_slow": "179",
        "bytes_4_slow_batch_1": "0.031 ms",
        "bytes_4_slow_batch_64": "1.97 ms",
        "rate_yardstick": "100 MiB/s",
    },
}
TABLES = {
    "decode_lines_table": "a9f77c2ee6967b80",
    "payload_table": "a720e3c474e0a4d1",
    "regime_rows FAST 2": "061a4a71a9bdf004",
    "regime_rows FAST 4": "95a7d03015d4c51a",
    "regime_rows SLOW 2": "1915a4a0880f3718",
    "regime_rows SLOW 4": "5813b4fe02c08b66",
}


@pytest.mark.parametrize("name", list(NUMBERS))
def test_glued_numbers_are_pinned(name):
    """Every formatted number of the chapter, key and text, is the pinned one."""
    assert FUNCTIONS[name]() == NUMBERS[name]


@pytest.mark.parametrize("name", list(TABLES))
def test_tables_are_pinned(name):
    """Each table's rendering hashes to the pinned digest."""
    assert tables()[name] == TABLES[name]


if __name__ == "__main__":  # pragma: no cover - run by hand after a deliberate change
    print("NUMBERS = {")
    for name, function in FUNCTIONS.items():
        print(f"    {name!r}: {{")
        for key, value in function().items():
            print(f"        {key!r}: {value!r},")
        print("    },")
    print("}")
    print("TABLES = {")
    for name, value in tables().items():
        print(f"    {name!r}: {value!r},")
    print("}")
