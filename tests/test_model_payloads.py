"""Tests of lesson_lib.model.payloads: decode's bytes per rank and their rate against the fabrics."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from lesson_lib.model.payloads import (
    FABRIC_BANDWIDTHS,
    decode_wire_bytes,
    decode_wire_rate,
    headroom,
    token_payload_bytes,
    tokens_to_fill,
)
from lesson_lib.model.specimen import (
    INFINIBAND_NDR_BANDWIDTH,
    MODEL,
    NVLINK_BANDWIDTH,
    PCIE_BANDWIDTH,
)
from lesson_lib.model.units import GB, KiB, MiB


def test_token_payload_is_128_hidden_vectors():
    """128 all-reduces of one 10 KiB hidden vector: 1.25 MiB per token."""
    assert_allclose(token_payload_bytes(MODEL), 128 * 10 * KiB)
    assert_allclose(token_payload_bytes(MODEL), 1.25 * MiB)


def test_wire_bytes_follow_the_ring_factor():
    """Each rank sends 2(n-1)/n of the payload: nothing alone, 1x on 2, 1.5x on 4."""
    assert decode_wire_bytes(MODEL, 1) == 0
    assert_allclose(decode_wire_bytes(MODEL, 2), 1.25 * MiB)
    assert_allclose(decode_wire_bytes(MODEL, 4), 1.875 * MiB)
    assert_allclose(decode_wire_bytes(MODEL, 8), 1.75 * 1.25 * MiB)


def test_rate_at_50_tokens_is_under_100_mib_per_second():
    """62.5 MiB/s on 2 GPUs and 93.75 MiB/s on 4, both under 100 MiB/s."""
    assert_allclose(decode_wire_rate(MODEL, 2, 50), 62.5 * MiB)
    assert_allclose(decode_wire_rate(MODEL, 4, 50), 93.75 * MiB)
    assert decode_wire_rate(MODEL, 4, 50) < 100 * MiB


def test_rate_rejects_negative_tokens_per_second():
    """A negative decode rate names the parameter."""
    with pytest.raises(ValueError, match="tokens_per_s"):
        decode_wire_rate(MODEL, 2, -1)


def test_headroom_is_bandwidth_over_rate():
    """NVLink's 450 GB/s covers the 4-GPU decode traffic about 4,578 times."""
    rate = decode_wire_rate(MODEL, 4, 50)
    assert_allclose(headroom(NVLINK_BANDWIDTH, rate), 450e9 / (93.75 * 2**20))
    assert 4500 < headroom(NVLINK_BANDWIDTH, rate) < 4600
    with pytest.raises(ValueError, match="rate"):
        headroom(NVLINK_BANDWIDTH, 0)
    with pytest.raises(ValueError, match="bandwidth"):
        headroom(-1, rate)


def test_tokens_to_fill_a_wire():
    """At that decode rate the wire bytes would exactly equal the bandwidth."""
    tokens = tokens_to_fill(MODEL, 4, PCIE_BANDWIDTH)
    assert_allclose(tokens * decode_wire_bytes(MODEL, 4), PCIE_BANDWIDTH)
    with pytest.raises(ValueError, match="n must be"):
        tokens_to_fill(MODEL, 1, PCIE_BANDWIDTH)


def test_fabric_list_labels_the_illustrative_one():
    """InfiniBand NDR is 50 GB/s and marked illustrative; the vendor figures are not."""
    assert INFINIBAND_NDR_BANDWIDTH == 50 * GB
    illustrative = [k for k in FABRIC_BANDWIDTHS if "illustrative" in k]
    assert [FABRIC_BANDWIDTHS[k] for k in illustrative] == [INFINIBAND_NDR_BANDWIDTH]
    assert NVLINK_BANDWIDTH in FABRIC_BANDWIDTHS.values()
