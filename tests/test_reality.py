"""Published TP 2 -> 4 latencies beside the model's prediction."""

from numpy.testing import assert_allclose

from lesson_lib.reality import (
    LLAMA2_13B,
    PUBLISHED_SCALING,
    REALITY_HEADER,
    reality_numbers,
    reality_rows,
)


def test_measured_speedups_from_the_page():
    """69.7 / 61.4 = 1.14x for Llama-2-13B on H100 (NeMo docs, batch 1)."""
    assert_allclose(PUBLISHED_SCALING[0].measured_speedup, 69.7 / 61.4)
    assert reality_numbers()["reality_13b_measured"] == "1.14x"


def test_model_predicts_more_than_measured():
    """The model's speed-up exceeds every measured one: the gap the chapter discusses."""
    for r in PUBLISHED_SCALING:
        assert r.predicted_speedup > r.measured_speedup + 0.3


def test_prediction_floor_by_hand():
    """At TP 4, 20 tokens stream 13e9 x 2 B / 4 from HBM at least: 20 x 1.94 ms."""
    r = PUBLISHED_SCALING[0]
    assert r.model is LLAMA2_13B
    floor = 20 * 13e9 * 2 / 4 / 3.35e12
    assert floor < r.predicted_s(4) < floor + 0.02


def test_rows_shape():
    """One row per record, five cells each."""
    rows = reality_rows()
    assert len(rows) == len(PUBLISHED_SCALING)
    assert all(len(row) == len(REALITY_HEADER) for row in rows)
    assert rows[0][0] == "Llama-2-13B on H100"


def test_streaming_floor_of_the_13b_row_by_hand():
    """20 tokens x 26 GB of bf16 weights / (2 GPUs x 3.35 TB/s) = 77.6 ms, above the measured 69.7 ms."""
    from lesson_lib.reality import reality_numbers

    numbers = reality_numbers()
    assert (
        numbers["reality_13b_stream_tp2"]
        == f"{20 * 26e9 / (2 * 3.35e12) * 1e3:.1f} ms"
        == "77.6 ms"
    )
    assert numbers["reality_13b_tp2"] == "69.7 ms"
