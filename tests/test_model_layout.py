"""The divisibility rule for tensor and pipeline parallelism."""

import pytest

from lesson_lib import ModelSpec, check_layout
from lesson_lib.model.layout import (
    layer_kinds,
    layout_cautions,
    stage_layer_kinds,
    stage_layers,
    stage_models,
)
from lesson_lib.model.specimen import MODEL


@pytest.mark.parametrize(
    ("tp", "pp"), [(1, 1), (2, 1), (4, 1), (4, 2), (2, 16), (4, 4), (4, 3), (1, 64)]
)
def test_valid_layouts(tp, pp):
    """TP 1/2/4 divides every head group and the FFN; any PP up to the 64 layers is legal."""
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


def test_tp3_and_pp65_list_every_problem():
    """Each group that TP 3 does not divide is named, and so are 65 stages for 64 layers."""
    text = " | ".join(check_layout(MODEL, 3, 65))
    for needle in (
        "KV heads",
        "DeltaNet key heads",
        "FFN intermediate channels",
        "PP = 65 exceeds the 64 layers",
    ):
        assert needle in text
    assert "query heads" not in text  # 24 is divisible by 3
    assert "DeltaNet value heads" not in text  # 48 is divisible by 3


def test_model_without_optional_fields():
    """Fields left as None are not checked; PP 5 over 12 layers is legal but cautioned."""
    m = ModelSpec("m", 1e9, 1024, 12, 12, 8, 64, 4096)
    assert check_layout(m, 8, 12) == [] and check_layout(m, 8, 5) == []
    # 12 // 5 = 2 each, 2 left over for the 2nd- and 3rd-to-last stages: 2, 2, 3, 3, 2
    assert stage_layers(m, 5) == (2, 2, 3, 3, 2)  # m has 12 layers
    assert layout_cautions(m, 8, 5) == [
        "PP = 5 splits the 12 layers into stages of 2, 2, 3, 3 and 2: the largest stage "
        "sets the pace, 25 % slower than an even split"  # 3 x 5 / 12 = 1.25
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
        "TP = 32 does not divide the 24 query heads: an engine refuses the split",
        "TP = 32 does not divide the 16 DeltaNet key heads: an engine refuses the split",
        "TP = 32 does not divide the 48 DeltaNet value heads: an engine refuses the split",
    ]
    assert check_layout(MODEL, 3) == [
        "TP = 3 does not divide the 4 KV heads, nor they it: an engine refuses the split",
        "TP = 3 does not divide the 16 DeltaNet key heads: an engine refuses the split",
        "TP = 3 does not divide the 17408 FFN intermediate channels: an engine refuses the split",
    ]
    assert check_layout(MODEL, 4) == []


def test_default_is_no_pipeline():
    """pp defaults to 1: one stage of every layer, nothing to caution."""
    odd = ModelSpec("odd", 1e9, 1024, 3, 3, 8, 64, 4096)
    assert check_layout(odd, 1) == [] and layout_cautions(odd, 1) == []
    assert check_layout(odd, 1, 4) == ["PP = 4 exceeds the 3 layers: some stage would hold none"]


def test_stage_layers_as_vllm_splits_them():
    """vLLM's get_pp_indices: 64 // 3 = 21 each, the one left over to the middle stage.

    64 over 5: 12 each and 4 left over, one each to stages 4, 3, 2 and 1 counting
    back from the second-to-last: 13, 13, 13, 13, 12. Even splits stay even.
    """
    assert stage_layers(MODEL, 3) == (21, 22, 21)
    assert stage_layers(MODEL, 5) == (13, 13, 13, 13, 12)
    assert stage_layers(MODEL, 4) == (16, 16, 16, 16)
    assert stage_layers(MODEL, 1) == (64,)
    assert sum(stage_layers(ModelSpec("m61", 1e9, 1024, 61, 61, 8, 64, 4096), 7)) == 61
    with pytest.raises(ValueError, match="pp must be an integer from 1 to 64"):
        stage_layers(MODEL, 65)


def test_uneven_stages_are_cautioned_by_hand():
    """PP 3: stages of 21, 22 and 21 layers holding 5, 5 and 6 attention layers (layers 3, 7, ...,
    63: 3-19, 23-39, 43-63); which is slowest depends on the context, so no percentage."""
    assert layout_cautions(MODEL, 4, 3) == [
        "PP = 3 splits the 64 layers into stages of 21, 22 and 21, holding 5, 5 and 6 of the 16 "
        "full-attention layers: the slowest stage sets the pace (at long context, the one with "
        "the most KV cache)"
    ]
    assert layout_cautions(MODEL, 4, 2) == [] and layout_cautions(MODEL, 4, 4) == []
    assert len(layout_cautions(MODEL, 8, 3)) == 2  # the KV copies and the stages


def test_attention_layers_close_each_group_of_four():
    """The specimen's full-attention layers are 3, 7, ..., 63; PP 3 cuts at 21 and 43.

    Stage 0 (layers 0-20): attention at 3, 7, 11, 15, 19 = 5 of 21; stage 1 (21-42):
    23, 27, 31, 35, 39 = 5 of 22; stage 2 (43-63): 43, 47, 51, 55, 59, 63 = 6 of 21.
    """
    kinds = layer_kinds(MODEL)
    assert [i for i, k in enumerate(kinds) if k == "attention"] == list(range(3, 64, 4))
    assert stage_layer_kinds(MODEL, 3) == ((5, 16), (5, 17), (6, 15))
    pure = ModelSpec("pure", 1e9, 1024, 12, 12, 8, 64, 4096)
    assert set(layer_kinds(pure)) == {"attention"}


def test_caution_by_hand():
    """TP 8 over 4 KV heads: each head on 8 / 4 = 2 GPUs, KV memory spent twice."""
    assert layout_cautions(MODEL, 8) == [
        "TP = 8 exceeds the 4 KV heads: each head is stored on 2 GPUs, so each GPU's KV cache "
        "stops shrinking at TP = 4 (legal, but memory spent 2 times)"
    ]


def test_stage_models_keep_each_stages_own_layers_by_hand():
    """PP 3: stages of 21, 22, 21 layers with 5, 5, 6 attention layers. The last holds
    27e9 x 21 / 64 = 8,859,375,000 parameters, caches 2 (K, V) x 6 layers x 4 KV heads x 256 x 2 B
    = 24,576 B a token (6/16 of the whole 65,536), 15 DeltaNet states of 3,145,728 + 61,440 B
    = 48,107,520 B, and makes 2 x 21 = 42 all-reduces a token."""
    stages = stage_models(MODEL, 3)
    assert [(stage.num_layers, stage.num_attention_layers) for stage in stages] == [
        (21, 5),
        (22, 5),
        (21, 6),
    ]
    last = stages[-1]
    assert last.params == pytest.approx(8_859_375_000)
    assert last.kv_bytes_per_token == 24_576 and last.state_bytes == 48_107_520
    assert last.allreduces_per_token == 42
    assert sum(stage.params for stage in stages) == pytest.approx(MODEL.params)


def test_stage_models_share_out_sliding_window_layers_by_hand():
    """The specimen with 5 of its 16 attention layers sliding (window 1,024), PP 3: the stages hold
    5, 5, 6 attention layers, so 5, 10, 16 by the end of each; of the 5 sliding layers each stage
    takes floor(5 x 5 / 16) = 1, floor(5 x 10 / 16) - 1 = 3 - 1 = 2 and 5 - 3 = 2. The last
    stage's whole-context cache is then (6 - 2) x 2 x 4 x 256 x 2 B = 16,384 B a token, and at
    4,096 tokens it adds 2 x 4,096 B x 1,024 = 8,388,608 B for the windowed layers."""
    sliding = ModelSpec(**{**MODEL.__dict__, "num_sliding_layers": 5, "sliding_window": 1024})
    stages = stage_models(sliding, 3)
    assert [stage.num_sliding_layers for stage in stages] == [1, 2, 2]
    last = stages[-1]
    assert last.kv_bytes_per_token == 16_384
    assert last.kv_bytes(4096) == 16_384 * 4096 + 8_388_608
