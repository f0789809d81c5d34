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

from lesson_lib.chapters.experts import (
    collective_table,
    comparison_rows,
    experts_numbers,
    measured_table,
    preset_table,
)
from lesson_lib.chapters.kv_transfer import (
    decode_parallel_rows,
    kv_transfer_numbers,
    link_rows,
    workload_rows,
)
from lesson_lib.chapters.latency import decode_lines_table, scaling_numbers
from lesson_lib.chapters.payloads import payload_numbers, payload_table
from lesson_lib.chapters.prefill import prefill_numbers, regime_rows
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW

FUNCTIONS = {
    "scaling_numbers": scaling_numbers,
    "prefill_numbers": prefill_numbers,
    "payload_numbers": payload_numbers,
    "experts_numbers": experts_numbers,
    "kv_transfer_numbers": kv_transfer_numbers,
}


def digest(text: str) -> str:
    """Short SHA-256 of a rendered table."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tables() -> dict[str, str]:
    """Digest of each table a chapter shows."""
    out = {
        "decode_lines_table": digest(decode_lines_table()),
        "payload_table": digest(payload_table()),
        "collective_table": digest(collective_table()),
        "measured_table": digest(measured_table()),
        "preset_table": digest(preset_table()),
        "comparison_rows": digest(repr(comparison_rows())),
    }
    for name, fabric in (("FAST", FAST), ("SLOW", SLOW)):
        for n in (2, 4):
            rows = regime_rows(MODEL, GPU, fabric, n, 4096)
            out[f"regime_rows {name} {n}"] = digest(repr(rows))
    out["kv_transfer link_rows 4096"] = digest(repr(link_rows(4096)))
    out["kv_transfer link_rows 262144"] = digest(repr(link_rows(262_144)))
    out["kv_transfer workload_rows"] = digest(repr(workload_rows()))
    out["kv_transfer decode_parallel_rows"] = digest(repr(decode_parallel_rows()))
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
    "experts_numbers": {
        "ep": "8",
        "context": "32,768",
        "card": "H200 SXM-class, sold as 141 GB",
        "ds_layers": "61",
        "ds_dense_layers": "3",
        "ds_moe_layers": "58",
        "ds_alltoalls": "116",
        "ds_allreduces": "122",
        "ds_experts": "256",
        "ds_k": "8",
        "ds_shared": "1",
        "ds_experts_per_gpu": "32",
        "ds_hidden": "7,168",
        "ds_vector": "14 KiB",
        "ds_params": "671 billion",
        "ds_active": "37.6 billion",
        "ds_card_params": "671 billion",
        "ds_card_active": "37 billion",
        "ds_expert_share": "97.4 %",
        "ds_expert_gb": "653.91 GB",
        "ds_weights_gb": "671.03 GB",
        "ds_kv_token": "70,272 B",
        "ds_mtp": "1",
        "dispatch_bf16": "112 KiB",
        "dispatch_off": "98 KiB",
        "dispatch_fp8_off": "49 KiB",
        "layer_ep_bytes": "147 KiB",
        "layer_tp_bytes": "49 KiB",
        "off_share": "7/8",
        "tp_one_ms": "2.2 ms",
        "ep_one_ms": "5.28 ms",
        "tp_one_weights_ms": "0.98 ms",
        "ep_one_weights_ms": "4.1 ms",
        "tp_latency_ms": "1.22 ms",
        "ep_latency_ms": "1.16 ms",
        "tp_token_mib": "23.35 MiB",
        "ep_token_mib": "8.33 MiB",
        "tp_weights_gpu": "83.9 GB",
        "ep_weights_gpu": "98.9 GB",
        "tp_sequences": "28",
        "ep_sequences": "176",
        "tp_full_tokens_per_s": "2,356",
        "ep_full_tokens_per_s": "7,957",
        "tp_full_ms": "11.88 ms",
        "ep_full_ms": "22.12 ms",
        "ep_vs_tp_throughput": "3.38x",
        "ep_full_bound": "compute",
        "crossover_bf16": "45",
        "crossover_fp8": "90",
        "prefill_tokens": "4,096",
        "prefill_per_rank": "512",
        "deepep_one_dispatch": "13.2 us",
        "deepep_one_combine": "14.4 us",
        "deepep_one_layer": "27.6 us",
        "deepep_one_token_ms": "1.6 ms",
        "deepep_128_layer": "103.7 us",
        "deepep_128_tokens": "128",
        "nccl_alltoall_small": "7.87 us",
        "nccl_allreduce_small": "15.51 us",
        "measured_source": "https://pypi.org/project/aiconfigurator-core/0.12.0/",
        "fast_latency": "10 us",
        "inter_latency": "25 us",
        "across_latency_ms": "2.9 ms",
        "across_one_ms": "7.17 ms",
        "mixtral_alltoalls": "64",
        "qwen_alltoalls": "188",
        "qwen_moe_layers": "94",
        "h100_ep_fits": "0",
        "gpu_memory_gb": "84.9 GB",
        "card_memory_gb": "150.3 GB",
        "fast_bandwidth": "450 GB/s",
        "fast_alpha_b": "4.5 MB",
        "ds_latent": "512",
        "ds_rope": "64",
        "ex2_sequences": "16",
        "ex1_dispatch": "57,344 B",
        "ex1_dispatch_off": "50,176 B",
        "ex1_combine_off": "100,352 B",
        "ex1_ep_total": "150,528 B",
        "ex1_vector": "14,336 B",
        "ex1_tp_one": "25,088 B",
        "ex1_tp_total": "50,176 B",
        "ex1_ratio": "3x",
        "ex2_per_token": "100,352 B",
        "ex3_sequence_gb": "2.3 GB",
        "ex3_tp_free": "66.4 GB",
        "ex3_ep_free": "51.5 GB",
        "ex3_ep_per_gpu": "22",
    },
    "kv_transfer_numbers": {
        "state_mib_1": "146.8 MiB",
        "full_request_gb": "17.33 GB",
        "prompt_kv_mib": "256 MiB",
        "prompt_request_mib": "402.8 MiB",
        "prompt_request_mb": "422.4 MB",
        "state_tokens": "2,349",
        "short_prompt": "128",
        "short_kv_mib": "8 MiB",
        "short_state_share": "95 %",
        "nic_bits": "400 Gb/s",
        "nic_bandwidth": "50 GB/s",
        "nvlink_bandwidth": "450 GB/s",
        "nvlink_vs_nic": "9x",
        "ethernet_bits": "200 Gb/s",
        "ethernet_bandwidth": "25 GB/s",
        "ethernet_latency": "50 us",
        "nic_latency": "25 us",
        "gpus": "4",
        "full_one_nic": "0.347 s",
        "full_one_gpu_pair": "346.7 ms",
        "full_per_gpu_gib": "4.04 GiB",
        "prefill_prompt": "75.92 ms",
        "prefill_full": "8.14 s",
        "attention_full": "3.42 s",
        "attention_prompt": "0.83 ms",
        "prompt_nvlink": "0.24 ms",
        "prompt_nic": "2.14 ms",
        "prompt_ethernet": "16.95 ms",
        "full_nvlink": "9.64 ms",
        "full_nic": "86.69 ms",
        "full_ethernet": "693.4 ms",
        "full_ethernet_s": "0.69 s",
        "full_nic_share": "1.1 %",
        "full_ethernet_share": "8.5 %",
        "prompt_ethernet_share": "22 %",
        "nic_requests_prompt": "118",
        "nic_requests_full": "2.9",
        "stream_prompt_nic": "0.109 ms",
        "stream_full_nic": "5.39 ms",
        "stream_full_ethernet": "43 ms",
        "last_piece_prompt": "4 MiB",
        "required_prompt_nic": "1.39 GB/s",
        "required_full_ethernet": "2.13 GB/s",
        "short_prefill": "5.87 ms",
        "short_ethernet": "6.54 ms",
        "short_stream": "0.77 ms",
        "decode_batch": "64",
        "prompt_sequences_tp4": "676",
        "kv_heads": "4",
        "tp8_copies": "2",
        "tp4_kv_per_gpu": "4 GiB",
        "dcp_kv_per_gpu": "2 GiB",
        "tp4_sequences": "16",
        "tp8_sequences": "18",
        "dcp_sequences": "36",
        "dcp_extra_collectives": "32",
        "dcp_extra_latency": "0.32 ms",
        "ring_chunk_nic": "7,646",
        "ring_chunk_nvlink": "2,198",
        "ring_chunk_full": "131,072",
        "ring_block_full": "128 MiB",
        "ring_send_full": "2.71 ms",
        "ring_compute_full": "53.36 ms",
        "ring_margin_full": "20x",
        "cp2_prefill": "4.07 s",
        "gib_gb_error": "7 %",
        "state_share_full": "0.9 %",
        "layer_compute_prompt": "1.17 ms",
        "piece_rate_nic": "3.58 GB/s",
        "piece_shared_mib": "16 MiB",
        "piece_rate_shared": "14.3 GB/s",
        "ring_bytes_per_token": "1,024 B",
        "ring_heads_per_gpu": "6",
        "head_dim": "256",
        "ring_chunk_nic_no_latency": "6,593",
        "ring_groups_ratio": "34",
        "ring_max_groups": "32",
        "attention_layers": "16",
        "num_layers": "64",
        "linear_layers": "48",
    },
}
TABLES = {
    "decode_lines_table": "a9f77c2ee6967b80",
    "payload_table": "a720e3c474e0a4d1",
    "collective_table": "54f22b1845cd7fe0",
    "measured_table": "93ef33ba551bd967",
    "preset_table": "30af2be45aa5ee27",
    "comparison_rows": "710582ca07e1f473",
    "regime_rows FAST 2": "061a4a71a9bdf004",
    "regime_rows FAST 4": "95a7d03015d4c51a",
    "regime_rows SLOW 2": "1915a4a0880f3718",
    "regime_rows SLOW 4": "5813b4fe02c08b66",
    "kv_transfer link_rows 4096": "34a4a2c933b92ef2",
    "kv_transfer link_rows 262144": "340766413a646224",
    "kv_transfer workload_rows": "59d2f3f27607ee51",
    "kv_transfer decode_parallel_rows": "870a326483626a68",
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
