"""ModelSpec.from_hf_config: dense, GQA, MLA, hybrid and MoE configs, and bad ones refused.

Every expected count is worked out by hand from the config's fields in the
test (the arithmetic is written out), never by calling the counting code.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson_lib.model.context_parallel import causal_attention_flops
from lesson_lib.model.hf_config import (
    _layer_kinds,
    _load_config,
    _moe_layers,
    _num_shared_experts,
    count_params,
)
from lesson_lib.model.memory import max_sequences, memory_budget
from lesson_lib.model.presets import config_path
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import decode_step

#: A small Llama-shaped config, the kind a student types in.
TINY_LLAMA = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 176,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 1024,
    "vocab_size": 100,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def test_a_tiny_llama_is_counted_matrix_by_matrix():
    """64 wide, head dim 64 / 4 = 16, 2 KV heads, 2 layers, 100 tokens.

    attention: q 64 x 64 = 4,096; k and v 64 x 32 = 2,048 each; o 4,096 -> 12,288
    FFN: 3 x 64 x 176 = 33,792; norms 2 x 64 = 128 -> 46,208 per layer, 92,416 for two
    embeddings 100 x 64 x 2 = 12,800; final norm 64 -> 105,280.
    """
    m = ModelSpec.from_hf_config(TINY_LLAMA)
    assert m.params == 105_280
    assert m.active_params == 105_280
    assert m.head_dim == 16 and m.num_kv_heads == 2 and m.num_query_heads == 4
    assert m.num_attention_layers == 2 and m.num_linear_layers == 0
    assert m.ffn_size == 176 and m.max_context == 1024 and m.vocab_size == 100
    assert m.kv_bytes_per_token == 2 * 2 * 2 * 16 * 2  # K and V, layers, heads, dim, bf16
    assert m.num_experts == 0 and m.alltoalls_per_token == 0
    assert m.name == "llama"


def test_tied_embeddings_count_the_matrix_once():
    """Tying drops the LM head: 105,280 - 100 x 64 = 98,880."""
    m = ModelSpec.from_hf_config({**TINY_LLAMA, "tie_word_embeddings": True})
    assert m.params == 98_880


def test_a_path_reads_the_same_config(tmp_path):
    """A path to a config.json gives the same model as the dict."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_LLAMA))
    assert ModelSpec.from_hf_config(path) == ModelSpec.from_hf_config(TINY_LLAMA)
    assert ModelSpec.from_hf_config(str(path)) == ModelSpec.from_hf_config(TINY_LLAMA)


def test_the_specimen_round_trips_from_its_config():
    """The shipped Qwen3.5-27B config, with the lesson's stated size, is the specimen exactly."""
    m = ModelSpec.from_hf_config(config_path("Qwen3.5-27B"), name=MODEL.name, params=27e9)
    assert m == MODEL


def test_the_specimen_config_counts_close_to_27_billion():
    """Counted from the config, by hand.

    Gated DeltaNet (48 layers): key dim 16 x 128 = 2,048, value dim 48 x 128 = 6,144;
    in-projections 5120 x (2 x 2,048 + 2 x 6,144) = 83,886,080 and 5120 x 96 = 491,520;
    conv 10,240 x 4 = 40,960; decay 2 x 48 = 96; norm 128; out 6,144 x 5120 = 31,457,280
    -> 115,876,064 per layer, 5,562,051,072 in all.
    Gated attention (16 layers): q with gate 5120 x 24 x 256 x 2 = 62,914,560; k, v
    5120 x 1,024 = 5,242,880 each; o 6,144 x 5120 = 31,457,280 -> 104,857,600, 1,677,721,600.
    FFN (64): 3 x 5120 x 17,408 = 267,386,880, 17,112,760,320. Embeddings 2 x 248,320 x 5120
    = 2,542,796,800. Norms (2 x 64 + 1) x 5120 = 660,480. Total 26,895,990,272.
    """
    assert count_params(config_path("Qwen3.5-27B")).total == 26_895_990_272
    assert abs(26_895_990_272 / 27e9 - 1) < 0.005


def test_the_hybrid_layout_is_read_from_layer_types_or_the_interval():
    """Every fourth layer is full attention, listed or implied by full_attention_interval 4."""
    text = _load_config(config_path("Qwen3.5-27B"))["text_config"]
    listed = _layer_kinds(text)
    implied = _layer_kinds({k: v for k, v in text.items() if k != "layer_types"})
    assert listed == implied
    assert [i for i, k in enumerate(listed) if k == "full_attention"] == list(range(3, 64, 4))


def test_deepseek_mla_caches_the_latent_and_the_rope_key():
    """61 layers x (512 + 64) x 2 B = 70,272 B per token; one latent, copied under TP."""
    m = ModelSpec.from_hf_config(config_path("DeepSeek-V3"))
    assert m.kv_bytes_per_token == 70_272
    assert m.kv_lora_rank == 512 and m.qk_rope_head_dim == 64
    assert m.num_kv_heads == 1 and m.head_dim == 128 + 64
    assert m.weight_dtype_bytes == 1  # FP8 weights: one byte each
    assert m.weight_bytes == m.params
    assert m.mtp_layers == 1


def test_deepseek_v3_by_hand():
    """DeepSeek-V3's 671B total and 37B active, from its config.

    MLA per layer: q_a 7168 x 1536 = 11,010,048, its norm 1,536, q_b 1536 x 128 x 192 =
    37,748,736; kv_a 7168 x 576 = 4,128,768, its norm 512, kv_b 512 x 128 x 256 =
    16,777,216; o 128 x 128 x 7168 = 117,440,512 -> 187,107,328; 61 layers: 11,413,547,008.
    Dense FFN (3 layers): 3 x 7168 x 18432 = 396,361,728 each -> 1,189,085,184.
    One expert: 3 x 7168 x 2048 = 44,040,192; routed 256 x 58 layers -> 653,908,770,816.
    Shared expert + router per MoE layer: 44,040,192 + 7168 x 256 = 45,875,200 -> 2,660,761,600.
    Embeddings 2 x 129,280 x 7168 = 1,853,358,080; norms (2 x 61 + 1) x 7168 = 881,664.
    Total: 11,413,547,008 + 1,189,085,184 + 653,908,770,816 + 2,660,761,600
    + 1,853,358,080 + 881,664 = 671,026,404,352.
    Active: total - (256 - 8) x 58 x 44,040,192 = 671,026,404,352 - 633,474,121,728
    = 37,552,282,624.
    """
    m = ModelSpec.from_hf_config(config_path("DeepSeek-V3"))
    assert m.params == 671_026_404_352
    assert m.active_params == 37_552_282_624
    assert (m.num_experts, m.experts_per_token, m.num_shared_experts) == (256, 8, 1)
    assert m.num_moe_layers == 58 and m.alltoalls_per_token == 116
    assert m.expert_params == 44_040_192


def test_mixtral_by_hand():
    """Mixtral-8x7B: 46.7B total, 12.9B active, every layer MoE.

    attention: q 4096 x 4096 = 16,777,216, k and v 4096 x 1024 = 4,194,304 each, o
    16,777,216 -> 41,943,040. One expert 3 x 4096 x 14336 = 176,160,768; 8 of them
    1,409,286,144; router 4096 x 8 = 32,768; norms 8,192 -> 1,451,270,144 per layer,
    46,440,644,608 for 32. Embeddings 2 x 32,000 x 4096 = 262,144,000; final norm 4,096
    -> 46,702,792,704. Active: minus 6 x 32 x 176,160,768 = 33,822,867,456 -> 12,879,925,248.
    """
    m = ModelSpec.from_hf_config(config_path("Mixtral-8x7B"))
    assert m.params == 46_702_792_704
    assert m.active_params == 12_879_925_248
    assert m.num_moe_layers == 32 and m.alltoalls_per_token == 64
    assert m.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2  # 131,072 B


def test_qwen3_moe_by_hand():
    """Qwen3-235B-A22B: head dim 128 given (64 x 128 = 8192, wider than the 4096 residual).

    attention: q 4096 x 8192 = 33,554,432, k and v 4096 x 512 = 2,097,152 each, o
    8192 x 4096 = 33,554,432 -> 71,303,168. One expert 3 x 4096 x 1536 = 18,874,368;
    128 -> 2,415,919,104; router 4096 x 128 = 524,288; norms 8,192 ->
    2,487,754,752 per layer, 233,848,946,688 for 94. Embeddings 2 x 151,936 x 4096 =
    1,244,659,712; final norm 4,096 -> 235,093,610,496. Active: minus 120 x 94 x
    18,874,368 = 212,902,871,040 -> 22,190,739,456.
    """
    m = ModelSpec.from_hf_config(config_path("Qwen3-235B-A22B"))
    assert m.params == 235_093_610_496
    assert m.active_params == 22_190_739_456
    assert m.num_moe_layers == 94 and m.alltoalls_per_token == 188
    assert m.kv_bytes_per_token == 2 * 94 * 4 * 128 * 2  # 192,512 B
    assert m.ffn_size == 1536  # every layer is MoE: TP splits each expert's 1,536


def test_dense_layers_of_an_moe_config():
    """first_k_dense_replace, moe_layer_freq, mlp_only_layers and decoder_sparse_step."""
    base = {"num_hidden_layers": 6, "n_routed_experts": 4}
    assert _moe_layers({**base, "first_k_dense_replace": 2}) == [False] * 2 + [True] * 4
    assert _moe_layers({**base, "moe_layer_freq": 2}) == [True, False] * 3
    assert _moe_layers({**base, "mlp_only_layers": [0, 5]}) == [False] + [True] * 4 + [False]
    assert _moe_layers({**base, "decoder_sparse_step": 3}) == [False, False, True] * 2
    assert _moe_layers({"num_hidden_layers": 3}) == [False] * 3


def test_shared_expert_of_qwen_moe_style_configs():
    """Qwen2-MoE style: one shared expert of its own size behind a one-output gate.

    Tiny Llama with 4 experts of 32 and a shared expert of 48, top-2, in both layers:
    per layer experts 4 x 3 x 64 x 32 = 24,576, router 64 x 4 = 256, shared 3 x 64 x 48
    + 64 = 9,280; attention 12,288, norms 128 -> 46,528 per layer, 93,056 for two;
    + embeddings 12,800 + final norm 64 = 105,920. Active: minus 2 x 2 x 6,144 = 24,576
    -> 81,344.
    """
    config = {
        **TINY_LLAMA,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 48,
    }
    m = ModelSpec.from_hf_config(config)
    assert m.params == 105_920
    assert m.active_params == 81_344
    assert m.num_shared_experts == 1 and m.expert_params == 6_144


@given(
    layers=st.integers(1, 64),
    dense=st.integers(0, 64),
    experts=st.integers(2, 64),
    data=st.data(),
)
def test_two_alltoalls_for_every_moe_layer(layers, dense, experts, data):
    """Dispatch and combine: alltoalls_per_token is twice the MoE layers, whatever the layout."""
    dense = min(dense, layers - 1)
    k = data.draw(st.integers(1, experts))
    config = {
        **TINY_LLAMA,
        "num_hidden_layers": layers,
        "n_routed_experts": experts,
        "num_experts_per_tok": k,
        "moe_intermediate_size": 16,
        "first_k_dense_replace": dense,
    }
    m = ModelSpec.from_hf_config(config)
    assert m.num_moe_layers == layers - dense
    assert m.alltoalls_per_token == 2 * (layers - dense)
    assert m.active_params <= m.params


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"hidden_size": None}, "hidden_size"),
        ({"hidden_size": "64"}, "hidden_size"),
        ({"num_hidden_layers": 0}, "num_hidden_layers"),
        ({"vocab_size": 1.5}, "vocab_size"),
        ({"max_position_embeddings": True}, "max_position_embeddings"),
        ({"torch_dtype": "int4"}, "torch_dtype"),
        ({"layer_types": ["full_attention"]}, "layer_types"),
        ({"layer_types": ["chunked_attention"] * 2}, "layer_types"),
        ({"layer_types": ["sliding_attention"] * 2}, "sliding_window"),
        ({"layer_types": ["sliding_attention"] * 2, "sliding_window": 0}, "sliding_window"),
        ({"sliding_window_pattern": 0}, "sliding_window_pattern"),
        ({"num_local_experts": 4, "num_experts_per_tok": 5}, "num_experts_per_tok"),
        ({"num_local_experts": 4}, "num_experts_per_tok"),
        ({"num_local_experts": 4, "num_experts": 8, "num_experts_per_tok": 2}, "num_experts"),
        ({"quantization_config": {"quant_method": "awq"}}, "quantization_config"),
        ({"text_config": 3}, "text_config"),
        ({"mlp_only_layers": [7], "num_experts": 4, "num_experts_per_tok": 1}, "mlp_only_layers"),
        ({"kv_lora_rank": 64}, "qk_rope_head_dim"),
        ({"full_attention_interval": 2}, "linear_num_key_heads"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(change, field):
    """A missing, malformed or unsupported field raises ValueError naming it."""
    config = {k: v for k, v in {**TINY_LLAMA, **change}.items() if v is not None}
    with pytest.raises(ValueError, match=field):
        ModelSpec.from_hf_config(config)


def test_a_file_that_is_not_a_json_object_is_refused(tmp_path):
    """Not JSON, or a JSON list, is refused with what was wrong; a number is not a config."""
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        ModelSpec.from_hf_config(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="holds a list"):
        ModelSpec.from_hf_config(bad)
    with pytest.raises(TypeError, match="config must be"):
        ModelSpec.from_hf_config(42)


@pytest.mark.parametrize(
    ("fields", "dtype_bytes"),
    [
        ({"dtype": "float32"}, 4),  # dtype, no torch_dtype
        ({"dtype": "float32", "torch_dtype": "bfloat16"}, 4),  # dtype first
        ({"dtype": None, "torch_dtype": "float32"}, 4),  # a null dtype leaves torch_dtype
        ({}, 2),  # neither: bf16's 2 bytes
    ],
)
def test_activations_take_dtype_then_torch_dtype_then_bf16(fields, dtype_bytes):
    """The element size of activations (and of weights when not quantized): the config's
    ``dtype`` when set, else its ``torch_dtype``, else 2 bytes."""
    config = {k: v for k, v in TINY_LLAMA.items() if k != "torch_dtype"}
    m = ModelSpec.from_hf_config({**config, **fields})
    assert m.dtype_bytes == dtype_bytes


@pytest.mark.parametrize(
    ("quantization", "got"), [({"quant_method": "awq"}, "'awq'"), ("int4", "'int4'")]
)
def test_an_unsupported_quantization_is_named_in_the_message(quantization, got):
    """Only FP8 is read; anything else is refused with the method it names, or the value."""
    with pytest.raises(ValueError) as info:
        ModelSpec.from_hf_config({**TINY_LLAMA, "quantization_config": quantization})
    assert str(info.value) == (
        "config field 'quantization_config' is supported only with quant_method 'fp8' "
        f"(one byte per weight), got {got}"
    )


def test_shared_experts_are_none_unless_counted_and_may_be_zero():
    """No ``n_shared_experts``: none; 0 is a valid count; 2 is 2; a sized Qwen shared
    expert is one."""
    assert _num_shared_experts({}) == 0
    assert _num_shared_experts({"n_shared_experts": 0}) == 0
    assert _num_shared_experts({"n_shared_experts": 2}) == 2
    assert _num_shared_experts({"shared_expert_intermediate_size": 48, "n_shared_experts": 2}) == 1


def test_without_kv_heads_every_head_has_its_own():
    """No ``num_key_value_heads``: multi-head attention, 4 KV heads. k and v grow to
    64 x 64 = 4,096 each: attention 4 x 4,096 = 16,384, + FFN 33,792 + norms 128 = 50,304
    per layer, 100,608 for two, + embeddings 12,800 + final norm 64 = 113,472."""
    config = {k: v for k, v in TINY_LLAMA.items() if k != "num_key_value_heads"}
    m = ModelSpec.from_hf_config(config)
    assert m.num_kv_heads == 4
    assert m.params == 113_472


#: Tiny Llama with MLA: a 16-wide latent, 8 rotary and 16 other query-key dims, values of 16.
TINY_MLA = {
    **TINY_LLAMA,
    "kv_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 16,
    "v_head_dim": 16,
}


@pytest.mark.parametrize("q_lora_rank", ["absent", None, 0])
def test_mla_without_a_query_latent_projects_the_query_in_full(q_lora_rank):
    """No query latent (absent, null or 0): q is 64 x 4 heads x (16 + 8) = 6,144; kv
    64 x (16 + 8) + 16 (its norm) + 16 x 4 x (16 + 16) = 3,600; o 4 x 16 x 64 = 4,096:
    attention 13,840, + FFN 33,792 + norms 128 = 47,760 per layer; 95,520 for two, + 12,800
    + 64 = 108,384."""
    config = dict(TINY_MLA) if q_lora_rank == "absent" else {**TINY_MLA, "q_lora_rank": q_lora_rank}
    assert ModelSpec.from_hf_config(config).params == 108_384


def test_mla_with_a_query_latent():
    """A 32-wide query latent: q is 64 x 32 + 32 (its norm) + 32 x 96 = 5,152 instead of
    6,144, so 108,384 - 2 x 992 = 106,400."""
    assert ModelSpec.from_hf_config({**TINY_MLA, "q_lora_rank": 32}).params == 106_400


def test_the_name_is_the_path_else_the_model_type_else_model():
    """``_name_or_path`` first, then ``model_type``, then the word "model"."""
    assert ModelSpec.from_hf_config({**TINY_LLAMA, "_name_or_path": "org/tiny"}).name == "org/tiny"
    assert ModelSpec.from_hf_config(TINY_LLAMA).name == "llama"
    no_type = {k: v for k, v in TINY_LLAMA.items() if k != "model_type"}
    assert ModelSpec.from_hf_config(no_type).name == "model"


@pytest.mark.parametrize(("dtype", "state_bytes"), [("absent", 4), ("bfloat16", 2)])
def test_the_recurrent_state_is_float32_unless_the_config_says(dtype, state_bytes):
    """The DeltaNet state's element: ``mamba_ssm_dtype`` (the specimen's float32 written
    out), 4 bytes when the config is silent, 2 for bfloat16."""
    config = _load_config(config_path("Qwen3.5-27B"))
    text = {k: v for k, v in config["text_config"].items() if k != "mamba_ssm_dtype"}
    if dtype != "absent":
        text["mamba_ssm_dtype"] = dtype
    m = ModelSpec.from_hf_config({**config, "text_config": text})
    assert m.state_dtype_bytes == state_bytes


@pytest.mark.parametrize(
    ("fields", "mtp"),
    [
        ({}, 0),
        ({"num_nextn_predict_layers": 0, "mtp_num_hidden_layers": 0}, 0),
        ({"num_nextn_predict_layers": 1}, 1),  # DeepSeek's name
        ({"mtp_num_hidden_layers": 2}, 2),  # Qwen's
    ],
)
def test_mtp_layers_may_be_absent_or_zero(fields, mtp):
    """Multi-token-prediction layers under either name; 0 is a count, not an error."""
    assert ModelSpec.from_hf_config({**TINY_LLAMA, **fields}).mtp_layers == mtp


def test_a_moe_config_with_dense_layers_splits_the_dense_ffn():
    """DeepSeek-V3 keeps its first 3 layers dense, 18,432 wide: TP cuts those, so the
    FFN size is theirs, not an expert's 2,048."""
    assert ModelSpec.from_hf_config(config_path("DeepSeek-V3")).ffn_size == 18_432


def test_a_dense_config_has_no_shared_experts_or_super_blocks():
    """``n_shared_experts`` means nothing without routed experts; an attention interval of 1
    makes every layer full attention, with no hybrid blocks."""
    assert ModelSpec.from_hf_config({**TINY_LLAMA, "n_shared_experts": 2}).num_shared_experts == 0
    m = ModelSpec.from_hf_config({**TINY_LLAMA, "full_attention_interval": 1})
    assert m.num_attention_layers == 2 and m.num_super_blocks is None


@pytest.mark.parametrize("experts", [0, 1])
def test_zero_or_one_expert_is_a_dense_ffn(experts):
    """An expert count of 0 or 1 is a dense model: no routed experts, no MoE layer."""
    config = {**TINY_LLAMA, "num_local_experts": experts, "num_experts_per_tok": 1}
    m = ModelSpec.from_hf_config(config)
    assert m.num_experts == 0 and m.num_moe_layers == 0


def test_layer_types_of_the_wrong_length_or_kind_are_named():
    """The message says how many kinds were given, or what was given instead of a list, and
    lists the unknown kinds sorted as text (a number among them too)."""
    with pytest.raises(ValueError) as info:
        ModelSpec.from_hf_config({**TINY_LLAMA, "layer_types": ["full_attention"]})
    assert str(info.value).endswith("must list one kind per layer (2), got 1")
    with pytest.raises(ValueError) as info:
        ModelSpec.from_hf_config({**TINY_LLAMA, "layer_types": "full_attention"})
    assert str(info.value).endswith("must list one kind per layer (2), got 'full_attention'")
    with pytest.raises(ValueError) as info:
        ModelSpec.from_hf_config({**TINY_LLAMA, "layer_types": ["chunked_attention", 3]})
    assert "does not model: [3, 'chunked_attention']" in str(info.value)


def test_mlp_only_layers_name_the_last_layer_index():
    """Six layers are 0 to 5: index 6 is refused, and the message says 5."""
    config = {**TINY_LLAMA, "num_hidden_layers": 6, "num_experts": 4, "num_experts_per_tok": 1}
    config["moe_intermediate_size"] = 32
    with pytest.raises(ValueError) as info:
        ModelSpec.from_hf_config({**config, "mlp_only_layers": [6]})
    assert "layer indices from 0 to 5, got [6]" in str(info.value)


def test_untied_unless_the_config_ties():
    """No ``tie_word_embeddings``: the LM head is its own matrix, 105,280 as for False."""
    config = {k: v for k, v in TINY_LLAMA.items() if k != "tie_word_embeddings"}
    assert ModelSpec.from_hf_config(config).params == 105_280


def test_an_all_moe_config_needs_no_dense_ffn_size():
    """Every layer MoE with ``moe_intermediate_size``: no ``intermediate_size`` is read, and
    the count is the shared-expert test's 105,920 without the shared expert's 2 x 9,280:
    87,360."""
    config = {k: v for k, v in TINY_LLAMA.items() if k != "intermediate_size"}
    config.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32)
    assert ModelSpec.from_hf_config(config).params == 87_360


#: Tiny Llama with four layers, sliding-window and full attention in turn, a window of 8 tokens.
TINY_SLIDING = {
    **TINY_LLAMA,
    "num_hidden_layers": 4,
    "layer_types": ["sliding_attention", "full_attention"] * 2,
    "sliding_window": 8,
}


def test_a_sliding_window_config_caches_the_window_in_its_sliding_layers():
    """One token in one layer: K and V x 2 KV heads x 16 dims x 2 bytes = 128 B.

    Per token, the 2 full layers: 2 x 128 = 256 B. At 5 tokens, under the window, all 4
    layers hold all 5: 4 x 5 x 128 = 2,560 B. At 100 tokens: full 2 x 100 x 128 = 25,600,
    sliding 2 x 8 x 128 = 2,048 -> 27,648 B. Parameters as tiny Llama's layers (a sliding
    layer has the same projections): 4 x 46,208 + 12,800 + 64 = 197,696.
    """
    m = ModelSpec.from_hf_config(TINY_SLIDING)
    assert m.num_attention_layers == 4 and m.num_sliding_layers == 2 and m.sliding_window == 8
    assert m.num_linear_layers == 0 and m.state_bytes == 0
    assert m.params == 197_696
    assert m.kv_bytes_per_token == 256
    assert m.kv_bytes(0) == 0
    assert m.kv_bytes(5) == 2_560
    assert m.kv_bytes(100) == 27_648


def test_the_fit_and_the_step_see_the_window_capped_layers():
    """The same 27,648 B per sequence of 100 tokens, in the memory and in the step.

    Weights 197,696 x 2 B = 395,392; a card of 395,392 + 10 x 27,648 + 100 = 672,172 bytes
    holds 10 sequences. One decoded token reads 3 x 27,648 = 82,944 B for 3 sequences: at
    1e6 B/s, 0.082944 s. Its attention: 4 x 4 heads x 16 = 256 FLOPs a pair, 216 cached
    tokens, 3 sequences -> 165,888 FLOPs, 0.165888 s at 1e6 FLOP/s. A prompt of 100:
    full layers 100 x 101 / 2 = 5,050 pairs each, sliding layers 8 x 9 / 2 + 92 x 8 = 772
    -> 2 x 5,050 + 2 x 772 = 11,644 pairs x 256 = 2,980,864 FLOPs.
    """
    m = ModelSpec.from_hf_config(TINY_SLIDING)
    card = Accelerator("card", 672_172, hbm_bandwidth=1e6, peak_flops=1e6)
    assert memory_budget(m, card, 1, 100, 3).kv_bytes == 82_944
    assert max_sequences(m, card, 1, 100) == 10
    step = decode_step(m, card, Fabric("wire", 0.0, 1e9), 1, batch=3, context=100)
    assert step.kv_read_s == pytest.approx(0.082944)
    assert step.attention_flops_s == pytest.approx(0.165888)
    assert causal_attention_flops(m, 100) == 2_980_864


#: openai/gpt-oss-20b's config.json on Hugging Face, the fields the lesson reads (the rope,
#: token-id and training fields left out). Cross-checked against transformers' GptOssConfig
#: (its default layer_types: sliding when (i + 1) % 2, so layer 0 slides) and OpenAI's
#: reference gpt_oss/torch/model.py (sliding_window 128 on even layers, 8 KV heads of 64).
GPT_OSS_20B = {
    "architectures": ["GptOssForCausalLM"],
    "model_type": "gpt_oss",
    "head_dim": 64,
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "layer_types": ["sliding_attention", "full_attention"] * 12,
    "max_position_embeddings": 131072,
    "num_attention_heads": 64,
    "num_experts_per_tok": 4,
    "num_hidden_layers": 24,
    "num_key_value_heads": 8,
    "num_local_experts": 32,
    "quantization_config": {
        "modules_to_not_convert": [
            "model.layers.*.self_attn",
            "model.layers.*.mlp.router",
            "model.embed_tokens",
            "lm_head",
        ],
        "quant_method": "mxfp4",
    },
    "sliding_window": 128,
    "tie_word_embeddings": False,
    "vocab_size": 201088,
}


def test_gpt_oss_mxfp4_experts_are_refused_by_name():
    """Its published weights store the experts in MXFP4, which the lesson does not model."""
    with pytest.raises(ValueError, match=r"quantization_config.*got 'mxfp4'"):
        ModelSpec.from_hf_config(GPT_OSS_20B)


def test_gpt_oss_20b_by_hand():
    """gpt-oss-20b in bf16 (its quantization_config dropped), 12 sliding layers of 128 tokens.

    One token in one layer: 2 x 8 KV heads x 64 x 2 B = 2,048 B. Per token, the 12 full
    layers: 24,576 B. At the full 131,072: 24,576 x 131,072 = 3,221,225,472, + 12 x 128 x
    2,048 = 3,145,728 -> 3,224,371,200 B (an all-full model: 24 x 2,048 x 131,072 =
    6,442,450,944). At 100 tokens: 24 x 100 x 2,048 = 4,915,200.
    Parameters: attention q 2880 x 4096 = 11,796,480, k and v 2880 x 512 = 1,474,560 each,
    o 4096 x 2880 = 11,796,480 -> 26,542,080, x 24 = 637,009,920; one expert 3 x 2880 x 2880
    = 24,883,200, x 32 x 24 = 19,110,297,600; router 2880 x 32 x 24 = 2,211,840; embeddings
    2 x 201,088 x 2880 = 1,158,266,880; norms 49 x 2880 = 141,120 -> 20,907,927,360 (the
    model card's 20.91 billion, which also counts biases and attention sinks).
    """
    config = {k: v for k, v in GPT_OSS_20B.items() if k != "quantization_config"}
    m = ModelSpec.from_hf_config(config)
    assert (m.num_attention_layers, m.num_sliding_layers, m.sliding_window) == (24, 12, 128)
    assert m.kv_bytes_per_token == 24_576
    assert m.kv_bytes(131_072) == 3_224_371_200
    assert m.kv_bytes(100) == 4_915_200
    assert m.params == 20_907_927_360
    assert (m.num_experts, m.experts_per_token, m.num_moe_layers) == (32, 4, 24)


def test_gpt_oss_120b_by_hand():
    """gpt-oss-120b: the same layers, 36 of them (18 sliding) and 128 experts.

    Per token 18 x 2,048 = 36,864 B; at 131,072 tokens 36,864 x 131,072 = 4,831,838,208
    + 18 x 128 x 2,048 = 4,718,592 -> 4,836,556,800 B. Parameters: attention 26,542,080 x 36
    = 955,514,880; experts 24,883,200 x 128 x 36 = 114,661,785,600; router 2880 x 128 x 36 =
    13,271,040; embeddings 1,158,266,880; norms 73 x 2880 = 210,240 -> 116,789,048,640.
    """
    config = {k: v for k, v in GPT_OSS_20B.items() if k != "quantization_config"}
    config.update(
        num_hidden_layers=36,
        num_local_experts=128,
        layer_types=["sliding_attention", "full_attention"] * 18,
    )
    m = ModelSpec.from_hf_config(config)
    assert m.kv_bytes_per_token == 36_864
    assert m.kv_bytes(131_072) == 4_836_556_800
    assert m.params == 116_789_048_640


def test_gemma3_style_pattern_makes_every_sixth_layer_full():
    """No layer_types, ``sliding_window_pattern`` 6 (as Gemma 3's configs on the Hub, read as
    transformers reads it): of 12 layers, 5 and 11 are full attention, the other 10 slide."""
    config = {**TINY_LLAMA, "num_hidden_layers": 12, "sliding_window_pattern": 6}
    kinds = _layer_kinds(config)
    assert [i for i, k in enumerate(kinds) if k == "full_attention"] == [5, 11]
    assert kinds.count("sliding_attention") == 10
    m = ModelSpec.from_hf_config({**config, "sliding_window": 512})
    assert (m.num_attention_layers, m.num_sliding_layers) == (12, 10)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"sliding_window": 0}, "config field 'sliding_window' must be an integer >= 1, got 0"),
        ({"sliding_window": -128}, "config field 'sliding_window' must be an integer >= 1, got"),
        ({"sliding_window": None}, "config field 'sliding_window' is missing"),
        ({"layer_types": ["sliding_attention"] * 3}, "one kind per layer (4), got 3"),
        ({"layer_types": ["sliding", "full_attention"] * 2}, "does not model: ['sliding']"),
    ],
)
def test_bad_sliding_window_fields_name_the_key_and_the_range(fields, message):
    """A window below 1 or missing, a layer list of the wrong length or an unknown kind."""
    with pytest.raises(ValueError) as info:
        ModelSpec.from_hf_config({**TINY_SLIDING, **fields})
    assert message in str(info.value)


def test_a_model_spec_checks_its_sliding_window_fields():
    """More sliding layers than attention layers, or sliding layers without a window."""
    m = ModelSpec.from_hf_config(TINY_SLIDING)
    with pytest.raises(
        ValueError, match="num_sliding_layers must be an integer from 0 to 4, got 5"
    ):
        ModelSpec(**{**vars(m), "num_sliding_layers": 5})
    with pytest.raises(ValueError, match="sliding_window must be an integer >= 1, got 0"):
        ModelSpec(**{**vars(m), "sliding_window": 0})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # 10**9 layers once built a list per layer (3 million took 31 s): refused at once
        ({"num_hidden_layers": 10**9}, "'num_hidden_layers' must be an integer from 1 to 10,000"),
        ({"num_attention_heads": 8192}, "'num_attention_heads' must be an integer from 1 to 4,096"),
        (
            {"num_key_value_heads": 10**6},
            "'num_key_value_heads' must be an integer from 1 to 4,096",
        ),
        ({"hidden_size": 2**30 + 1}, "'hidden_size' must be an integer from 1 to 1,073,741,824"),
        # JSON allows 400-digit integers: once an OverflowError naming nothing
        ({"vocab_size": 10**400}, "'vocab_size' must be an integer from 1 to 1,073,741,824"),
        ({"intermediate_size": -(10**400)}, "'intermediate_size' must be an integer >= 1"),
        # 128 query heads on 64 dimensions left head_dim 0, a field the config never set
        (
            {"num_attention_heads": 128, "num_key_value_heads": 128},
            "config fields 'num_attention_heads' (128) and 'hidden_size' (64) conflict",
        ),
        # grouped-query attention shares each KV head among 4 / 3 query heads: impossible
        (
            {"num_key_value_heads": 3},
            "config fields 'num_key_value_heads' (3) and 'num_attention_heads' (4) conflict",
        ),
        # a list or a dict where a name belongs once raised "unhashable type"
        ({"torch_dtype": ["bfloat16"]}, "config field 'torch_dtype' must be one of .*got <list>"),
        (
            {"layer_types": [{"kind": "full"}, "full_attention"]},
            "config field 'layer_types' holds kinds the lesson does not model: [<dict>]",
        ),
    ],
)
def test_absurd_and_conflicting_fields_are_refused_naming_them(change, message):
    """Sizes beyond any published model, fields that contradict each other and values of the
    wrong kind: a ValueError naming the field(s) and the allowed range, never a traceback."""
    with pytest.raises(ValueError, match=re.escape(message).replace(r"\.\*", ".*")):
        ModelSpec.from_hf_config({**TINY_LLAMA, **change})


def test_the_caps_leave_room_for_the_largest_published_models():
    """10,000 layers, 4,096 heads and a context of 2**30 tokens are still read."""
    config = {**TINY_LLAMA, "num_hidden_layers": 10_000, "max_position_embeddings": 2**30}
    assert ModelSpec.from_hf_config(config).num_layers == 10_000
    wide = {**TINY_LLAMA, "hidden_size": 4096, "num_attention_heads": 4096}
    assert ModelSpec.from_hf_config({**wide, "num_key_value_heads": 4096}).head_dim == 1


def test_a_config_path_must_be_a_small_regular_file(tmp_path):
    """A link to /dev/zero (endless) and a FIFO (blocks until written) are refused before any
    byte is read; a file over the 1 MiB cap is refused after reading one byte more than it."""
    endless = tmp_path / "zero.json"
    endless.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"zero\.json' is a character device, not a regular file"):
        ModelSpec.from_hf_config(endless)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"fifo\.json' is a FIFO \(named pipe\), not a regular"):
        ModelSpec.from_hf_config(str(fifo))
    big = tmp_path / "big.json"
    big.write_text(json.dumps(TINY_LLAMA) + " " * 2**20)
    with pytest.raises(ValueError, match=r"big\.json' is larger than 1,048,576 bytes"):
        ModelSpec.from_hf_config(big)
    with pytest.raises(ValueError, match=r"config .*missing\.json' does not exist"):
        ModelSpec.from_hf_config(tmp_path / "missing.json")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(ValueError, match=r"deep\.json is not JSON \(maximum recursion depth"):
        ModelSpec.from_hf_config(deep)


def test_a_preset_name_must_be_text():
    """A list given as the preset's name (or path) once raised "unhashable type"."""
    with pytest.raises(TypeError, match="name must be a preset's name"):
        config_path(["Qwen3.5-27B"])
    with pytest.raises(TypeError, match="config must be a dict or the path"):
        ModelSpec.from_hf_config(["config.json"])
