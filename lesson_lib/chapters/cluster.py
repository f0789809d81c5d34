"""The cluster page: the candidate layouts (:mod:`lesson_lib.model.cluster_planner`), what each parallelism sends."""

from __future__ import annotations

import html
from collections.abc import Sequence

from lesson_lib.chapters import overview
from lesson_lib.chapters.experts import experts_numbers
from lesson_lib.chapters.glue import GlueTable, Quote
from lesson_lib.chapters.overview import _ms
from lesson_lib.model._validate import MAX_RANKS, require_instance, require_int
from lesson_lib.model.cluster_plan import ClusterPlan
from lesson_lib.model.cluster_planner import plan_cluster
from lesson_lib.model.layout import stage_layer_kinds, stage_layers
from lesson_lib.model.specimen import (
    GPU,
    INTER_NODE,
    MODEL,
    PP_VECTORS_PER_TOKEN,
)
from lesson_lib.model.specs import Fabric, ModelSpec
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import format_bytes, format_count, format_ratio, format_seconds

#: The layouts lesson 9.10 prices; (gpus_per_node, nodes, tp, pp).
CANDIDATES: tuple[tuple[int, int, int, int], ...] = (
    (1, 1, 1, 1), (2, 1, 2, 1), (4, 1, 4, 1), (8, 1, 4, 1), (8, 1, 8, 1),
    (4, 2, 4, 2), (4, 2, 4, 1), (2, 2, 4, 1), (4, 3, 4, 3),
)  # fmt: skip


def _candidate_configurations() -> list[ClusterPlan]:
    """Plan every candidate layout: valid ones, flagged ones and invalid ones."""
    return [plan_cluster(MODEL, GPU, g, n, tp, pp) for g, n, tp, pp in CANDIDATES]


# No-break space: keeps "4 x 1 x 2" on one line in a narrow table column.
_NBSP = "\u00a0"

#: Columns of ``_candidate_rows``.
CANDIDATE_HEADER: tuple[str, ...] = (
    "nodes x GPUs",
    "TP x PP x DP",
    "one sequence (ms per token)",
    "full-length sequences",
    "batched (tokens/s)",
    "verdict",
)


def _table_verdicts(plans: Sequence[ClusterPlan]) -> list[str]:
    """The verdict column: ``"valid"``, or ``"flagged, note 1"`` numbered as the notes."""
    verdicts, note = [], 0
    for p in plans:
        if p.valid and not p.flags:
            verdicts.append("valid")
            continue
        note += 1
        verdicts.append(f"{'flagged' if p.valid else 'invalid'}, note{_NBSP}{note}")
    return verdicts


def _candidate_rows(plans: Sequence[ClusterPlan]) -> list[tuple[str, ...]]:
    """One table row per plan, formatted, in :data:`CANDIDATE_HEADER` order."""
    return [
        (
            f"{p.nodes}{_NBSP}x{_NBSP}{p.gpus_per_node}",
            f"{p.tp}{_NBSP}x{_NBSP}{p.pp}{_NBSP}x{_NBSP}{p.dp}",
            f"{p.token_time_s * 1e3:.2f}",
            format_count(p.sequences_total),
            format_count(p.tokens_per_s_total),
            verdict,
        )
        for p, verdict in zip(plans, _table_verdicts(plans), strict=True)
    ]


def _candidate_notes(plans: Sequence[ClusterPlan]) -> list[str]:
    """The notes under the candidates' table, one per flagged or invalid row, in order."""
    notes = []
    for p in plans:
        if p.valid and not p.flags:
            continue
        if not p.valid:
            notes.append(f"{p.label}: {p.problems[0]}.")
            continue
        summaries = p.flag_summaries if len(p.flag_summaries) == len(p.flags) else p.flags
        notes.append(f"{p.label}: {'; '.join(summaries)}.")
    return notes


def candidate_table(plans: Sequence[ClusterPlan] | None = None, caption: str | None = None) -> str:
    """The candidate layouts as an HTML table, its numbered notes in its footer.

    Parameters
    ----------
    plans : sequence of ClusterPlan, optional
        Default ``_candidate_configurations``.
    caption : str, optional

    Returns
    -------
    str
        An HTML ``<table>`` whose footer lists the notes the verdict column numbers.
    """
    plans = _candidate_configurations() if plans is None else plans
    table = html_table(CANDIDATE_HEADER, _candidate_rows(plans), caption)
    items = "".join(f"<li>{html.escape(n)}</li>" for n in _candidate_notes(plans))
    if not items:
        return table
    # The notes are the table's own footer: they belong to its rows, as a caption does.
    foot = (
        f'<tfoot><tr><td colspan="{len(CANDIDATE_HEADER)}">'
        f'<ol class="table-notes">{items}</ol></td></tr></tfoot>'
    )
    head, _, _ = table.rpartition("</table>")
    return f"{head}{foot}\n</table>"


def communication_per_token(
    model: ModelSpec = MODEL, tp: int = 4, pp: int = 2
) -> list[tuple[str, str, str, str]]:
    """What each form of parallelism sends per decoded token, and how often.

    Parameters
    ----------
    model : ModelSpec, default the specimen
    tp, pp : int, default 4 and 2
        Tensor- and pipeline-parallel degrees, each from 2 to 4096.

    Returns
    -------
    list of (str, str, str, str)
        Rows ``(form, events per token, bytes per event, kind)`` for TP, PP and DP.
    """
    require_instance("model", model, ModelSpec)
    tp = require_int("tp", tp, minimum=2, maximum=MAX_RANKS)
    pp = require_int("pp", pp, minimum=2, maximum=MAX_RANKS)
    vector = format_bytes(model.hidden_vector_bytes, "KiB")
    message = format_bytes(PP_VECTORS_PER_TOKEN * model.hidden_vector_bytes, "KiB")
    return [
        (
            f"tensor (TP {tp})",
            f"{model.allreduces_per_token} (two per layer)",
            f"{vector} payload",
            "blocking all-reduce among the TP group",
        ),
        (
            f"pipeline (PP {pp})",
            f"{pp - 1} (one per stage boundary)",
            f"{message}: {PP_VECTORS_PER_TOKEN} vectors, hidden vector and residual",
            "point-to-point send to the next stage",
        ),
        (
            "data (DP)",
            "0 when serving",
            "-",
            "replicas are independent; training all-reduces gradients once per step",
        ),
    ]


def _cluster_numbers() -> dict[str, str]:
    """Numbers the cluster chapter glues, formatted."""
    m = MODEL
    in_node = plan_cluster(m, GPU, 4, 1, 4)
    pp2 = plan_cluster(m, GPU, 4, 2, 4, 2)
    dp2 = plan_cluster(m, GPU, 4, 2, 4, 1)
    across = plan_cluster(m, GPU, 2, 2, 4)
    tp8 = plan_cluster(m, GPU, 8, 1, 8)
    # TP 8 over two nodes of four: faster alone than TP 4 x DP 2 there, slower batched
    tp8_across = plan_cluster(m, GPU, 4, 2, 8)
    one_gpu = plan_cluster(m, GPU, 1, 1, 1)
    pp3 = plan_cluster(m, GPU, 4, 3, 4, 3)
    pp3_stages = stage_layers(m, 3)
    # The second exercise's network: five times worse than assumed in both numbers.
    worse = Fabric("network five times worse", 5 * INTER_NODE.latency, INTER_NODE.bandwidth / 5)
    worse_pp2 = plan_cluster(m, GPU, 4, 2, 4, 2, inter=worse)
    worse_across = plan_cluster(m, GPU, 2, 2, 4, inter=worse)
    tp4_only = plan_cluster(m, GPU, 4, 1, 4, batch=1)
    sixteen_pp = plan_cluster(m, GPU, 4, 2, 4, 2, batch=16)
    sixteen_dp = plan_cluster(m, GPU, 4, 2, 4, 1, batch=8)
    return {
        "pp2_batched_time": _ms(pp2.batched_token_time_s),
        "pp2_vs_dp2": format_ratio(pp2.tokens_per_s_total / dp2.tokens_per_s_total),
        "pp2_sequences_total": format_count(pp2.sequences_total),
        "single_sequence_tokens_per_s": format_count(tp4_only.tokens_per_s_total),
        "tp8_tokens_per_s": format_count(tp8.tokens_per_s_total),
        "tp8_copies": str(tp8.tp // m.num_kv_heads),
        "sixteen_pp_tokens_per_s": format_count(sixteen_pp.tokens_per_s_total),
        "sixteen_dp_tokens_per_s": format_count(sixteen_dp.tokens_per_s_total),
        "kv_heads": str(m.num_kv_heads),
        "query_heads": str(m.num_query_heads),
        "deltanet_key_heads": str(m.linear_num_key_heads),
        "deltanet_value_heads": str(m.linear_num_value_heads),
        "ffn_size": format_count(m.ffn_size or 0),
        "num_layers": str(m.num_layers),
        "pp3_stages": ", ".join(str(s) for s in pp3_stages[:-1]) + f" and {pp3_stages[-1]}",
        # at full context the stage with the most full-attention layers reads the most KV cache
        "pp3_pace_attention": f"{max(kind[0] for kind in stage_layer_kinds(m, 3))} of "
        f"{m.num_attention_layers}",
        "pp3_slower": format_count(100 * (pp3.stage_imbalance - 1), decimals=0) + " %",
        "pp3_sequences": format_count(pp3.sequences_per_replica),
        "pp3_tokens_per_s": format_count(pp3.tokens_per_s_total),
        "pp3_gpus": str(pp3.gpus),
        "pp3_tokens_per_gpu": format_count(pp3.tokens_per_s_total / pp3.gpus),
        "dp2_tokens_per_gpu": format_count(dp2.tokens_per_s_total / dp2.gpus),
        "inter_latency": format_seconds(INTER_NODE.latency, "us"),
        "inter_bandwidth": format_bytes(INTER_NODE.bandwidth, "GB") + "/s",
        "in_node_token_time": _ms(in_node.token_time_s),
        "across_token_time": _ms(across.token_time_s),
        "across_latency": _ms(across.step.latency_s),
        "pp_send": format_seconds(pp2.pp_send_s, "us", decimals=1),
        "pp_message": format_bytes(PP_VECTORS_PER_TOKEN * MODEL.hidden_vector_bytes, "KiB"),
        "pp2_token_time": _ms(pp2.token_time_s),
        "pp2_tokens_per_s": format_count(pp2.tokens_per_s_total),
        "pp2_weights": format_bytes(pp2.weights_per_gpu_bytes, "GB"),
        "pp2_sequences": format_count(pp2.sequences_per_replica),
        "dp2_tokens_per_s": format_count(dp2.tokens_per_s_total),
        "dp2_weights": format_bytes(dp2.weights_per_gpu_bytes, "GB"),
        "dp2_sequences": format_count(dp2.sequences_per_replica),
        "dp2_sequences_total": format_count(dp2.dp * dp2.sequences_per_replica),
        "tp8_token_time": _ms(tp8.token_time_s),
        "tp8_across_token_time": _ms(tp8_across.token_time_s),
        "tp8_across_compute": _ms(tp8_across.step.compute_s),
        "tp8_across_allreduces": _ms(tp8_across.step.communication_s),
        "tp8_across_tokens_per_s": format_count(tp8_across.tokens_per_s_total),
        "dp2_compute": _ms(dp2.step.compute_s),
        "dp2_allreduces": _ms(dp2.step.communication_s),
        "tp8_sequences": format_count(tp8.sequences_per_replica),
        "in_node_sequences": format_count(in_node.sequences_per_replica),
        "one_gpu_token_time": _ms(one_gpu.token_time_s),
        "worse_latency": format_seconds(worse.latency, "us"),
        "worse_bandwidth": format_bytes(worse.bandwidth, "GB") + "/s",
        "worse_pp2_token_time": _ms(worse_pp2.token_time_s),
        "worse_across_token_time": _ms(worse_across.token_time_s),
    }


#: What ``book/cluster.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, _cluster_numbers, Quote(experts_numbers, ("ds_alltoalls",)))
