"""The KV-transfer page: a request's hand-off between prefill and decode GPUs, and context parallelism."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.model._validate import require_instance
from lesson_lib.model.cluster_disaggregated import PLACEMENTS, plan_disaggregated
from lesson_lib.model.kv_links import (
    GPUS,
    LINKS,
    LINKS_BY_KEY,
    Link,
    collective_latency_per_token,
    colocated_stall_per_token,
    link_handoff,
)
from lesson_lib.model.kv_transfer import (
    Handoff,
    context_parallel_max_sequences,
    context_parallel_prefill,
    kv_transfer_bytes,
    kv_transfer_time,
    requests_per_second,
    ring_attention_min_chunk,
    ring_attention_step,
    sharded_transfer,
)
from lesson_lib.model.memory import kv_share
from lesson_lib.model.specimen import (
    DCP_COLLECTIVES_PER_ATTENTION_LAYER,
    FAST,
    GPU,
    INTER_NODE,
    MODEL,
    NIC_BANDWIDTH,
    NIC_LINE_RATE_BITS,
    NODE_ETHERNET,
    NODE_ETHERNET_LINE_RATE_BITS,
    NVLINK_BANDWIDTH,
    PROMPT_TOKENS,
    TOKENS_PER_S,
)
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import (
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)

#: The short prompt of the chapter's examples, tokens.
SHORT_PROMPT: int = 128
#: Sequences decoding together on the decode instance in the interference examples.
DECODE_BATCH: int = 64
#: (prompt tokens, output tokens) of the interference table.
WORKLOADS: tuple[tuple[int, int], ...] = (
    (PROMPT_TOKENS, 256),
    (PROMPT_TOKENS, 4096),
    (512, 4096),
    (32_768, 512),
)


#: Columns of :func:`link_rows`.
LINK_HEADER: tuple[str, ...] = (
    "link",
    "busiest port carries",
    "shipped after prefill",
    "share of the prefill",
    "streamed by layer: added",
)


def link_rows(prompt_tokens: int, links: Sequence[Link] = LINKS) -> list[tuple[str, ...]]:
    """One row per link: the request's bytes on the busiest port and what they cost.

    Parameters
    ----------
    prompt_tokens : int
        Prompt length, from 1 to the specimen's context.
    links : sequence of Link, default LINKS

    Returns
    -------
    list of tuple of str
        Rows in :data:`LINK_HEADER` order, for TP 4 on both sides.
    """
    return [
        (
            link.label,
            format_bytes(h.bulk.port_bytes, system="binary"),
            format_seconds(h.bulk.time_s, "ms"),
            f"{100 * h.ratio:.1f} %",
            format_seconds(h.streamed.exposed_s, "ms", decimals=3),
        )
        for link in links
        for h in (link_handoff(link, prompt_tokens),)
    ]


#: Columns of :func:`workload_rows`.
WORKLOAD_HEADER: tuple[str, ...] = (
    "prompt, output (tokens)",
    "one prefill stalls the batch",
    "colocated: added per output token",
    "decode step alone",
    "prefill's share of the GPU time",
    "disaggregated: added to the first token",
)


def workload_rows(
    workloads: Sequence[tuple[int, int]] = WORKLOADS, batch: int = DECODE_BATCH
) -> list[tuple[str, ...]]:
    """What separating prefill from decode saves and costs, per workload, TP 4 on the fast fabric.

    Parameters
    ----------
    workloads : sequence of (int, int), default WORKLOADS
        (prompt tokens, output tokens) pairs; prompts from 1 to the specimen's context.
    batch : int, default DECODE_BATCH
        Sequences decoding together, from 1 to 65536.

    Returns
    -------
    list of tuple of str
        Rows in :data:`WORKLOAD_HEADER` order (the decode step at the prompt's
        length, the hand-off streamed over a NIC per GPU).
    """
    nic = LINKS_BY_KEY["nic"]
    rows = []
    for prompt, output in workloads:
        h = link_handoff(nic, prompt)
        step = decode_step(MODEL, GPU, FAST, GPUS, batch=batch, context=prompt)
        stall = colocated_stall_per_token(h.prefill.total_s, batch, output)
        decode_share = output * step.total_s / batch  # GPU time of one request's decode
        prefill_share = h.prefill.total_s / (h.prefill.total_s + decode_share)
        rows.append(
            (
                f"{format_count(prompt)}, {format_count(output)}",
                format_seconds(h.prefill.total_s, "ms"),
                format_seconds(stall, "ms"),
                format_seconds(step.total_s, "ms"),
                f"{100 * prefill_share:.1f} %",
                format_seconds(h.streamed.exposed_s, "ms", decimals=3),
            )
        )
    return rows


#: Columns of :func:`decode_parallel_rows`.
DECODE_PARALLEL_HEADER: tuple[str, ...] = (
    "decode layout",
    "KV cache per GPU, one full-length sequence",
    "full-length sequences that fit",
    "collective latency per token",
)


def decode_parallel_rows(
    model: ModelSpec = MODEL, accel: Accelerator = GPU
) -> list[tuple[str, ...]]:
    """TP 4, TP 8 with copied KV heads and TP 8 with DCP 2, at the model's full context.

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator
        The model and one card; default the specimen's.

    Returns
    -------
    list of tuple of str
        Rows in :data:`DECODE_PARALLEL_HEADER` order; the latency counts the TP all-reduces and
        DCP's collectives (:data:`~lesson_lib.model.specimen.DCP_COLLECTIVES_PER_ATTENTION_LAYER`).
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    full = model.max_context
    layouts = (("TP 4", 4, 1), ("TP 8, KV heads copied", 8, 1), ("TP 8, DCP 2", 8, 2))
    return [
        (
            label,
            format_bytes(model.kv_bytes(full) * kv_share(model, tp) / dcp, "GiB"),
            format_count(context_parallel_max_sequences(model, accel, full, tp, dcp)),
            format_seconds(collective_latency_per_token(model, tp, dcp), "ms"),
        )
        for label, tp, dcp in layouts
    ]


@cache
def _handoffs() -> tuple[dict[str, Handoff], dict[str, Handoff]]:
    # Every link's hand-off at the lesson's prompt and at full context, read by two formatters.
    return (
        {link.key: link_handoff(link, PROMPT_TOKENS) for link in LINKS},
        {link.key: link_handoff(link, MODEL.max_context) for link in LINKS},
    )


def handoff_numbers() -> dict[str, str]:
    """What a request carries, the links, and its hand-off shipped whole or streamed by layer.

    Returns
    -------
    dict of str to str
        Glue name -> text, e.g. ``"full_one_nic": "0.347 s"``.
    """
    m, full, prompt = MODEL, MODEL.max_context, PROMPT_TOKENS
    at_prompt, at_full = _handoffs()
    short = link_handoff(LINKS_BY_KEY["ethernet"], SHORT_PROMPT)
    one_gpu_nic = sharded_transfer(m, full, INTER_NODE, 1, 1)
    decode_rate = requests_per_second(m, prompt, INTER_NODE)
    return {
        "state_mib_1": format_bytes(m.state_bytes, "MiB", decimals=1),
        "full_request_gb": format_bytes(kv_transfer_bytes(m, full), "GB"),
        "prompt_kv_mib": format_bytes(m.kv_bytes(prompt), "MiB", decimals=0),
        "prompt_request_mib": format_bytes(kv_transfer_bytes(m, prompt), "MiB", decimals=1),
        "prompt_request_mb": format_bytes(kv_transfer_bytes(m, prompt), "MB", decimals=1),
        "state_tokens": format_count(m.state_bytes / m.kv_bytes_per_token),
        "short_prompt": format_count(SHORT_PROMPT),
        "short_kv_mib": format_bytes(m.kv_bytes(SHORT_PROMPT), "MiB", decimals=0),
        "short_state_share": f"{100 * m.state_bytes / kv_transfer_bytes(m, SHORT_PROMPT):.0f} %",
        "nic_bits": f"{NIC_LINE_RATE_BITS / 1e9:g} Gb/s",
        "nic_bandwidth": format_rate(NIC_BANDWIDTH),
        "nvlink_bandwidth": format_rate(NVLINK_BANDWIDTH),
        "nvlink_vs_nic": format_ratio(NVLINK_BANDWIDTH / NIC_BANDWIDTH, decimals=0),
        "ethernet_bits": f"{NODE_ETHERNET_LINE_RATE_BITS / 1e9:g} Gb/s",
        "ethernet_bandwidth": format_rate(NODE_ETHERNET.bandwidth),
        "ethernet_latency": format_seconds(NODE_ETHERNET.latency, "us"),
        "nic_latency": format_seconds(INTER_NODE.latency, "us"),
        "gpus": str(GPUS),
        "full_one_nic": format_seconds(kv_transfer_time(m, full, INTER_NODE), "s", decimals=3),
        "full_one_gpu_pair": format_seconds(one_gpu_nic.time_s, "ms", decimals=1),
        "full_per_gpu_gib": format_bytes(at_full["nic"].bulk.port_bytes, "GiB"),
        "prefill_prompt": format_seconds(at_prompt["nic"].prefill.total_s, "ms"),
        "attention_prompt": format_seconds(at_prompt["nic"].prefill.attention_s, "ms"),
        "prefill_full": format_seconds(at_full["nic"].prefill.total_s, "s"),
        "attention_full": format_seconds(at_full["nic"].prefill.attention_s, "s"),
        **{
            f"{when}_{key}": format_seconds(h.bulk.time_s, "ms")
            for when, table in (("prompt", at_prompt), ("full", at_full))
            for key, h in table.items()
        },
        "full_nic_share": f"{100 * at_full['nic'].ratio:.1f} %",
        "full_ethernet_share": f"{100 * at_full['ethernet'].ratio:.1f} %",
        "prompt_ethernet_share": f"{100 * at_prompt['ethernet'].ratio:.0f} %",
        "nic_requests_prompt": format_count(decode_rate),
        "nic_requests_full": format_count(requests_per_second(m, full, INTER_NODE), decimals=1),
        "stream_prompt_nic": format_seconds(at_prompt["nic"].streamed.exposed_s, "ms", decimals=3),
        "stream_full_nic": format_seconds(at_full["nic"].streamed.exposed_s, "ms"),
        "stream_full_ethernet": format_seconds(at_full["ethernet"].streamed.exposed_s, "ms"),
        "last_piece_prompt": format_bytes(
            m.kv_bytes(prompt) / m.num_attention_layers / GPUS, "MiB", decimals=0
        ),
        "required_prompt_nic": format_rate(at_prompt["nic"].required_bandwidth),
        "short_prefill": format_seconds(short.prefill.total_s, "ms"),
        "short_ethernet": format_seconds(short.bulk.time_s, "ms"),
        "short_stream": format_seconds(short.streamed.exposed_s, "ms"),
    }


def _context_parallel_numbers() -> dict[str, str]:
    """Context parallelism for the long context: KV heads, DCP, ring attention."""
    m, full = MODEL, MODEL.max_context
    ring_full = ring_attention_step(m, GPU, INTER_NODE, full, 2, tp=GPUS)
    cp2 = context_parallel_prefill(m, GPU, FAST, INTER_NODE, full, 2, tp=GPUS)
    tp8_copies = max(1, 8 // m.num_kv_heads)
    return {
        "kv_heads": str(m.num_kv_heads),
        "tp8_copies": str(tp8_copies),
        "tp4_kv_per_gpu": format_bytes(m.kv_bytes(full) / m.num_kv_heads, "GiB"),
        "dcp_kv_per_gpu": format_bytes(m.kv_bytes(full) / m.num_kv_heads / tp8_copies, "GiB"),
        "tp4_sequences": format_count(context_parallel_max_sequences(m, GPU, full, 4)),
        "tp8_sequences": format_count(context_parallel_max_sequences(m, GPU, full, 8)),
        "dcp_sequences": format_count(context_parallel_max_sequences(m, GPU, full, 8, 2)),
        "dcp_extra_collectives": str(DCP_COLLECTIVES_PER_ATTENTION_LAYER * m.num_attention_layers),
        "dcp_extra_latency": format_seconds(
            collective_latency_per_token(m, 8, 2) - collective_latency_per_token(m, 8), "ms"
        ),
        "ring_chunk_nic": format_count(ring_attention_min_chunk(m, GPU, INTER_NODE, tp=GPUS)),
        "ring_chunk_nvlink": format_count(ring_attention_min_chunk(m, GPU, FAST, tp=GPUS)),
        "ring_chunk_full": format_count(ring_full.chunk_tokens),
        "ring_block_full": format_bytes(ring_full.block_bytes, "MiB", decimals=0),
        "ring_send_full": format_seconds(ring_full.send_s, "ms"),
        "ring_compute_full": format_seconds(ring_full.compute_s, "ms"),
        "ring_margin_full": format_ratio(ring_full.compute_s / ring_full.send_s, decimals=0),
        "cp2_prefill": format_seconds(cp2, "s"),
    }


def _exercise_numbers() -> dict[str, str]:
    """The exercises' arithmetic: units, a layer's piece of the prompt, ring-attention chunks."""
    m, full, prompt = MODEL, MODEL.max_context, PROMPT_TOKENS
    # exercise 4: one attention layer's shard of the prompt's KV, against one layer's compute
    piece = m.kv_bytes(prompt) / m.num_attention_layers / GPUS
    layer_s = _handoffs()[0]["nic"].prefill.step.total_s / m.num_layers
    # exercise 5: the ring's chunk without latency, and the most two-power groups that hide it
    per_token_gpu = 2 * m.num_kv_heads * m.head_dim * m.dtype_bytes / GPUS
    no_latency = Fabric("no latency", 0.0, INTER_NODE.bandwidth)
    no_latency_chunk = ring_attention_min_chunk(m, GPU, no_latency, tp=GPUS)
    min_chunk = ring_attention_min_chunk(m, GPU, INTER_NODE, tp=GPUS)
    max_groups = max(cp for cp in (2**k for k in range(1, 20)) if full / cp >= min_chunk)
    return {
        "gib_gb_error": f"{100 * (1 - 1e9 / 2**30):.0f} %",
        "state_share_full": f"{100 * m.state_bytes / kv_transfer_bytes(m, full):.1f} %",
        "layer_compute_prompt": format_seconds(layer_s, "ms"),
        "piece_rate_nic": format_rate(piece / layer_s),
        "piece_shared_mib": format_bytes(GPUS * piece, "MiB", decimals=0),
        "piece_rate_shared": format_rate(GPUS * piece / layer_s),
        "ring_bytes_per_token": format_count(per_token_gpu) + " B",
        "ring_heads_per_gpu": str((m.num_query_heads or m.num_kv_heads) // GPUS),
        "head_dim": str(m.head_dim),
        "ring_chunk_nic_no_latency": format_count(no_latency_chunk),
        "ring_groups_ratio": format_count(full / min_chunk),
        "ring_max_groups": str(max_groups),
        "attention_layers": str(m.num_attention_layers),
        "num_layers": str(m.num_layers),
        "linear_layers": str(m.num_linear_layers),
    }


def _goodput_numbers() -> dict[str, str]:
    """The table's long-answer workload against a time-per-output-token target on every token.

    The target is the interactive rate's interval. Colocated, ``batch / output`` of the
    steps carry a prefill and their token takes the step plus the prefill.
    """
    prompt, output = WORKLOADS[1]
    prefill = link_handoff(LINKS_BY_KEY["nic"], prompt).prefill.total_s
    step = decode_step(MODEL, GPU, FAST, GPUS, batch=DECODE_BATCH, context=prompt).total_s
    stall = colocated_stall_per_token(prefill, DECODE_BATCH, output)
    target = 1 / TOKENS_PER_S
    return {
        "goodput_output": format_count(output),
        "decode_batch": format_count(DECODE_BATCH),
        "tpot_target": format_seconds(target, "ms"),
        "goodput_mean_tpot": format_seconds(step + stall, "ms"),
        "goodput_spike": format_seconds(step + prefill, "ms"),
        "goodput_spike_over_target": format_ratio((step + prefill) / target, decimals=1),
        "goodput_spike_share": f"{100 * DECODE_BATCH / output:.1f} %",
    }


#: Columns of :func:`disaggregated_rows`.
DISAGGREGATED_HEADER: tuple[str, ...] = (
    "where the prefill and decode instances sit",
    "lesson's prompt: cache sent whole after the prefill",
    "lesson's prompt: cache streamed during the prefill, the wait left after it",
    "full-length prompt: sent whole after",
    "full-length prompt: streamed, the wait left",
)


def disaggregated_rows(prefill_tp: int = 4, decode_tp: int = 4) -> list[tuple[str, ...]]:
    """What the hand-off adds to a request's first token in ms, for each placement of the instances.

    Parameters
    ----------
    prefill_tp, decode_tp : int, default 4
        Tensor-parallel degrees of the instances, from 1 to 4096.

    Returns
    -------
    list of tuple of str
        Rows in :data:`DISAGGREGATED_HEADER` order, one per placement of
        :data:`~lesson_lib.model.cluster_disaggregated.PLACEMENTS`.
    """
    rows = []
    for key, label in PLACEMENTS.items():
        row = [label]
        for tokens in (PROMPT_TOKENS, MODEL.max_context):
            plan = plan_disaggregated(
                prefill_tp=prefill_tp, decode_tp=decode_tp, placement=key, prompt_tokens=tokens
            )
            row += [f"{plan.shipped_s * 1e3:.2f}", f"{plan.streamed_s * 1e3:.2f}"]
        rows.append(tuple(row))
    return rows


#: What ``book/kv_transfer.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.WORKED, handoff_numbers, _context_parallel_numbers, _exercise_numbers, _goodput_numbers
)
