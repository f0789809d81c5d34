"""The lesson's specimen and every stated assumption, each with its source.

The one place the worked example's inputs are typed; :data:`ASSUMPTIONS` is the
table the book shows: what is given, what is a vendor figure, what is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.units import (
    GB,
    TB,
    US,
    GiB,
    format_bytes,
    format_count,
    format_rate,
    format_seconds,
)

#: Qwen's Qwen/Qwen3.8-27B, a dense hybrid of 16 super-blocks of 3 Gated DeltaNet layers and 1
#: gated-attention layer, each with an FFN; vLLM and NeMo load it with their Qwen3.5 implementation
#: (Qwen3_5ForConditionalGeneration). Its checkpoint also holds a vision encoder and a one-layer
#: multi-token-prediction (MTP) head that the lesson leaves out: ``params`` is the model card's
#: rounded 27 billion and counts neither on its own (lesson_lib.chapters.batching sizes the head).
MODEL = ModelSpec(
    name="Qwen3.8-27B",
    params=27e9,
    hidden_size=5120,
    num_layers=64,
    num_attention_layers=16,
    num_kv_heads=4,
    head_dim=256,
    max_context=262_144,
    dtype_bytes=2,
    num_query_heads=24,
    linear_num_key_heads=16,
    linear_num_value_heads=48,
    linear_key_head_dim=128,
    linear_value_head_dim=128,
    linear_conv_kernel=4,
    state_dtype_bytes=4,
    ffn_size=17408,
    num_super_blocks=16,
    vocab_size=248_320,
    mtp_layers=1,
)

#: What the box says. nvidia-smi shows 81,920 MiB (80 GiB) on an A100 80 GB but
#: 81,559 MiB on an H100, below 80 GiB (modal-client PR 2797, which concludes that
#: NVIDIA quotes GB); the lesson sizes the card by what CUDA exposes instead.
GPU_LABEL: str = "80 GB"
GPU_HBM_BYTES: float = 80 * GiB
#: What CUDA exposes of it, the rest holding the driver's own structures. PyTorch reports "total
#: capacity of 79.1x-79.3x GiB" on such cards. The lesson uses the low end.
GPU_VISIBLE_BYTES: float = 79.1 * GiB

#: The specimen's card, with memory as CUDA exposes it, H100 SXM bandwidth and bf16 peak.
GPU = Accelerator(
    name=f"H100 SXM-class, sold as {GPU_LABEL}",
    memory_bytes=GPU_VISIBLE_BYTES,
    hbm_bandwidth=3.35 * TB,
    peak_flops=989e12,
)

#: An A100 SXM sold as 80 GB, for comparisons (reality check, problem variants), with
#: the vendor's HBM bandwidth (2.039 TB/s) and dense bf16 peak (312 TFLOP/s), and
#: memory as CUDA exposes it (the same figure as the specimen's card).
A100 = Accelerator(
    name=f"A100 SXM-class, sold as {GPU_LABEL}",
    memory_bytes=GPU_VISIBLE_BYTES,
    hbm_bandwidth=2.039 * TB,
    peak_flops=312e12,
)

#: An H200 SXM sold as 141 GB, for the larger MoE models, with the vendor's HBM3e bandwidth (4.8
#: TB/s) and the H100's dense bf16 peak; the memory CUDA exposes is an assumed 140 GiB.
H200 = Accelerator("H200 SXM-class, sold as 141 GB", 140 * GiB, 4.8 * TB, 989e12)

#: vLLM's default ``gpu_memory_utilization``, the share of the card it lets the model's weights, KV
#: cache and activations use: 0.92 in current releases (``vllm/config/cache.py`` at 002f10e; 0.9 in
#: older ones). A separate, explicit assumption; ``memory_budget(..., utilization=...)`` applies it
#: and no function applies it by default.
VLLM_GPU_MEMORY_UTILIZATION: float = 0.92

#: Memory NCCL keeps per GPU at each tensor-parallel degree on H100 SXM, as NVIDIA's aiconfigurator
#: assumes it ("nccl_mem" in aiconfigurator-core 0.12.0's ``systems/h100_sxm.yaml``, which calls it
#: a non-official correction based on observations): 342 MiB at TP 2, 392 MiB at TP 4 and 8. A
#: stated assumption the sizing chapter subtracts in one place; no function applies it by default.
NCCL_BUFFER_BYTES: dict[int, float] = {1: 0.0, 2: 358_612_992.0, 4: 411_041_792.0, 8: 411_041_792.0}

#: Illustrative per-direction bandwidths of the two fabrics.
NVLINK_BANDWIDTH: float = 450 * GB
PCIE_BANDWIDTH: float = 64 * GB

#: InfiniBand NDR bandwidth, 400 Gb/s per port and direction (a vendor figure), illustrative.
INFINIBAND_NDR_BANDWIDTH: float = 50 * GB

#: The lesson's fast intra-node fabric, 10 us per small all-reduce.
FAST = Fabric(name="fast (NVLink-class, 10 us)", latency=10 * US, bandwidth=NVLINK_BANDWIDTH)
#: The lesson's slow fabric, 50 us per small all-reduce.
SLOW = Fabric(name="slow (PCIe-class, 50 us)", latency=50 * US, bandwidth=PCIE_BANDWIDTH)

# An assumption, not a measurement: a small all-reduce between nodes is taken to cost 25 us. It
# equals NCCL's own tuner *estimate* for a 128-byte all-reduce over 24 H100s on three nodes
# (NVIDIA/nccl issue 1453); the same run *measured* about 62 us, on a cluster the thread reports as
# misbehaving. A point-to-point send is charged the same latency, a conservative upper bound. Adjust
# both for your own network.
INTER_NODE = Fabric(
    name="InfiniBand NDR-class network (assumption, 25 us)",
    latency=25 * US,
    bandwidth=INFINIBAND_NDR_BANDWIDTH,
)
#: What that run of NVIDIA/nccl issue 1453 measured for the same all-reduce, about 62 us.
INTER_NODE_MEASURED_LATENCY: float = 62 * US

# The network between nodes as it is built, for the KV-transfer chapter. NVIDIA's HGX AI Factory
# reference architecture (H100/H200/B200, "2-8-9-400": 2 CPUs, 8 GPUs, 9 NICs, 400 Gb/s of bandwidth
# per GPU) gives every GPU its own NIC on the GPU compute (east-west) fabric, wired rail-optimised,
# and joins the nodes to the rest of the data centre through a separate converged (north-south)
# network of two 200 GbE ports per node
# (https://docs.nvidia.com/reference-architectures/hgx-ai-factory-h100-h200-b200/abstract and
# .../network-logical-architecture).
#: Line rate of one GPU's NIC on the compute fabric, bits per second (400 Gb/s).
NIC_LINE_RATE_BITS: float = 400e9
#: NICs on the compute fabric for each GPU (one, in the reference architecture).
NICS_PER_GPU: int = 1
#: One NIC in bytes per second and direction, 400 Gb/s / 8 bits = 50 GB/s, the same
#: figure as :data:`INFINIBAND_NDR_BANDWIDTH` (an NDR port is such a NIC's port).
NIC_BANDWIDTH: float = NIC_LINE_RATE_BITS / 8
#: Line rate of one port of a node's converged (north-south) Ethernet, bits per second.
NODE_ETHERNET_LINE_RATE_BITS: float = 200e9

# An assumption, not a measurement: a KV cache that cannot use the compute fabric (no transfer
# engine set up for RDMA there, say) crosses on one port of the node's converged Ethernet, which all
# the node's GPUs share, with the lesson's slow fabric's 50 us of fixed cost.
NODE_ETHERNET = Fabric(
    name="one 200 GbE port of the node's converged network, shared (assumption, 50 us)",
    latency=50 * US,
    bandwidth=NODE_ETHERNET_LINE_RATE_BITS / 8,
)

#: The collectives decode context parallelism adds per attention layer and decoded token,
#: in order: an all-gather of the queries across the DCP group, an all-gather of the
#: partial log-sum-exps and a reduce-scatter of the corrected partial outputs, as vLLM's
#: MLA decode does (``mla_attention.py`` and ``cp_lse_ag_out_rs`` at 90b0a26; see
#: :data:`lesson_lib.model.moe.VLLM_DCP_COMMIT`). The lesson assumes the same three for
#: grouped-query attention; SGLang packs the exchange into one all-to-all.
DCP_KINDS: tuple[str, ...] = ("all_gather", "all_gather", "reduce_scatter")
#: How many collectives decode context parallelism adds per attention layer and token.
DCP_COLLECTIVES_PER_ATTENTION_LAYER: int = len(DCP_KINDS)

# Beyond the lesson, a ring whose latency grows by hop. Fitted to the two
# tiny-message latencies nccl-tests issue 123 reports on a DGX-A100
# (10 us on 2 GPUs, 16.9 us on 4); alpha + 2(n-1) h gives h = 1.725 us.
MEASURED_2GPU_LATENCY: float = 10 * US
MEASURED_4GPU_LATENCY: float = 16.9 * US
_HOP = (MEASURED_4GPU_LATENCY - MEASURED_2GPU_LATENCY) / (2 * 3 - 2 * 1)
FAST_RING = Fabric(
    name="fast, latency grows per hop",
    latency=MEASURED_2GPU_LATENCY - 2 * _HOP,
    bandwidth=NVLINK_BANDWIDTH,
    hop_latency=_HOP,
)

# NVIDIA/nccl issue 1984 times a 1 KiB all-reduce on 4 H800s at about 3.5 us per operation without
# CUDA graphs and 0.5 us with them, but with ``-m 100``: 100 independent all-reduces in each timed
# iteration, not one all-reduce that waits for the layer before it. The lesson takes the two as the
# cost of launching one small kernel on a token's critical path (an assumption, not a measurement).
#: Cost of one small kernel launched eagerly (without CUDA graphs), assumed from that issue.
KERNEL_LAUNCH_EAGER: float = 3.5 * US
#: Cost of one small kernel replayed from a CUDA graph, assumed from the same issue.
KERNEL_LAUNCH_GRAPH: float = 0.5 * US
#: The per-all-reduce launch overhead inside alpha, which CUDA graphs remove (an assumption, not
#: a measurement): the difference of the two, 3 us.
CUDA_GRAPH_LAUNCH_SAVING: float = KERNEL_LAUNCH_EAGER - KERNEL_LAUNCH_GRAPH

#: Mean delay with which each rank reaches a collective (jitter) on a quiet node (pinned threads),
#: an assumption and not a measurement, as is the busy node's. The lab measures your machine's.
JITTER_QUIET: float = 1 * US
#: The same on a busy node (unpinned threads, interrupts), assumed.
JITTER_BUSY: float = 5 * US
#: Shape of the heavier-tailed lognormal jitter set beside the exponential, assumed.
JITTER_SIGMA: float = 1.0

#: An interactive decode rate, tokens/second.
TOKENS_PER_S: int = 50
#: The prefill example's prompt, tokens.
PROMPT_TOKENS: int = 4096

#: Goodput's time-to-first-token target, GuideLLM's chat example (the TPOT target is 1 / TOKENS_PER_S).
TTFT_TARGET: float = 0.2
#: Goodput's answer length, the KV chapter's short answers, tokens.
GOODPUT_OUTPUT_TOKENS: int = 256
#: Tokens one chunked-prefill step carries, decode tokens included (vLLM's max_num_batched_tokens).
STEP_TOKENS: int = 2048
#: Price of one H100 SXM for an hour in US dollars, assumed near the low end of 2026 on-demand lists.
GPU_HOUR_USD: float = 2.5
#: One H100 SXM board's maximum power in watts (NVIDIA's figure, up to 700 W, configurable).
BOARD_POWER_W: float = 700.0

#: Vectors a pipeline stage sends the next per token, the hidden state and the
#: residual stream beside it, as vLLM's Qwen3.5 model declares its intermediate tensors.
PP_VECTORS_PER_TOKEN: int = 2


@dataclass(frozen=True)
class Assumption:
    """One stated input of the worked example."""

    name: str
    #: The value in SI units (bytes, seconds, bytes/s, FLOP/s) or a count.
    value: float
    unit: str
    #: The value as the book prints it.
    shown: str
    #: Where it comes from, or ``"assumption"``.
    source: str


_LESSON = "lesson text"
_CONFIG = "public Qwen3.5-27B config (same shape)"
_STATED_FABRIC = "assumption (lesson), not a vendor figure"
_JITTER = f"assumption: mean delay, exponential (or lognormal, sigma {JITTER_SIGMA:g}); see the lab"
#: How a value is shown by default, by its unit.
_SHOWN_BY_UNIT = {
    "count": format_count,
    "bytes/s": format_rate,
    "s": format_seconds,
    "bytes": lambda value: f"{format_count(value)} B",
    "tokens": lambda value: f"{format_count(value)} tokens",
    "tokens/s": lambda value: f"{format_count(value)} tokens/s",
}


def _stated(name: str, value: float, unit: str, source: str, shown: str = "") -> Assumption:
    """One assumption, shown as its unit's formatter shows it unless ``shown`` is given."""
    return Assumption(name, value, unit, shown or _SHOWN_BY_UNIT[unit](value), source)


#: Every stated value the worked example rests on, in the order the lesson uses them.
ASSUMPTIONS: tuple[Assumption, ...] = (
    _stated(
        "parameters", MODEL.params, "count", _LESSON + " (54 GB of bf16 weights)", "27 billion"
    ),
    _stated("bytes per weight (bf16)", MODEL.dtype_bytes, "bytes", _LESSON),
    _stated("hidden size", MODEL.hidden_size, "count", _LESSON),
    _stated(
        "layers",
        MODEL.num_layers,
        "count",
        _LESSON + " (16 super-blocks); " + _CONFIG,
        f"{MODEL.num_layers} = {MODEL.super_blocks} super-blocks x 4",
    ),
    _stated("attention layers (keep a KV cache)", MODEL.num_attention_layers, "count", _CONFIG),
    _stated(
        "KV heads x head dim",
        MODEL.num_kv_heads * MODEL.head_dim,
        "count",
        _CONFIG,
        f"{MODEL.num_kv_heads} x {MODEL.head_dim}",
    ),
    _stated("query heads", MODEL.num_query_heads or 0, "count", _CONFIG),
    _stated(
        "Gated DeltaNet heads (key / value), head dim",
        MODEL.linear_num_value_heads,
        "count",
        _CONFIG + "; state kept in fp32 as vLLM does",
        f"{MODEL.linear_num_key_heads} / {MODEL.linear_num_value_heads}, "
        f"{MODEL.linear_key_head_dim}",
    ),
    _stated("FFN intermediate size", MODEL.ffn_size or 0, "count", _CONFIG),
    _stated("vocabulary (embedding and LM-head rows)", MODEL.vocab_size or 0, "count", _CONFIG),
    _stated("maximum context", MODEL.max_context, "tokens", _CONFIG),
    _stated(
        "all-reduces per layer (tensor parallel)", MODEL.allreduces_per_layer, "count", _LESSON
    ),
    _stated(
        "accelerator memory",
        GPU.memory_bytes,
        "bytes",
        _LESSON + " (80 GB); capacity PyTorch reports on 80 GB H100/A100 cards",
        f"{format_bytes(GPU.memory_bytes, 'GiB', decimals=1)} visible to CUDA "
        f"(sold as {GPU_LABEL})",
    ),
    _stated(
        "runtime reserve (only where stated)",
        VLLM_GPU_MEMORY_UTILIZATION,
        "fraction",
        "vLLM's default gpu_memory_utilization; an assumption, applied only where the text says so",
        f"{VLLM_GPU_MEMORY_UTILIZATION:g} (share of the card usable)",
    ),
    _stated(
        "HBM bandwidth",
        GPU.hbm_bandwidth,
        "bytes/s",
        "H100 SXM vendor figure; the value that reproduces the lesson's 1.76x",
    ),
    _stated("dense bf16 peak", GPU.peak_flops, "FLOP/s", "H100 SXM vendor figure", "989 TFLOP/s"),
    _stated("fast fabric: one small all-reduce", FAST.latency, "s", _STATED_FABRIC),
    _stated("slow fabric: one small all-reduce", SLOW.latency, "s", _STATED_FABRIC),
    _stated(
        "NVLink 4 bandwidth per direction per GPU",
        NVLINK_BANDWIDTH,
        "bytes/s",
        "vendor figure; illustrative",
    ),
    _stated(
        "PCIe Gen5 x16 bandwidth per direction",
        PCIE_BANDWIDTH,
        "bytes/s",
        "vendor figure (about 64 GB/s); illustrative",
    ),
    _stated(
        "InfiniBand NDR bandwidth per port and direction",
        INFINIBAND_NDR_BANDWIDTH,
        "bytes/s",
        "vendor figure (400 Gb/s); illustrative",
    ),
    _stated(
        "inter-node network: one small all-reduce or send",
        INTER_NODE.latency,
        "s",
        "assumption: NCCL's tuner estimate for 24 H100s on 3 nodes; the same run measured "
        f"about {format_seconds(INTER_NODE_MEASURED_LATENCY)} (NVIDIA/nccl issue 1453)",
    ),
    _stated(
        "NIC per GPU on the compute fabric, per direction",
        NIC_BANDWIDTH,
        "bytes/s",
        "vendor figure: NVIDIA HGX AI Factory reference architecture (400 Gb/s per GPU)",
        f"{format_rate(NIC_BANDWIDTH)} ({NIC_LINE_RATE_BITS / 1e9:g} Gb/s), {NICS_PER_GPU} per GPU",
    ),
    _stated(
        "node's converged Ethernet port, shared by its GPUs",
        NODE_ETHERNET.bandwidth,
        "bytes/s",
        "vendor figure (one of two 200 GbE ports per node, NVIDIA HGX AI Factory reference "
        f"architecture); its {format_seconds(NODE_ETHERNET.latency)} latency is an assumption",
    ),
    _stated(
        "decode context parallelism: collectives per attention layer",
        DCP_COLLECTIVES_PER_ATTENTION_LAYER,
        "count",
        "vLLM's MLA decode (mla_attention.py at 90b0a26): a query all-gather, a log-sum-exp "
        "all-gather and an output reduce-scatter; assumed the same for grouped-query attention",
    ),
    _stated(
        "tiny all-reduce, 4 GPUs (per-hop ring model)",
        MEASURED_4GPU_LATENCY,
        "s",
        "measured 16.88 us, rounded (DGX-A100, NVIDIA/nccl-tests issue 123); with 10 us on 2 GPUs it fixes the per-hop ring model",
    ),
    _stated(
        "launch overhead CUDA graphs remove, per all-reduce",
        CUDA_GRAPH_LAUNCH_SAVING,
        "s",
        "assumption; NVIDIA/nccl issue 1984's 3.5 -> 0.5 us is per operation over 100 "
        "aggregated all-reduces (-m 100), not one dependent all-reduce",
    ),
    _stated(
        "one small kernel's launch, eager / from a CUDA graph",
        KERNEL_LAUNCH_EAGER,
        "s",
        "assumption from NVIDIA/nccl issue 1984 (about 3.5 us and 0.5 us per operation, -m 100); "
        "prices the kernels fusion removes",
        f"{format_seconds(KERNEL_LAUNCH_EAGER)} / {format_seconds(KERNEL_LAUNCH_GRAPH)}",
    ),
    _stated("per-rank jitter at each collective, quiet node", JITTER_QUIET, "s", _JITTER),
    _stated("per-rank jitter at each collective, busy node", JITTER_BUSY, "s", _JITTER),
    _stated("interactive decode rate", TOKENS_PER_S, "tokens/s", _LESSON),
    _stated("prefill prompt", PROMPT_TOKENS, "tokens", _LESSON),
    _stated(
        "goodput: time-to-first-token target",
        TTFT_TARGET,
        "s",
        "GuideLLM's chat example (neuralmagic/guidellm README); the TPOT target is 1 / the rate",
    ),
    _stated("goodput: answer length", GOODPUT_OUTPUT_TOKENS, "tokens", _LESSON),
    _stated(
        "chunked prefill: tokens per step",
        STEP_TOKENS,
        "tokens",
        "assumption; vLLM's max_num_batched_tokens sets it (optimization guide)",
    ),
    _stated(
        "price of one GPU-hour",
        GPU_HOUR_USD,
        "count",
        "assumption, near the low end of 2026 H100 SXM on-demand prices",
        "2.50 USD",
    ),
    _stated(
        "board power",
        BOARD_POWER_W,
        "count",
        "NVIDIA H100 SXM: max thermal design power up to 700 W (configurable)",
        "700 W",
    ),
    _stated(
        "pipeline message per token",
        PP_VECTORS_PER_TOKEN,
        "hidden vectors",
        "vLLM's Qwen3.5 model sends hidden_states and residual between stages "
        "(vllm/model_executor/models/qwen3_5.py at 00def4f)",
        f"{PP_VECTORS_PER_TOKEN} (hidden vector and residual)",
    ),
)
