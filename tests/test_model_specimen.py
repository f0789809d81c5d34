"""The specimen and its assumptions table."""

import pytest

from lesson_lib.model.specimen import ASSUMPTIONS, FAST, GPU, MODEL, SLOW


def test_every_assumption_has_value_unit_and_source():
    """No row without a source or a shown value; names are unique."""
    names = [a.name for a in ASSUMPTIONS]
    assert len(names) == len(set(names))
    for a in ASSUMPTIONS:
        assert a.shown and a.unit and a.source
        assert a.value > 0


def test_latencies_are_labelled_as_assumptions():
    """The 10 and 50 us figures are the lesson's assumptions, not vendor figures."""
    rows = {a.name: a for a in ASSUMPTIONS}
    for fabric, name in ((FAST, "fast"), (SLOW, "slow")):
        row = rows[f"{name} fabric: one small all-reduce"]
        assert row.value == fabric.latency
        assert row.source.startswith("assumption")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("parameters", MODEL.params),
        ("hidden size", MODEL.hidden_size),
        ("accelerator memory", GPU.memory_bytes),
        ("HBM bandwidth", GPU.hbm_bandwidth),
    ],
)
def test_table_matches_the_objects(name, value):
    """The table is built from the same objects the model uses."""
    assert {a.name: a.value for a in ASSUMPTIONS}[name] == value


_SCALE = {
    "billion": 1e9,
    "B": 1.0,
    "GB": 1e9,
    "GiB": 2.0**30,
    "TB/s": 1e12,
    "GB/s": 1e9,
    "TFLOP/s": 1e12,
    "us": 1e-6,
    "ms": 1e-3,
    "tokens": 1.0,
    "tokens/s": 1.0,
    "USD": 1.0,
    "W": 1.0,
    "": 1.0,
}


def read_shown(shown: str) -> float:
    """The number a reader takes from a printed value, parsed independently of lesson_lib.

    ``"27 billion"`` -> 27e9, ``"3.35 TB/s"`` -> 3.35e12, ``"4 x 256"`` -> 1024,
    ``"64 = 16 super-blocks x 4"`` -> 64 (the left side).
    """
    import re

    text = shown.split("=")[0].strip()
    product = re.fullmatch(r"([\d,.]+) x ([\d,.]+)", text)
    if product:
        return float(product[1].replace(",", "")) * float(product[2].replace(",", ""))
    # A number, its unit, then optional words (``"79.1 GiB visible to CUDA ..."``).
    m = re.match(r"([\d,.]+)\s*([A-Za-z/]*)(?:\s|$)", text)
    assert m, f"cannot read {shown!r}"
    return float(m[1].replace(",", "")) * _SCALE[m[2]]


def test_printed_assumptions_say_what_the_values_are():
    """Each assumption as the assumptions page prints it reads back as its value (a reader's
    parse, not lesson_lib's formatter), so a typo like '72 billion' for 27e9 fails."""
    from lesson_lib.model.specimen import ASSUMPTIONS

    wrong = []
    for a in ASSUMPTIONS:
        if a.name.startswith("Gated DeltaNet heads"):
            # three numbers in one cell; the public config's values, by hand
            assert a.shown == "16 / 48, 128" and a.value == 48
            continue
        if abs(read_shown(a.shown) - a.value) > 1e-9 * abs(a.value):
            wrong.append(f"{a.name}: shows {a.shown!r} for {a.value!r}")
    assert wrong == []


def test_seed_numbers_by_hand():
    """The lesson's stated specimen: 27 billion bf16 parameters are 54 GB of weights."""
    from lesson_lib.model.specimen import ASSUMPTIONS, MODEL

    shown = {a.name: a.shown for a in ASSUMPTIONS}
    assert shown["parameters"] == "27 billion"
    assert MODEL.params == 27e9 and MODEL.params * 2 == 54e9
    assert read_shown("72 billion") != MODEL.params
