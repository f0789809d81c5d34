"""The experts chapter: the collective table, the presets table and TP against EP, by hand."""

from __future__ import annotations

from lesson_lib.chapters.experts import (
    collective_rows,
    comparison_rows,
    experts_numbers,
    measured_rows,
    preset_rows,
)
from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.model.experts import comparison
from lesson_lib.model.specimen import FAST


def test_collective_rows_by_hand():
    """8 ranks on the fast fabric (10 us, 450 GB/s, no hop cost), 10 KiB and 40 MiB.

    all-reduce: 14 steps, 1.75 x; 10 us + 1.75 x 10,240 B / 450 GB/s = 10.04 us; 40 MiB:
    10 + 1.75 x 41,943,040 / 450e9 s = 10 + 163.1 = 173.1 us. The halves and the all-to-all:
    0.875 x, 10.02 us and 10 + 81.55 = 91.6 us. send/recv: 1 x, 10 + 93.2 = 103.2 us.
    """
    rows = {r[0]: r[2:] for r in collective_rows()}
    assert rows["all-reduce"] == ("14", "1.75x", "10.04 us", "173.1 us")
    assert rows["reduce-scatter"] == ("7", "0.875x", "10.02 us", "91.6 us")
    assert rows["all-gather"] == ("7", "0.875x", "10.02 us", "91.6 us")
    assert rows["all-to-all"] == ("1", "0.875x", "10.02 us", "91.6 us")
    assert rows["send/recv"] == ("1", "1x", "10.02 us", "103.2 us")


def test_measured_rows_set_the_model_beside_nccl():
    """The smallest all-to-all: 512 B over 8 ranks, measured 7.76 us (NCCL 2.29.2, the median of
    7.44, 7.76 and 7.98 us), the model 10 us + 448 B / 450 GB/s = 10.001 us, 10.001 / 7.76 =
    1.29 times the measurement."""
    row = next(r for r in measured_rows(FAST) if r[0] == "all-to-all" and r[2] == "512 B")
    assert row[3:] == ("7.76 us", "10 us", "1.29x")


def test_preset_rows():
    """The specimen is dense; DeepSeek-V3's routed experts are 653.9 / 671.0 = 97.4 %."""
    rows = {r[0]: r for r in preset_rows()}
    assert rows["Qwen3.8-27B"][4] == "dense"
    assert rows["DeepSeek-V3"][3:7] == ("97.4 %", "256 / 8", "58 of 61", "116")
    assert rows["Llama-3.1-70B"][7] == "320 KiB"


def test_the_comparison_rows_name_the_layouts():
    """One row per layout of the example, TP first."""
    assert [r[0] for r in comparison_rows(comparison())] == [
        "TP 8, all-reduces",
        "EP 8 + DP attention, all-to-alls",
        "TP 8 + DCP 8, all-reduces and DCP's collectives",
    ]


def test_full_node_rows_by_hand():
    """Full node at 32,768 tokens on 8 H200-class cards (4.8 TB/s, 989 TFLOP/s, fast fabric).

    TP 8, 28 sequences: weights 10.47 ms (as without the cache), the replicated latent
    28 x 2,302,672,896 B = 64.47 GB per GPU, 13.43 ms; FLOPs 0.27 ms, latency 122 x 10 us =
    1.22 ms, all-reduce bytes 122 x 1.75 x 28 x 14,336 B / 450 GB/s = 0.19 ms:
    10.47 + 13.43 + 1.22 + 0.19 = 25.32 ms, 28 / 25.32 ms = 1,106 tokens/s.
    EP 8, 176 sequences: weights 20.53 ms; 22 sequences' latent, 50.66 GB, 10.55 ms, under
    attention's 22 x 61 x 32,768 x 278,528 / 989e12 = 12.38 ms; latency 1.16 ms, bytes 0.43 ms:
    20.53 + 12.38 + 1.16 + 0.43 = 34.50 ms, 176 / 34.50 ms = 5,101 tokens/s.
    TP 8 + DCP 8, 230 sequences: weights 17.46 ms; attention 230 x 61 x 4,096 x 278,528 /
    989e12 = 16.18 ms over the 13.79 ms of its 66.20 GB; latency (122 + 183) x 10 us = 3.05 ms;
    bytes 122 x 1.75 x 230 x 14,336 B + 61 x 230 x 244,160 B = 703,969,280 + 3,425,564,800 B,
    9.18 ms: 17.46 + 16.18 + 3.05 + 9.18 = 45.87 ms, 230 / 45.87 ms = 5,014 tokens/s.
    """
    rows = {r[0].split(",")[0]: r[5:] for r in comparison_rows()}
    assert rows["TP 8"] == ("28", "64.5 GB", "25.32 ms", "1,106")
    assert rows["EP 8 + DP attention"] == ("176", "50.7 GB", "34.5 ms", "5,101")
    assert rows["TP 8 + DCP 8"] == ("230", "66.2 GB", "45.87 ms", "5,014")


def test_exercise_numbers_by_hand():
    """Exercise 1: 8 x 7168 B = 57,344 B dispatched in FP8, 7/8 leave: 50,176 B; combine
    7/8 x 114,688 = 100,352 B; 150,528 B in all. TP: 1.75 x 14,336 = 25,088 B per all-reduce,
    50,176 B for two; ratio 3."""
    n = experts_numbers()
    assert n["ex1_dispatch"] == "57,344 B"
    assert n["ex1_dispatch_off"] == "50,176 B"
    assert n["ex1_combine_off"] == "100,352 B"
    assert n["ex1_ep_total"] == "150,528 B"
    assert n["ex1_tp_total"] == "50,176 B"
    assert n["ex1_ratio"] == "3x"
    assert n["ds_alltoalls"] == "116" and n["ds_allreduces"] == "122"
    assert n["crossover_bf16"] == "45"  # 4.5 MB / 100,352 B = 44.8


def test_numbers_include_the_worked_example_and_glue_refuses_nothing():
    """numbers() holds the overview's values and the chapter's own."""
    values = chapter_numbers("experts")
    assert values["allreduces_per_token"] == "128"
    assert values["ep"] == "8"
