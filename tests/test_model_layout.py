"""The divisibility rule for tensor and pipeline parallelism."""

import pytest

from lesson_lib import ModelSpec, check_layout
from lesson_lib.model.layout import layout_cautions
from lesson_lib.model.specimen import MODEL


@pytest.mark.parametrize(("tp", "pp"), [(1, 1), (2, 1), (4, 1), (4, 2), (2, 16), (4, 4)])
def test_valid_layouts(tp, pp):
    """TP 1/2/4 divides every head group and the FFN; PP divides 16 super-blocks."""
    assert check_layout(MODEL, tp, pp) == []


def test_tp8_replicates_kv_heads():
    """TP 8 is legal (8 is a multiple of the 4 KV heads: each head is copied) but cautioned."""
    assert check_layout(MODEL, 8) == []
    (caution,) = layout_cautions(MODEL, 8)
    assert "4 KV heads" in caution and "2 GPUs" in caution
    assert layout_cautions(MODEL, 4) == [] and layout_cautions(MODEL, 2) == []


def test_kv_heads_must_divide_or_be_divided():
    """TP 6 neither divides 4 KV heads nor is divided by them: invalid, as vLLM refuses it."""
    assert any("4 KV heads" in p for p in check_layout(MODEL, 6))
    assert not any("KV heads" in p for p in check_layout(MODEL, 16))


def test_tp3_and_pp3_list_every_problem():
    """Each group that TP 3 does not divide is named, and so are the super-blocks."""
    text = " | ".join(check_layout(MODEL, 3, 3))
    for needle in (
        "KV heads",
        "DeltaNet key heads",
        "FFN intermediate channels",
        "16 super-blocks",
    ):
        assert needle in text
    assert "query heads" not in text  # 24 is divisible by 3
    assert "DeltaNet value heads" not in text  # 48 is divisible by 3


def test_model_without_optional_fields():
    """Fields left as None are not checked; layers stand in for super-blocks."""
    m = ModelSpec("m", 1e9, 1024, 12, 12, 8, 64, 4096)
    assert check_layout(m, 8, 12) == []
    assert check_layout(m, 8, 5) == [
        "PP = 5 does not divide the 12 super-blocks: stages would be unequal"
    ]


def test_bad_degrees():
    """Degrees must be positive integers."""
    with pytest.raises(ValueError, match="tp must be"):
        check_layout(MODEL, 0)
    with pytest.raises(TypeError, match="pp must be"):
        check_layout(MODEL, 2, 1.0)


def test_messages_name_each_group_by_hand():
    """TP = 32 on the specimen (4 KV, 24 query, 16/48 DeltaNet heads): the exact messages,
    written out by hand; pp defaults to 1, which always divides."""
    from lesson_lib import check_layout
    from lesson_lib.model.specimen import MODEL

    # 32 is a multiple of the 4 KV heads: copied, legal (a caution, not a problem).
    assert check_layout(MODEL, 32) == [
        "TP = 32 does not divide the 24 query heads: they would be split unevenly",
        "TP = 32 does not divide the 16 DeltaNet key heads: they would be split unevenly",
        "TP = 32 does not divide the 48 DeltaNet value heads: they would be split unevenly",
    ]
    assert check_layout(MODEL, 3) == [
        "TP = 3 does not divide the 4 KV heads, nor they it: KV heads would be split unevenly",
        "TP = 3 does not divide the 16 DeltaNet key heads: they would be split unevenly",
        "TP = 3 does not divide the 17408 FFN intermediate channels: they would be split unevenly",
    ]
    assert check_layout(MODEL, 4) == []


def test_default_is_no_pipeline():
    """pp defaults to 1, which divides any number of super-blocks, three included."""
    odd = ModelSpec("odd", 1e9, 1024, 3, 3, 8, 64, 4096)
    assert check_layout(odd, 1) == []
    assert check_layout(odd, 1, 2) == [
        "PP = 2 does not divide the 3 super-blocks: stages would be unequal"
    ]


def test_caution_by_hand():
    """TP 8 over 4 KV heads: each head on 8 / 4 = 2 GPUs, KV memory spent twice."""
    assert layout_cautions(MODEL, 8) == [
        "TP = 8 exceeds the 4 KV heads: each head is stored on 2 GPUs, so each GPU's KV cache "
        "stops shrinking at TP = 4 (legal, but memory spent 2 times)"
    ]
