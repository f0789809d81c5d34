"""The KV-transfer chapter's numbers and tables, checked by hand."""

from __future__ import annotations

import pytest

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.chapters.kv_transfer import (
    LINK_HEADER,
    WORKLOAD_HEADER,
    decode_parallel_rows,
    link_rows,
    workload_rows,
)
from lesson_lib.model.kv_links import (
    collective_latency_per_token,
)
from lesson_lib.model.specimen import MODEL


def test_the_glued_headline_numbers():
    """Full-length request over one 400 Gb/s NIC: 17,333,813,248 B / 50e9 B/s = 0.347 s;
    per GPU of four, 4,333,453,312 B = 4.04 GiB in 86.69 ms; the state 146.8 MiB is worth
    153,944,064 / 65,536 = 2,349 tokens of KV; NVLink's 450 GB/s is 9x a NIC's 50 GB/s."""
    n = chapter_numbers("kv_transfer")
    assert n["full_one_nic"] == "0.347 s"
    assert n["full_per_gpu_gib"] == "4.04 GiB"
    assert n["full_nic"] == "86.69 ms"
    assert n["state_mib_1"] == "146.8 MiB"
    assert n["state_tokens"] == "2,349"
    assert n["nvlink_vs_nic"] == "9x"
    assert n["nic_bits"] == "400 Gb/s" and n["nic_bandwidth"] == "50 GB/s"
    # 8 MiB of KV at 128 tokens beside 146.8 MiB of state: 146.8125 / 154.8125 = 95 %
    assert n["short_kv_mib"] == "8 MiB" and n["short_state_share"] == "95 %"
    assert n["kv_full_gib"] == "16 GiB"  # the worked example's number, not moved


def test_dcp_numbers_by_hand():
    """TP 8 copies each of the 4 KV heads twice: 16 GiB / 4 = 4 GiB per GPU, DCP 2 makes it
    2 GiB; 3 x 16 attention layers = 48 more collectives per token, 0.48 ms at 10 us."""
    n = chapter_numbers("kv_transfer")
    assert (n["tp8_copies"], n["tp4_kv_per_gpu"], n["dcp_kv_per_gpu"]) == ("2", "4 GiB", "2 GiB")
    assert (n["tp4_sequences"], n["tp8_sequences"], n["dcp_sequences"]) == ("16", "18", "36")
    assert n["dcp_extra_collectives"] == "48" and n["dcp_extra_latency"] == "0.48 ms"


def test_link_rows_at_the_lesson_prompt():
    """4,096 tokens, TP 4 on both sides: 422,379,520 B / 4 = 105,594,880 B = 100.7 MiB per
    GPU's port, 2.11 ms + 25 us on a NIC; the shared 25 GB/s port carries all 402.81 MiB in
    16.9 ms + 50 us."""
    rows = {row[0]: row for row in link_rows(4096)}
    assert len(rows["a NIC per GPU, compute fabric"]) == len(LINK_HEADER)
    nic = rows["a NIC per GPU, compute fabric"]
    assert nic[1] == "100.7 MiB" and nic[2] == "2.14 ms"
    shared = rows["the node's shared Ethernet port"]
    assert shared[1] == "402.81 MiB" and shared[2] == "16.95 ms"


def test_workload_rows_short_prompts_long_outputs_gain_little():
    """The row for a 512-token prompt and 4,096-token output adds well under a tenth of the
    step alone per token, colocated; a 4,096-token prompt with 256 output tokens doubles it."""
    rows = {row[0]: row for row in workload_rows()}
    assert all(len(row) == len(WORKLOAD_HEADER) for row in rows.values())

    def ms(text: str) -> float:
        return float(text.removesuffix(" ms").replace(",", ""))

    short_long = rows["512, 4,096"]
    assert ms(short_long[2]) < 0.1 * ms(short_long[3])
    long_short = rows["4,096, 256"]
    assert ms(long_short[2]) > ms(long_short[3])


def test_decode_parallel_rows_by_hand():
    """TP 4 and TP 8 hold 4 GiB of KV per GPU per full-length sequence, DCP 2 halves it;
    the TP all-reduces' latency is 128 x 10 us = 1.28 ms, DCP adds 48 x 10 us."""
    rows = decode_parallel_rows()
    assert [r[1] for r in rows] == ["4 GiB", "4 GiB", "2 GiB"]
    assert [r[2] for r in rows] == ["16", "18", "36"]
    assert [r[3] for r in rows] == ["1.28 ms", "1.28 ms", "1.76 ms"]
    assert collective_latency_per_token(MODEL, 8, 2) == pytest.approx(176 * 10e-6)


def test_disaggregated_rows_by_hand():
    """The lesson's prompt, TP 4 to TP 4: 256 MiB of KV + 153,944,064 B of state = 422,379,520 B,
    a quarter per GPU pair. NVLink: 105,594,880 / 450e9 + 10 us = 0.24 ms; a NIC per GPU:
    / 50e9 + 25 us = 2.14 ms; one shared 25 GB/s port for all of it: 422,379,520 / 25e9 + 50 us
    = 16.95 ms."""
    from lesson_lib.chapters.kv_transfer import DISAGGREGATED_HEADER, disaggregated_rows

    rows = disaggregated_rows()
    assert [len(r) for r in rows] == [len(DISAGGREGATED_HEADER)] * 3
    shipped = [r[1] for r in rows]
    assert (
        shipped
        == [
            f"{(105_594_880 / 450e9 + 10e-6) * 1e3:.2f}",
            f"{(105_594_880 / 50e9 + 25e-6) * 1e3:.2f}",
            f"{(422_379_520 / 25e9 + 50e-6) * 1e3:.2f}",
        ]
        == ["0.24", "2.14", "16.95"]
    )
