"""ModelSpec, Accelerator and Fabric: derived sizes and field validation."""

import pytest

from lesson_lib import Accelerator, Fabric, ModelSpec
from lesson_lib.model.specimen import MODEL


def pure_attention(**overrides):
    fields = dict(
        name="dense",
        params=70e9,
        hidden_size=8192,
        num_layers=80,
        num_attention_layers=80,
        num_kv_heads=8,
        head_dim=128,
        max_context=131072,
    )
    fields.update(overrides)
    return ModelSpec(**fields)


def test_keyword_construction_and_defaults():
    """The documented keyword names construct a model; extras default sensibly."""
    m = pure_attention()
    assert m.dtype_bytes == 2
    assert m.state_bytes == 0
    assert m.super_blocks == 80
    assert m.allreduces_per_token == 160
    assert m.kv_bytes_per_token == 2 * 80 * 8 * 128 * 2


def test_kv_bytes_scales_with_context():
    """KV bytes are per-token bytes times tokens."""
    assert MODEL.kv_bytes(0) == 0
    assert MODEL.kv_bytes(1000) == 1000 * MODEL.kv_bytes_per_token


def test_state_is_recurrent_plus_conv():
    """48 layers x (48 x 128 x 128 fp32 + 10240 channels x 3 x bf16)."""
    assert MODEL.conv_channels == 10240
    assert MODEL.state_bytes == 48 * (48 * 128 * 128 * 4 + 10240 * 3 * 2)


def test_kv_bytes_rejects_context_over_maximum():
    """Context beyond max_context names the parameter and the range."""
    with pytest.raises(ValueError, match=r"context_tokens must be an integer from 0 to 262144"):
        MODEL.kv_bytes(MODEL.max_context + 1)
    with pytest.raises(TypeError, match="context_tokens"):
        MODEL.kv_bytes(1.5)


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("params", -1, ValueError),
        ("params", 0, ValueError),
        ("hidden_size", 0, ValueError),
        ("hidden_size", 5120.0, TypeError),
        ("num_layers", True, TypeError),
        ("num_attention_layers", 81, ValueError),
        ("num_kv_heads", 0, ValueError),
        ("dtype_bytes", 0, ValueError),
        ("num_super_blocks", 3, ValueError),
        ("ffn_size", -5, ValueError),
    ],
)
def test_bad_model_fields_name_the_field(field, value, error):
    """Each invalid field raises, naming itself."""
    with pytest.raises(error, match=field):
        pure_attention(**{field: value})


def test_hybrid_without_linear_fields_is_rejected():
    """Fewer attention layers than layers needs the linear-attention shape."""
    with pytest.raises(ValueError, match="linear_num_value_heads"):
        pure_attention(num_attention_layers=20)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(memory_bytes=0, hbm_bandwidth=1, peak_flops=1), "memory_bytes"),
        (dict(memory_bytes=1, hbm_bandwidth=-1, peak_flops=1), "hbm_bandwidth"),
        (dict(memory_bytes=1, hbm_bandwidth=1, peak_flops=0), "peak_flops"),
    ],
)
def test_accelerator_validation(kwargs, name):
    """Zero or negative capacities are rejected by name."""
    with pytest.raises(ValueError, match=name):
        Accelerator(name="x", **kwargs)


def test_fabric_validation():
    """Zero bandwidth or negative latency is rejected by name; hop latency defaults to 0."""
    assert Fabric("f", latency=1e-5, bandwidth=1e9).hop_latency == 0.0
    with pytest.raises(ValueError, match="bandwidth"):
        Fabric("f", latency=1e-5, bandwidth=0)
    with pytest.raises(ValueError, match="latency"):
        Fabric("f", latency=-1e-6, bandwidth=1e9)
    with pytest.raises(ValueError, match="hop_latency"):
        Fabric("f", latency=1e-6, bandwidth=1e9, hop_latency=-1.0)


@pytest.mark.parametrize(
    "missing", ["linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim"]
)
def test_hybrid_needs_all_three_linear_shapes(missing):
    """Each of the three DeltaNet shapes is needed; two of them are not enough."""
    shapes = dict(linear_num_value_heads=48, linear_key_head_dim=128, linear_value_head_dim=128)
    with pytest.raises(ValueError) as info:
        pure_attention(num_attention_layers=20, **{**shapes, missing: 0})
    assert str(info.value) == (
        "num_attention_layers (20) < num_layers (80) describes linear-attention layers: give "
        "linear_num_value_heads, linear_key_head_dim and linear_value_head_dim (>= 1), "
        "or set num_attention_layers = num_layers for a pure-attention model"
    )
    assert pure_attention(num_attention_layers=20, **shapes).num_linear_layers == 60


def moe(**overrides):
    """A Mixtral-shaped model: 8 experts of 176,160,768 parameters, top-2, 32 MoE layers."""
    fields = dict(
        num_experts=8,
        experts_per_token=2,
        num_moe_layers=32,
        expert_params=176_160_768.0,
    )
    fields.update(overrides)
    return pure_attention(params=46.7e9, num_layers=32, num_attention_layers=32, **fields)


def test_dense_models_keep_their_numbers_under_the_new_fields():
    """Defaults: no experts, no all-to-alls, active = total, weights at dtype_bytes."""
    m = pure_attention()
    assert (m.num_experts, m.num_moe_layers, m.alltoalls_per_token) == (0, 0, 0)
    assert m.active_params == m.params == 70e9
    assert m.weight_bytes == 140e9
    assert not m.is_moe and m.routed_expert_params == 0


def test_moe_active_params_leave_out_the_unvisited_experts():
    """46.7e9 - (8 - 2) x 32 x 176,160,768 = 46.7e9 - 33,822,867,456 = 12,877,132,544."""
    m = moe()
    assert m.is_moe
    assert m.active_params == 12_877_132_544
    assert m.routed_expert_params == 8 * 32 * 176_160_768
    assert m.alltoalls_per_token == 64


def test_narrow_weights_and_mla_cache():
    """FP8 weights halve the bytes; MLA caches (512 + 64) x 2 B per attention layer."""
    assert pure_attention(weight_dtype_bytes=1).weight_bytes == 70e9
    mla = pure_attention(kv_lora_rank=512, qk_rope_head_dim=64)
    assert mla.kv_bytes_per_token == 80 * 576 * 2


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"experts_per_token": 9}, "experts_per_token"),
        ({"experts_per_token": 0}, "experts_per_token"),
        ({"num_moe_layers": 33}, "num_moe_layers"),
        ({"expert_params": 0.0}, "expert_params"),
        ({"expert_params": 1e9}, "expert_params"),  # 8 x 32 x 1e9 > 46.7e9
        ({"num_experts": -1}, "num_experts"),
    ],
)
def test_bad_moe_fields_name_the_field(overrides, field):
    """Top-k beyond the experts, more MoE layers than layers, experts larger than the model."""
    with pytest.raises(ValueError, match=field):
        moe(**overrides)


@pytest.mark.parametrize("field", ["experts_per_token", "num_moe_layers", "expert_params"])
def test_moe_fields_need_experts(field):
    """A dense model (num_experts = 0) must leave the other MoE fields at 0."""
    with pytest.raises(ValueError, match=f"{field} must be 0 for a dense model"):
        pure_attention(**{field: 1})


def test_repr_shows_the_moe_and_mla_fields_only_when_set():
    """A dense model's repr names none of them; an MoE model's names its own; both evaluate back."""
    dense, mixture = pure_attention(), moe()
    assert "num_experts" not in repr(dense) and "kv_lora_rank" not in repr(dense)
    assert "num_experts=8" in repr(mixture) and "expert_params=176160768.0" in repr(mixture)
    assert "kv_lora_rank" not in repr(mixture)
    for m in (dense, mixture, MODEL):
        assert eval(repr(m), {"ModelSpec": ModelSpec}) == m
