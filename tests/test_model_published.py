"""Published small-message all-reduce latencies: every record sourced and plausible."""

import dataclasses

import pytest
from numpy.testing import assert_allclose

from lesson_lib.model.published import (
    FABRIC_CLASSES,
    PUBLISHED,
    PublishedLatency,
    _published_rows,
    published_numbers,
    published_table,
)
from lesson_lib.model.specimen import MEASURED_2GPU_LATENCY, MEASURED_4GPU_LATENCY
from lesson_lib.model.units import US, KiB


@pytest.mark.parametrize("record", PUBLISHED, ids=lambda r: f"{r.source[19:]}-{r.ranks}")
def test_every_record_is_sourced_and_plausible(record):
    """A GitHub issue URL, a known fabric class, >= 2 ranks, a tiny message, 1-1000 us."""
    assert record.source.startswith("https://github.com/")
    assert "/issues/" in record.source
    assert record.fabric_class in FABRIC_CLASSES
    assert record.ranks >= 2
    assert 1 <= record.message_bytes <= KiB
    assert 1 * US <= record.latency_s <= 1000 * US
    assert record.system and record.fabric and record.note


def test_no_record_is_listed_twice():
    """(source, ranks, message size) identify a record."""
    keys = [(r.source, r.ranks, r.message_bytes) for r in PUBLISHED]
    assert len(keys) == len(set(keys))


def test_every_fabric_class_is_represented():
    """The table covers NVLink, PCIe and a cross-node run."""
    assert {r.fabric_class for r in PUBLISHED} == set(FABRIC_CLASSES)


def test_issue_123_matches_the_specimen_ring_fit():
    """The specimen's per-hop fit uses nccl-tests issue 123's 2- and 4-GPU times."""
    rows = {r.ranks: r.latency_s for r in PUBLISHED if r.source.endswith("nccl-tests/issues/123")}
    assert_allclose(rows[2], MEASURED_2GPU_LATENCY)
    assert_allclose(rows[4], MEASURED_4GPU_LATENCY, atol=0.05 * US)
    assert rows[2] < rows[4] < rows[8]


def test_rows_and_table():
    """One row per record, times in us, sources shortened; the table escapes text."""
    rows = _published_rows(PUBLISHED)
    assert len(rows) == len(PUBLISHED)
    assert rows[0][4] == "10 us"
    assert rows[0][5] == "NVIDIA/nccl-tests issue 123"
    odd = dataclasses.replace(PUBLISHED[0], note="a < b & c")
    html = published_table((odd,), caption="Reported")
    assert html.count("<tr>") == 2
    assert "a &lt; b &amp; c" in html
    assert "<caption>Reported</caption>" in html


def test_records_are_frozen():
    """Records cannot be edited in place."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        PUBLISHED[0].latency_s = 0.0  # type: ignore[misc]
    assert isinstance(PUBLISHED[0], PublishedLatency)


def test_published_numbers():
    """The glued strings come from the records, not from typed text."""
    from lesson_lib.model.published import published_numbers

    out = published_numbers()
    assert out["pub_2gpu_low"] == "6 us"
    assert out["pub_2gpu_high"] == "10.14 us"
    assert out["pub_ring_8"] == "33.7 us"
    assert out["pub_pcie_8"] == "43.47 us"
    assert out["pub_count"] == str(len(PUBLISHED))


def test_source_links_list_each_thread_once():
    """One Markdown link per distinct thread, nccl-tests issue 123 first."""
    from lesson_lib.model.published import source_links

    text = source_links()
    lines = text.splitlines()
    assert len(lines) == len({r.source for r in PUBLISHED})
    assert lines[0].startswith(
        "- [NVIDIA/nccl-tests#123](https://github.com/NVIDIA/nccl-tests/issues/123): "
    )


def test_pcie_reading_reprices_four_slow_gpus_at_the_measured_latency():
    """By hand: 13.5 GB of weights per GPU at 3.35 TB/s, plus 128 all-reduces of 43.47 us."""
    numbers = published_numbers()
    four = 13.5e9 / 3.35e12 + 128 * 43.47e-6  # 4.030 + 5.564 = 9.594 ms
    two_fast = 27e9 / 3.35e12 + 128 * 10e-6  # 8.060 + 1.280 = 9.340 ms
    one = 54e9 / 3.35e12  # 16.119 ms
    assert numbers["pub_pcie_line_4"] == f"{four * 1e3:.2f} ms" == "9.59 ms"
    assert numbers["pub_pcie_vs_fast_2"] == f"{four / two_fast:.2f}x" == "1.03x"
    assert numbers["pub_pcie_speedup_1_to_4"] == f"{one / four:.2f}x" == "1.68x"


def test_tuned_latencies_reprice_the_fast_step_from_two_to_four():
    """By hand: 27 or 13.5 GB per GPU at 3.35 TB/s plus 128 all-reduces of 3 us or 2.3 us.

    At 3 us: (8.060 + 0.384) / (4.030 + 0.384) = 8.444 / 4.414 = 1.913.
    At 2.3 us: (8.060 + 0.2944) / (4.030 + 0.2944) = 8.354 / 4.324 = 1.932.
    """
    numbers = published_numbers()
    two, four = 27e9 / 3.35e12, 13.5e9 / 3.35e12
    at_3 = (two + 128 * 3e-6) / (four + 128 * 3e-6)
    at_23 = (two + 128 * 2.3e-6) / (four + 128 * 2.3e-6)
    assert numbers["pub_fastest"] == "3 us"
    assert numbers["pub_fastest_speedup_2_to_4"] == f"{at_3:.2f}x" == "1.91x"
    assert numbers["pub_tuned_hopper"] == "2.3 us"
    assert numbers["pub_tuned_hopper_speedup_2_to_4"] == f"{at_23:.2f}x" == "1.93x"
