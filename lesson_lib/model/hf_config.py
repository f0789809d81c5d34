"""Any model from its Hugging Face ``config.json``: the fields the lesson needs, counted.

The parameter count is worked out from the shape, matrix by matrix: embedding and (unless tied) LM
head; every sequence mixer's projections (grouped-query attention, DeepSeek's multi-head latent
attention or Gated DeltaNet); every gated FFN, dense or MoE (routed and shared experts, router); the
RMSNorm vectors. Left out, each below a thousandth of any preset's count: biases, per-head query/key
norms, routing bias terms. Not counted: a multimodal config's vision tower (only ``text_config`` is
read) and MTP layers (``ModelSpec.mtp_layers``).
"""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lesson_lib.model._safe_io import printable, read_file

#: Bytes per element of the dtype names configs use.
DTYPE_BYTES: dict[str, int] = dict(
    float32=4, float=4, bfloat16=2, float16=2, half=2, float8_e4m3fn=1, float8=1
)
#: The layer kinds of ``layer_types`` the lesson models.
LAYER_KINDS: tuple[str, ...] = ("full_attention", "sliding_attention", "linear_attention")
#: The names configs give the number of routed experts.
EXPERT_COUNT_KEYS: tuple[str, ...] = ("num_local_experts", "num_experts", "n_routed_experts")
#: Most layers (and MTP layers) read, as published models have a few hundred and lists are per layer.
MAX_LAYERS = 10_000
#: Most heads of one kind read, as published models have at most 128.
MAX_HEADS = 4096
#: Largest value of any other whole-number field, far above the longest published context (10
#: million tokens) and small enough that every product of fields stays a finite float.
MAX_SIZE = 2**30
#: Largest config file read in bytes, as published ones are a few kilobytes.
MAX_CONFIG_BYTES = 2**20
_LAYER_KEYS = "num_hidden_layers num_nextn_predict_layers mtp_num_hidden_layers"
_HEAD_KEYS = "num_attention_heads num_key_value_heads linear_num_key_heads linear_num_value_heads"
_CAPS = dict.fromkeys(_LAYER_KEYS.split(), MAX_LAYERS)
_CAPS.update(dict.fromkeys(_HEAD_KEYS.split(), MAX_HEADS))


@dataclass(frozen=True)
class ParamCount:
    """Where a config's parameters are, by kind."""

    #: Embedding and LM-head matrices.
    embeddings: float
    #: Attention and linear-attention layers, with their norms.
    mixers: float
    #: FFNs of the dense layers.
    dense_ffn: float
    #: Every routed expert of every MoE layer.
    routed_experts: float
    #: Routers and shared experts of the MoE layers.
    shared: float
    #: The two RMSNorm vectors of every layer and the final one.
    norms: float
    #: One routed expert of one layer (0 for a dense model).
    per_expert: float

    @property
    def total(self) -> float:
        """Every counted parameter."""
        kinds = (self.embeddings, self.mixers, self.dense_ffn, self.routed_experts, self.shared)
        return sum(kinds) + self.norms


def _load_config(config: object) -> dict[str, Any]:
    """The config as a dict: a copy of a mapping, or the JSON object in the file it names."""
    if isinstance(config, Mapping):
        return dict(config)
    if not isinstance(config, str | os.PathLike):
        raise TypeError(
            f"config must be a dict or the path of a config.json, got {type(config).__name__}"
        )
    text = read_file(config, "config", ValueError, MAX_CONFIG_BYTES).decode(errors="replace")
    try:
        data = json.loads(text)
    except (RecursionError, ValueError) as error:  # too deep, or an integer of 5,000 digits
        why = printable(str(error), 100)
        raise ValueError(f"config must be a JSON object; {config} is not JSON ({why})") from None
    if not isinstance(data, dict):
        raise ValueError(f"config must be a JSON object; {config} holds a {type(data).__name__}")
    return data


def _text_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``text_config`` over what only the outer config sets (``tie_word_embeddings``), or all."""
    inner = config.get("text_config")
    if inner is None:
        return dict(config)
    if not isinstance(inner, Mapping):
        raise ValueError(f"config field 'text_config' must be an object, got {_shown(inner)}")
    outer = {k: v for k, v in config.items() if k not in ("text_config", "vision_config")}
    return {**outer, **inner}


def _shown(value: object) -> str:
    """A value for a message: text quoted, a number (cut short), else only its type."""
    return repr(printable(value, 40)) if isinstance(value, str) else printable(value, 40)


def _int(c: Mapping[str, Any], key: str, default: int | None = None, minimum: int = 1) -> int:
    """A whole-number field, present (or defaulted), at least ``minimum``, at most its cap."""
    if key not in c or c[key] is None:
        if default is None:
            raise ValueError(f"config field {key!r} is missing")
        return default
    value = c[key]
    low = isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum
    if low or value > _CAPS.get(key, MAX_SIZE):
        allowed = f">= {minimum}" if low else f"from {minimum} to {_CAPS.get(key, MAX_SIZE):,}"
        raise ValueError(f"config field {key!r} must be an integer {allowed}, got {_shown(value)}")
    return int(value)


def _dtype_bytes(c: Mapping[str, Any], key: str, default: int) -> int:
    name = c.get(key)
    if name is None:
        return default
    if not isinstance(name, str) or name not in DTYPE_BYTES:
        raise ValueError(
            f"config field {key!r} must be one of {sorted(DTYPE_BYTES)}, got {_shown(name)}"
        )
    return DTYPE_BYTES[name]


def _gqa_heads(c: Mapping[str, Any], hidden: int) -> tuple[int, int, int]:
    """Query heads, KV heads and head dimension of a grouped-query attention layer."""
    heads = _int(c, "num_attention_heads")
    kv_heads = _int(c, "num_key_value_heads", heads)
    if heads % kv_heads:
        raise ValueError(
            f"config fields 'num_key_value_heads' ({kv_heads}) and 'num_attention_heads' ({heads}) "
            "conflict: each KV head serves a whole group of query heads, so it must divide it"
        )
    if c.get("head_dim") is None and heads > hidden:
        raise ValueError(
            f"config fields 'num_attention_heads' ({heads}) and 'hidden_size' ({hidden}) conflict: "
            "without 'head_dim', a head's hidden_size // num_attention_heads dimensions would be 0"
        )
    return heads, kv_heads, _int(c, "head_dim", hidden // heads)


def _weight_bytes(c: Mapping[str, Any]) -> int | None:
    """Bytes per stored weight when a quantization config narrows them, else None."""
    quant = c.get("quantization_config")
    if quant is None:
        return None
    if not isinstance(quant, Mapping) or quant.get("quant_method") != "fp8":
        method = quant.get("quant_method") if isinstance(quant, Mapping) else quant
        raise ValueError(
            "config field 'quantization_config' is supported only with quant_method 'fp8' "
            f"(one byte per weight), got {_shown(method)}"
        )
    return 1


def _layer_kinds(c: Mapping[str, Any]) -> list[str]:
    """Each layer's kind: ``layer_types``, else every ``full_attention_interval``-th layer full and
    the rest Gated DeltaNet (Qwen) or every ``sliding_window_pattern``-th full and the rest sliding
    (Gemma 3's configs, as transformers reads them), else all full attention."""
    layers = _int(c, "num_hidden_layers")
    kinds = c.get("layer_types")
    if kinds is not None:
        if not isinstance(kinds, list) or len(kinds) != layers:
            raise ValueError(
                f"config field 'layer_types' must list one kind per layer ({layers}), got "
                f"{len(kinds) if isinstance(kinds, list) else _shown(kinds)}"
            )
        unknown = sorted(
            {_shown(k) for k in kinds if k not in LAYER_KINDS}, key=lambda k: k.strip("'")
        )
        if unknown:
            raise ValueError(
                "config field 'layer_types' holds kinds the lesson does not model: "
                f"[{', '.join(unknown)}] (it knows {list(LAYER_KINDS)})"
            )
        return list(kinds)
    for key, other in (
        ("full_attention_interval", "linear_attention"),
        ("sliding_window_pattern", "sliding_attention"),
    ):
        if c.get(key) is not None:
            interval = _int(c, key)
            return ["full_attention" if (i + 1) % interval == 0 else other for i in range(layers)]
    return ["full_attention"] * layers


def _num_routed_experts(c: Mapping[str, Any]) -> int:
    """``num_local_experts`` (Mixtral), ``num_experts`` (Qwen) or ``n_routed_experts``
    (DeepSeek), which must agree; 0 when none is set or it is 1 or less."""
    given = {k: _int(c, k, minimum=0) for k in EXPERT_COUNT_KEYS if c.get(k) is not None}
    if len(set(given.values())) > 1:
        raise ValueError(f"config fields {sorted(given)} disagree on the expert count: {given}")
    count = next(iter(given.values()), 0)
    return count if count > 1 else 0


def _moe_layers(c: Mapping[str, Any]) -> list[bool]:
    """Whether each layer's FFN is MoE (all False if dense): DeepSeek keeps its first
    ``first_k_dense_replace`` layers dense, then every ``moe_layer_freq``-th is MoE; Qwen lists
    dense layers in ``mlp_only_layers`` and makes every ``decoder_sparse_step``-th layer MoE."""
    layers = _int(c, "num_hidden_layers")
    if not _num_routed_experts(c):
        return [False] * layers
    first_dense = _int(c, "first_k_dense_replace", 0, minimum=0)
    every = _int(c, "moe_layer_freq", 1)
    step = _int(c, "decoder_sparse_step", 1)
    dense_only = c.get("mlp_only_layers") or []
    if not isinstance(dense_only, list) or not all(
        isinstance(i, int) and 0 <= i < layers for i in dense_only
    ):
        raise ValueError(
            f"config field 'mlp_only_layers' must list layer indices from 0 to {layers - 1}, "
            f"got {dense_only!r}"
        )
    dense_only = set(dense_only)  # a long list is looked up once per layer
    return [
        i >= first_dense and i % every == 0 and (i + 1) % step == 0 and i not in dense_only
        for i in range(layers)
    ]


def _attention_params(c: Mapping[str, Any]) -> float:
    """One full-attention layer's projections (and MLA's two low-rank norms)."""
    hidden = _int(c, "hidden_size")
    if c.get("kv_lora_rank") is not None:
        heads = _int(c, "num_attention_heads")
        latent = _int(c, "kv_lora_rank")
        rope = _int(c, "qk_rope_head_dim")
        nope = _int(c, "qk_nope_head_dim")
        value = _int(c, "v_head_dim")
        q_rank = _int(c, "q_lora_rank", 0, minimum=0)
        query = heads * (nope + rope)
        q = hidden * query if not q_rank else hidden * q_rank + q_rank + q_rank * query
        kv = hidden * (latent + rope) + latent + latent * heads * (nope + value)
        return float(q + kv + heads * value * hidden)
    heads, kv_heads, head_dim = _gqa_heads(c, hidden)
    gate = 2 if c.get("attn_output_gate") else 1
    q = hidden * heads * head_dim * gate
    return float(q + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden)


def _deltanet_params(c: Mapping[str, Any]) -> float:
    """One Gated DeltaNet layer: projections, short convolution, decay terms and norm."""
    hidden = _int(c, "hidden_size")
    key_heads = _int(c, "linear_num_key_heads")
    value_heads = _int(c, "linear_num_value_heads")
    key_dim = key_heads * _int(c, "linear_key_head_dim")
    head_v = _int(c, "linear_value_head_dim")
    value_dim = value_heads * head_v
    kernel = _int(c, "linear_conv_kernel_dim")
    projections = hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * value_heads
    conv = (2 * key_dim + value_dim) * kernel
    return float(projections + conv + 2 * value_heads + head_v + value_dim * hidden)


def _expert_size(c: Mapping[str, Any]) -> int:
    if c.get("moe_intermediate_size") is not None:
        return _int(c, "moe_intermediate_size")
    return _int(c, "intermediate_size")


def _shared_expert_params(c: Mapping[str, Any]) -> float:
    """Shared experts of one MoE layer: DeepSeek's ``n_shared_experts`` or Qwen's one."""
    hidden = _int(c, "hidden_size")
    if c.get("shared_expert_intermediate_size"):
        # Qwen-MoE: one shared expert of its own size, behind a one-output gate.
        return float(3 * hidden * _int(c, "shared_expert_intermediate_size") + hidden)
    return float(_int(c, "n_shared_experts", 0, minimum=0) * 3 * hidden * _expert_size(c))


def _num_shared_experts(c: Mapping[str, Any]) -> int:
    """Shared experts per MoE layer: DeepSeek's ``n_shared_experts``, Qwen's one if sized."""
    if c.get("shared_expert_intermediate_size"):
        return 1
    return _int(c, "n_shared_experts", 0, minimum=0)


def count_params(config: object) -> ParamCount:
    """Count a config's parameters by kind (the module's docstring says what is counted).

    Parameters
    ----------
    config : dict or str or os.PathLike
        A parsed config or the path of a ``config.json``.

    Returns
    -------
    ParamCount
        ``total`` is what :func:`model_fields` gives as ``params``.
    """
    c = _text_config(_load_config(config))
    hidden = _int(c, "hidden_size")
    vocab = _int(c, "vocab_size")
    kinds = _layer_kinds(c)
    moe = _moe_layers(c)
    experts = _num_routed_experts(c)
    tied = bool(c.get("tie_word_embeddings", False))
    embeddings = vocab * hidden * (1 if tied else 2)
    mixers = sum(
        _deltanet_params(c) if kind == "linear_attention" else _attention_params(c)
        for kind in kinds
    )
    dense_layers = len(moe) - sum(moe)
    dense_ffn = 3 * hidden * _int(c, "intermediate_size") * dense_layers if dense_layers else 0
    per_expert = 3 * hidden * _expert_size(c) if experts else 0
    routed = per_expert * experts * sum(moe)
    shared = (_shared_expert_params(c) + hidden * experts) * sum(moe)
    norms = (2 * len(kinds) + 1) * hidden
    return ParamCount(
        embeddings=float(embeddings),
        mixers=float(mixers),
        dense_ffn=float(dense_ffn),
        routed_experts=float(routed),
        shared=float(shared),
        norms=float(norms),
        per_expert=float(per_expert),
    )


def model_fields(
    config: object, *, name: str | None = None, params: float | None = None
) -> dict[str, Any]:
    """The :class:`~lesson_lib.model.specs.ModelSpec` fields a Hugging Face config describes.

    :meth:`ModelSpec.from_hf_config <lesson_lib.model.specs.ModelSpec.from_hf_config>` builds the
    model from them. The parameters are counted with :func:`count_params`. MLA models get one latent
    "KV head" per layer (every query head reads the same cached latent, so tensor parallelism copies
    it instead of splitting it) and a head dimension of ``qk_nope_head_dim + qk_rope_head_dim``;
    they cache ``kv_lora_rank + qk_rope_head_dim`` elements per token and layer. Sliding-window
    layers are attention layers whose cache keeps the last ``sliding_window`` tokens.

    Parameters
    ----------
    config : dict or str or os.PathLike
        A parsed config or the path of a ``config.json``.
    name : str, optional
        Display name (default: ``_name_or_path``, else ``model_type``).
    params : float, optional
        A stated parameter count that replaces the counted one (> 0).

    Returns
    -------
    dict
        Keyword arguments of ``ModelSpec``: ``params`` is the total count (MTP layers left out, see
        ``mtp_layers``). A missing, malformed or unsupported field is a ValueError naming it.
        Mixtral-8x7B: 46.7 billion parameters, 12.9 billion active, 64 all-to-alls per token.
    """
    raw = _load_config(config)
    c = _text_config(raw)
    counted = count_params(c)
    kinds = _layer_kinds(c)
    moe = _moe_layers(c)
    experts = _num_routed_experts(c)
    layers = len(kinds)
    hidden = _int(c, "hidden_size")
    heads = _int(c, "num_attention_heads")
    attention_layers = layers - kinds.count("linear_attention")
    sliding_layers = kinds.count("sliding_attention")
    mla = c.get("kv_lora_rank") is not None
    if mla:
        kv_heads = 1
        head_dim = _int(c, "qk_nope_head_dim") + _int(c, "qk_rope_head_dim")
    else:
        heads, kv_heads, head_dim = _gqa_heads(c, hidden)
    linear = attention_layers < layers
    interval = c.get("full_attention_interval")
    super_blocks = None
    if linear and isinstance(interval, int) and interval > 0 and layers % interval == 0:
        super_blocks = layers // interval
    top_k = _int(c, "num_experts_per_tok", minimum=1) if experts else 0
    if top_k > experts:
        raise ValueError(
            f"config field 'num_experts_per_tok' must be at most the {experts} routed experts, "
            f"got {top_k}"
        )
    dense_ffn = _int(c, "intermediate_size", minimum=1) if not all(moe) else None
    linear_fields = {}
    if linear:
        linear_fields = {
            "linear_num_key_heads": _int(c, "linear_num_key_heads"),
            "linear_num_value_heads": _int(c, "linear_num_value_heads"),
            "linear_key_head_dim": _int(c, "linear_key_head_dim"),
            "linear_value_head_dim": _int(c, "linear_value_head_dim"),
            "linear_conv_kernel": _int(c, "linear_conv_kernel_dim"),
            "state_dtype_bytes": _dtype_bytes(c, "mamba_ssm_dtype", 4),
        }
    mtp_keys = ("num_nextn_predict_layers", "mtp_num_hidden_layers")  # DeepSeek's, Qwen's
    mtp = sum(_int(c, key, 0, minimum=0) for key in mtp_keys)
    return dict(
        name=name or str(raw.get("_name_or_path") or c.get("model_type") or "model"),
        params=counted.total if params is None else params,
        hidden_size=hidden,
        num_layers=layers,
        num_attention_layers=attention_layers,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        max_context=_int(c, "max_position_embeddings"),
        dtype_bytes=_dtype_bytes(c, "dtype" if c.get("dtype") is not None else "torch_dtype", 2),
        num_query_heads=heads,
        ffn_size=dense_ffn if dense_ffn is not None else _expert_size(c),
        num_super_blocks=super_blocks,
        vocab_size=_int(c, "vocab_size"),
        weight_dtype_bytes=_weight_bytes(c),
        kv_lora_rank=_int(c, "kv_lora_rank") if mla else 0,
        qk_rope_head_dim=_int(c, "qk_rope_head_dim") if mla else 0,
        num_experts=experts,
        experts_per_token=top_k,
        num_shared_experts=_num_shared_experts(c) if experts else 0,
        num_moe_layers=sum(moe),
        expert_params=counted.per_expert,
        mtp_layers=mtp,
        sliding_window=_int(c, "sliding_window") if sliding_layers else 0,
        num_sliding_layers=sliding_layers,
        **linear_fields,
    )
