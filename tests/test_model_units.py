"""Units and human formatting: decimal vs binary said out loud."""

import math

import pytest

from lesson_lib.model.units import (
    GB,
    MS,
    TB,
    US,
    GiB,
    KiB,
    MiB,
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)


def test_unit_constants():
    """Decimal units are powers of ten, binary units powers of two."""
    assert (GB, TB) == (1e9, 1e12)
    assert (KiB, MiB, GiB) == (1024.0, 1024.0**2, 1024.0**3)
    assert (US, MS) == (1e-6, 1e-3)


def test_format_bytes_says_which_system():
    """54e9 bytes is 54 GB but 50.29 GiB."""
    assert format_bytes(54e9) == "54 GB"
    assert format_bytes(54e9, system="binary") == "50.29 GiB"
    assert format_bytes(1.875 * MiB, "MiB", decimals=3) == "1.875 MiB"
    assert format_bytes(10 * KiB, "KiB") == "10 KiB"
    assert format_bytes(0) == "0 B"


def test_format_bytes_auto_picks_largest_unit_above_one():
    """Auto units keep the number >= 1."""
    assert format_bytes(4.5e6) == "4.5 MB"
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 * GiB, system="binary") == "3 GiB"


def test_format_rate_and_seconds_and_ratio():
    """Rates append /s; times pick ms/us; ratios end in x."""
    assert format_rate(62.5 * MiB, "MiB") == "62.5 MiB/s"
    assert format_rate(450e9) == "450 GB/s"
    assert format_seconds(1.28e-3) == "1.28 ms"
    assert format_seconds(10e-6) == "10 us"
    assert format_seconds(6.4e-3, "ms") == "6.4 ms"
    assert format_seconds(2.5) == "2.5 s"
    assert format_ratio(1.7589) == "1.76x"
    assert format_count(262144) == "262,144"


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: format_bytes(-1), "nbytes"),
        (lambda: format_bytes(math.nan), "nbytes"),
        (lambda: format_bytes(1, "GB", decimals=-1), "decimals"),
        (lambda: format_rate(-5), "bytes_per_s"),
        (lambda: format_seconds(math.inf), "seconds"),
        (lambda: format_ratio(-1), "ratio"),
    ],
)
def test_bad_values_name_the_parameter(call, name):
    """Negative, NaN or infinite inputs raise ValueError naming the parameter."""
    with pytest.raises(ValueError, match=name):
        call()


def test_bad_units_and_types():
    """Unknown units list the allowed ones; strings are a TypeError."""
    with pytest.raises(ValueError, match="unit must be one of"):
        format_bytes(1, "GIB")
    with pytest.raises(ValueError, match="unit must be one of"):
        format_seconds(1, "min")
    with pytest.raises(ValueError, match="system"):
        format_bytes(1, system="metric")
    with pytest.raises(TypeError, match="nbytes"):
        format_bytes("54 GB")


def test_unit_tables_are_the_constants():
    """BYTE_UNITS and TIME_UNITS (used by the self-check) hold the same sizes as the constants."""
    from lesson_lib.model.units import BYTE_UNITS, TIME_UNITS, TiB

    assert (
        BYTE_UNITS["GiB"] == GiB and BYTE_UNITS["GB"] == GB and BYTE_UNITS["TiB"] == TiB == 2.0**40
    )
    assert TIME_UNITS["us"] == US and TIME_UNITS["ms"] == MS
    assert format_bytes(3 * TiB, system="binary") == "3 TiB"


def test_auto_unit_takes_a_unit_the_number_reaches_exactly():
    """Exactly one of a unit is written in it: 1e9 bytes is "1 GB", not "1,000 MB"."""
    assert format_bytes(1e9) == "1 GB"
    assert format_bytes(GiB, system="binary") == "1 GiB"
    assert format_seconds(1e-3) == "1 ms"
    assert format_rate(1e12) == "1 TB/s"


def test_format_rate_passes_the_unit_system_on():
    """62.5 x 2**20 bytes/s in the binary system is 62.5 MiB/s (65.54 MB/s in decimal)."""
    assert format_rate(62.5 * MiB, system="binary") == "62.5 MiB/s"
    assert format_rate(62.5 * MiB) == "65.54 MB/s"  # 65,536,000 bytes/s


def test_unknown_unit_lists_every_unit():
    """The message lists the known units, comma-separated, and repeats the bad one."""
    with pytest.raises(ValueError) as info:
        format_bytes(1, "GIB")
    assert str(info.value) == "unit must be one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, got 'GIB'"
    with pytest.raises(ValueError) as info:
        format_seconds(1, "min")
    assert str(info.value) == "unit must be one of s, ms, us, ns, got 'min'"


def test_trailing_zeros_go_but_not_the_integer_part():
    """Zeros after the point are dropped (and the point with them); zeros before it stay."""
    assert format_count(100.5, decimals=2) == "100.5"  # "100.50"
    assert format_count(10.0, decimals=2) == "10"  # "10.00"
    assert format_count(1000, decimals=2) == "1,000"  # "1,000.00"
    assert format_count(1000) == "1,000"  # no point, nothing stripped
    assert format_ratio(2.0) == "2x"


def test_counts_may_be_negative_and_never_print_minus_zero():
    """A negative count keeps its sign; one that rounds to zero prints "0", not "-0"."""
    assert format_count(-1234) == "-1,234"
    assert format_count(-1234.5, decimals=1) == "-1,234.5"
    assert format_count(-0.4) == "0"  # rounds to "-0"
    assert format_count(-0.001, decimals=2) == "0"  # "-0.00"
