"""The payloads chapter's glued numbers and its table of ring factors and rates."""

from lesson_lib.chapters.payloads import payload_numbers
from lesson_lib.model.units import MiB


def test_payload_numbers_are_formatted_strings():
    """The chapter's extra numbers, with their units said aloud."""
    out = payload_numbers()
    assert all(isinstance(v, str) for v in out.values())
    assert out["rate_4_mb"] == "98.3 MB/s"
    assert out["headroom_nvlink_4"] == "4,578"
    assert out["headroom_pcie_4"] == "651"
    assert out["pcie_share_4"] == "0.15 %"
    assert out["wire_8"] == "2.1875 MiB"


def test_payload_table_rows():
    """One row per ring size with factor, bytes per token and both rate units."""
    from lesson_lib.chapters.payloads import RATE_YARDSTICK, payload_table

    html = payload_table(ns=(2, 4), caption="Wire")
    assert html.count("<tr>") == 3
    assert "<td>1.5</td><td>1.875 MiB</td><td>93.75 MiB/s</td><td>98.3 MB/s</td>" in html
    assert RATE_YARDSTICK == 100 * MiB
    assert payload_numbers()["rate_yardstick"] == "100 MiB/s"


def test_eight_slow_gpus_bytes_against_latency_by_hand():
    """2.1875 MiB over 64 GB/s is about 0.036 ms; 128 x 50 us is 6.4 ms, 179x more."""
    numbers = payload_numbers()
    seconds = 2.1875 * 1024**2 / 64e9
    assert numbers["wire_time_8_slow"] == f"{seconds * 1e3:.3f} ms"
    assert numbers["latency_8_slow"] == "6.4 ms"
    assert numbers["latency_over_bytes_8_slow"] == f"{128 * 50e-6 / seconds:.0f}"


def test_payload_numbers_follow_the_decode_rate_by_hand():
    """At 51 tokens/s a ring of 4 sends 1.875 MiB x 51 = 100,270,080 bytes/s: 100.3 MB/s; at
    50,000 tokens/s 98,304,000,000 bytes/s = 98,304 MB/s."""
    assert payload_numbers(tokens_per_s=51)["rate_4_mb"] == "100.3 MB/s"
    assert payload_numbers(tokens_per_s=50_000)["rate_4_mb"] == "98,304 MB/s"


def test_payload_numbers_follow_the_model_by_hand():
    """One layer of 1,000 bf16 values, two all-reduces a token: 4,000 bytes a token.
    A ring of 8 sends 1.75 x 4,000 = 7,000 bytes = 0.0067 MiB; over the slow fabric the two
    all-reduces wait 2 x 50 us = 0.1 ms, and a batch of 64 on 4 GPUs sends
    2 x 1.5 x 64 x 2,000 bytes / 64 GB/s = 6 us = 0.01 ms (all in the units the keys promise)."""
    from lesson_lib import ModelSpec

    tiny = ModelSpec("tiny", 1e6, 1000, 1, 1, 1, 64, 1024)
    out = payload_numbers(model=tiny)
    assert out["wire_8"] == "0.0067 MiB"
    assert out["latency_8_slow"] == "0.1 ms"
    assert out["bytes_4_slow_batch_64"] == "0.01 ms"


def test_payload_table_for_a_ring_of_three_by_hand():
    """N = 3: factor 4/3 = 1.333; 1.25 MiB x 4/3 = 1.6667 MiB a token; at 50,000 tokens/s that
    is 1,310,720 x 4/3 x 50,000 = 87,381,333,333 bytes/s, 87,381.3 MB/s."""
    from lesson_lib.chapters.payloads import payload_table

    html = payload_table(ns=(3,), tokens_per_s=50_000, caption="Three GPUs")
    assert "<caption>Three GPUs</caption>" in html
    assert "<td>3</td><td>1.333</td><td>1.6667 MiB</td>" in html
    assert "<td>87,381.3 MB/s</td>" in html
