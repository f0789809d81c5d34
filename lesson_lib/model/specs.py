"""What the lesson reasons about: a model, an accelerator and a fabric.

Frozen dataclasses of plain SI quantities (bytes, seconds, bytes/second, FLOP/second) that check
their fields when built, so a bad value fails where it was typed, naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from lesson_lib.model._validate import require_instance, require_int, require_number
from lesson_lib.model.hf_config import model_fields

#: ModelSpec fields its repr shows only when they differ from their defaults.
_SHOWN_WHEN_SET: frozenset[str] = frozenset(
    "weight_dtype_bytes kv_lora_rank qk_rope_head_dim num_experts experts_per_token "
    "num_shared_experts num_moe_layers expert_params mtp_layers sliding_window "
    "num_sliding_layers".split()
)
#: ModelSpec's whole-number fields by lower bound: 1; 0; 1 unless None.
_AT_LEAST_ONE: tuple[str, ...] = tuple(
    "hidden_size num_layers num_kv_heads head_dim max_context dtype_bytes state_dtype_bytes".split()
)
_AT_LEAST_ZERO: tuple[str, ...] = tuple(
    "allreduces_per_layer linear_num_key_heads linear_num_value_heads linear_key_head_dim "
    "linear_value_head_dim linear_conv_kernel kv_lora_rank qk_rope_head_dim num_shared_experts "
    "mtp_layers".split()
)
_AT_LEAST_ONE_IF_GIVEN: tuple[str, ...] = tuple(
    "num_query_heads ffn_size num_super_blocks vocab_size weight_dtype_bytes".split()
)


@dataclass(frozen=True)
class ModelSpec:
    """Shape of a decoder-only model, enough to size memory and communication.

    A hybrid model mixes full-attention layers (a KV cache that grows with context) with
    linear-attention layers such as Gated DeltaNet (a fixed-size recurrent state); a pure-attention
    model has ``num_attention_layers == num_layers``. A mixture-of-experts (MoE) model sets the four
    MoE fields (``num_experts``, ``experts_per_token``, ``num_moe_layers``, ``expert_params``).

    Every count is a whole number >= 1, except ``num_attention_layers`` (from 0 to ``num_layers``),
    ``allreduces_per_layer``, the linear-attention, MLA, shared-expert, MTP and sliding-window
    fields (>= 0) and the MoE fields of a dense model (0); ``params`` is a number > 0.
    """

    name: str
    #: Number of parameters (e.g. ``27e9``).
    params: float
    #: Width of the residual stream; one hidden vector per token.
    hidden_size: int
    #: Layers, each a sequence mixer then an FFN.
    num_layers: int
    #: How many layers are full attention with a KV cache.
    num_attention_layers: int
    #: Key/value heads per attention layer.
    num_kv_heads: int
    #: One attention head's dimension.
    head_dim: int
    #: Longest supported sequence, in tokens.
    max_context: int
    #: Bytes per weight, activation and KV element (2 for bf16).
    dtype_bytes: int = 2
    #: Query heads per attention layer (the layout check).
    num_query_heads: int | None = None
    #: Key heads of each linear-attention (DeltaNet) layer.
    linear_num_key_heads: int = 0
    #: Value heads of each linear-attention layer.
    linear_num_value_heads: int = 0
    #: Key head dimension of each linear-attention layer.
    linear_key_head_dim: int = 0
    #: Value head dimension of each linear-attention layer.
    linear_value_head_dim: int = 0
    #: Causal convolution width before each linear layer (its state holds the last ``kernel - 1``
    #: inputs).
    linear_conv_kernel: int = 0
    #: Bytes per element of the recurrent state (fp32 in vLLM).
    state_dtype_bytes: int = 4
    #: FFN intermediate size (the layout check).
    ffn_size: int | None = None
    #: Repeating groups of layers, whole in each pipeline stage (default ``num_layers``).
    num_super_blocks: int | None = None
    #: TP all-reduces per layer, after the mixer's output projection and the FFN down projection.
    allreduces_per_layer: int = 2
    #: Rows of the embedding and the LM head (the two collectives outside the layers).
    vocab_size: int | None = None
    #: Bytes per stored weight, if narrower than ``dtype_bytes`` (1 for DeepSeek-V3's FP8).
    weight_dtype_bytes: int | None = None
    #: Multi-head latent attention (MLA, DeepSeek), the latent each attention layer caches per token
    #: instead of K and V heads.
    kv_lora_rank: int = 0
    #: MLA's rotary key, cached beside the latent.
    qk_rope_head_dim: int = 0
    #: Routed experts per MoE layer.
    num_experts: int = 0
    #: Routed experts each token visits (top-k, from 1 to ``num_experts`` in an MoE model).
    experts_per_token: int = 0
    #: Experts every token visits besides (counted as dense weights).
    num_shared_experts: int = 0
    #: MoE layers, from 1 to ``num_layers`` in an MoE model (DeepSeek-V3's first three are dense).
    num_moe_layers: int = 0
    #: Parameters of one routed expert in one layer (> 0 in an MoE model).
    expert_params: float = 0.0
    #: Multi-token-prediction layers for speculative decoding, never counted in ``params``.
    mtp_layers: int = 0
    #: Sliding-window attention (gpt-oss, Gemma), the tokens such a layer caches at most (>= 1 if
    #: any).
    sliding_window: int = 0
    #: How many of the ``num_attention_layers`` are sliding-window layers.
    num_sliding_layers: int = 0

    def __post_init__(self) -> None:
        require_number("params", self.params, strict=True)
        for field in _AT_LEAST_ONE:
            require_int(field, getattr(self, field))
        require_int(
            "num_attention_layers", self.num_attention_layers, minimum=0, maximum=self.num_layers
        )
        for field in _AT_LEAST_ZERO:
            require_int(field, getattr(self, field), minimum=0)
        for field in _AT_LEAST_ONE_IF_GIVEN:
            if getattr(self, field) is not None:
                require_int(field, getattr(self, field))
        self._check_experts()
        require_int("num_sliding_layers", self.num_sliding_layers, 0, self.num_attention_layers)
        require_int("sliding_window", self.sliding_window, minimum=min(self.num_sliding_layers, 1))
        if self.num_super_blocks is not None and self.num_layers % self.num_super_blocks:
            raise ValueError(
                f"num_super_blocks must divide num_layers ({self.num_layers}), "
                f"got {self.num_super_blocks}"
            )
        if self.num_linear_layers and not (
            self.linear_num_value_heads and self.linear_key_head_dim and self.linear_value_head_dim
        ):
            raise ValueError(
                f"num_attention_layers ({self.num_attention_layers}) < num_layers "
                f"({self.num_layers}) describes linear-attention layers: give "
                "linear_num_value_heads, linear_key_head_dim and linear_value_head_dim (>= 1), "
                "or set num_attention_layers = num_layers for a pure-attention model"
            )

    def __repr__(self) -> str:
        """A dense model's fields, then the MLA and MoE ones that are set (short for the API)."""
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.name not in _SHOWN_WHEN_SET or getattr(self, f.name) != f.default
        ]
        return f"ModelSpec({', '.join(shown)})"

    def _check_experts(self) -> None:
        """The MoE fields: all zero for a dense model, all given and consistent otherwise."""
        require_int("num_experts", self.num_experts, minimum=0)
        if not self.num_experts:
            for field in ("experts_per_token", "num_moe_layers", "expert_params"):
                if getattr(self, field) != 0:
                    raise ValueError(
                        f"{field} must be 0 for a dense model (num_experts = 0), "
                        f"got {getattr(self, field)!r}"
                    )
            return
        require_int("experts_per_token", self.experts_per_token, maximum=self.num_experts)
        require_int("num_moe_layers", self.num_moe_layers, maximum=self.num_layers)
        require_number("expert_params", self.expert_params, strict=True)
        routed = self.num_experts * self.num_moe_layers * self.expert_params
        if routed >= self.params:
            raise ValueError(
                f"expert_params must leave room for the rest of the model: "
                f"{self.num_experts} experts x {self.num_moe_layers} layers x "
                f"{self.expert_params:g} = {routed:g} is not below params ({self.params:g})"
            )

    @classmethod
    def from_hf_config(
        cls, config: object, *, name: str | None = None, params: float | None = None
    ) -> ModelSpec:
        """Build a model from a Hugging Face ``config.json`` (a dict or a path).

        Parameters
        ----------
        config, name, params
            As for :func:`~lesson_lib.model.hf_config.model_fields`, which reads the fields and
            counts the parameters (dense, grouped-query and sliding-window attention, MLA, Gated
            DeltaNet, MoE); a stated ``params``, such as the specimen's 27 billion, replaces it.

        Returns
        -------
        ModelSpec
            With sliding-window layers (``sliding_attention`` in ``layer_types``),
            ``kv_bytes_per_token`` counts the layers that keep the whole context; :meth:`kv_bytes`
            at a context adds the window-capped ones, ``min(context, sliding_window)`` tokens each.
        """
        return cls(**model_fields(config, name=name, params=params))

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (``num_experts > 0``)."""
        return self.num_experts > 0

    @property
    def routed_expert_params(self) -> float:
        """Parameters of every routed expert of every MoE layer (0 for a dense model)."""
        return float(self.num_experts * self.num_moe_layers * self.expert_params)

    @property
    def active_params(self) -> float:
        """Parameters one token uses, ``params`` less the routed experts beyond its top-k."""
        idle = (self.num_experts - self.experts_per_token) * self.num_moe_layers
        return float(self.params) - idle * self.expert_params

    @property
    def alltoalls_per_token(self) -> int:
        """Expert-parallel all-to-alls per decoded token, a dispatch and a combine per MoE layer."""
        return 2 * self.num_moe_layers

    @property
    def num_linear_layers(self) -> int:
        """Number of linear-attention (e.g. Gated DeltaNet) layers."""
        return self.num_layers - self.num_attention_layers

    @property
    def super_blocks(self) -> int:
        """Pipeline-divisible groups of layers (``num_layers`` if not given)."""
        return self.num_super_blocks if self.num_super_blocks is not None else self.num_layers

    @property
    def weight_bytes(self) -> float:
        """``params * weight_dtype_bytes`` (or ``dtype_bytes``) bytes: 54e9 in the specimen."""
        # weight_dtype_bytes is None or >= 1, checked when the model is built
        return float(self.params) * (self.weight_dtype_bytes or self.dtype_bytes)

    @property
    def hidden_vector_bytes(self) -> float:
        """Bytes of one token's hidden vector, ``hidden_size * dtype_bytes``."""
        return float(self.hidden_size * self.dtype_bytes)

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token adds in the layers that keep the whole context.

        Each caches K and V per KV head, or under MLA (``kv_lora_rank > 0``) the latent and the
        rotary key, ``kv_lora_rank + qk_rope_head_dim`` elements. The sliding-window layers are left
        out: :meth:`kv_bytes` adds them, ``min(context, sliding_window)`` tokens each.
        """
        layers = self.num_attention_layers - self.num_sliding_layers
        return layers * self._kv_bytes_per_layer

    @property
    def _kv_bytes_per_layer(self) -> float:
        """Bytes one token takes in one attention layer's cache."""
        if self.kv_lora_rank:
            return float((self.kv_lora_rank + self.qk_rope_head_dim) * self.dtype_bytes)
        return float(2 * self.num_kv_heads * self.head_dim * self.dtype_bytes)

    def _cached_tokens(self, context_tokens: int) -> int:
        """Tokens a sequence keeps cached over all attention layers (= a decoded token's pairs)."""
        tokens = require_int("context_tokens", context_tokens, minimum=0, maximum=self.max_context)
        full = self.num_attention_layers - self.num_sliding_layers
        return full * tokens + self.num_sliding_layers * min(tokens, self.sliding_window)

    def kv_bytes(self, context_tokens: int) -> float:
        """KV-cache bytes of one sequence of ``context_tokens`` tokens, every layer's cache.

        Parameters
        ----------
        context_tokens : int
            Sequence length, from 0 to ``max_context``.

        Returns
        -------
        float
            Bytes (unsharded: the whole cache, before tensor parallelism): ``kv_bytes_per_token``
            per token, plus the sliding-window layers' ``min(context_tokens, sliding_window)``.
        """
        return self._cached_tokens(context_tokens) * self._kv_bytes_per_layer

    @property
    def recurrent_state_bytes_per_layer(self) -> float:
        """Bytes of one linear layer's recurrent state (value heads x d_k x d_v)."""
        return float(
            self.linear_num_value_heads
            * self.linear_key_head_dim
            * self.linear_value_head_dim
            * self.state_dtype_bytes
        )

    @property
    def conv_channels(self) -> int:
        """Channels of the short convolution (queries, keys and values of a linear layer)."""
        return (
            2 * self.linear_num_key_heads * self.linear_key_head_dim
            + self.linear_num_value_heads * self.linear_value_head_dim
        )

    @property
    def conv_state_bytes_per_layer(self) -> float:
        """Bytes of one linear layer's convolution state, channels x (kernel - 1)."""
        return float(self.conv_channels * max(self.linear_conv_kernel - 1, 0) * self.dtype_bytes)

    @property
    def state_bytes(self) -> float:
        """Per-sequence state of the linear-attention layers, bytes (fixed; 0 without them)."""
        per_layer = self.recurrent_state_bytes_per_layer + self.conv_state_bytes_per_layer
        return self.num_linear_layers * per_layer

    @property
    def allreduces_per_token(self) -> int:
        """Tensor-parallel all-reduces per decoded token (2 per layer)."""
        return self.allreduces_per_layer * self.num_layers


@dataclass(frozen=True)
class Accelerator:
    """One GPU or accelerator card."""

    name: str
    #: Memory the runtime sees, bytes (> 0; 79.1 GiB, 84.9e9 bytes, on a card sold as "80 GB").
    memory_bytes: float
    #: Memory bandwidth, bytes/second (> 0).
    hbm_bandwidth: float
    #: Dense peak at the model's dtype, FLOP/second (> 0).
    peak_flops: float

    def __post_init__(self) -> None:
        require_number("memory_bytes", self.memory_bytes, strict=True, unit="bytes")
        require_number("hbm_bandwidth", self.hbm_bandwidth, strict=True, unit="bytes/s")
        require_number("peak_flops", self.peak_flops, strict=True, unit="FLOP/s")


@dataclass(frozen=True)
class Fabric:
    """The wire between GPUs, as the alpha-beta model sees it."""

    name: str
    #: Fixed cost of one small all-reduce, seconds (>= 0; the lesson's alpha).
    latency: float
    #: Bytes/second each rank can send in one direction (> 0; the beta term's B).
    bandwidth: float
    #: Extra seconds per ring hop (>= 0; 2(N-1) hops on N ranks); 0 is the lesson's fixed latency.
    hop_latency: float = 0.0

    def __post_init__(self) -> None:
        require_number("latency", self.latency, unit="s")
        require_number("bandwidth", self.bandwidth, strict=True, unit="bytes/s")
        require_number("hop_latency", self.hop_latency, unit="s")


def _require_hardware(model: object, accel: object, **fabrics: object) -> None:
    """TypeError unless model is a ModelSpec, accel an Accelerator and each of fabrics a Fabric."""
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    for name, fabric in fabrics.items():
        require_instance(name, fabric, Fabric)
