"""The algorithms page: ring, two-shot and one-shot side by side, and the engines' limits.

The arithmetic and the sources are :mod:`lesson_lib.model.algorithms`'s.
"""

from __future__ import annotations

from lesson_lib.chapters import latency, overview
from lesson_lib.chapters.glue import GlueTable, Quote
from lesson_lib.model._validate import require_int, require_number
from lesson_lib.model.algorithms import (
    VLLM_CUSTOM_BUFFER_BYTES,
    VLLM_HOPPER_SYMM_MEM_CUSTOM_LIMITS,
    VLLM_ONE_STAGE_LIMITS,
    VLLM_PR_2192,
    cuda_graph_fabric,
    tie_payload,
)
from lesson_lib.model.collectives import (
    ALGORITHMS,
    MAX_RANKS,
    allreduce_factor,
    allreduce_latency,
    allreduce_steps,
    allreduce_time,
)
from lesson_lib.model.latency import allreduce_anatomy
from lesson_lib.model.specimen import CUDA_GRAPH_LAUNCH_SAVING, FAST, FAST_RING, GPU, MODEL, SLOW
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import format_bytes, format_count, format_ratio, format_seconds


def algorithm_rows(
    payload_bytes: float, n: int, fabric: Fabric = FAST_RING
) -> list[tuple[str, str, str, str, str]]:
    """One row per algorithm: steps, bytes per rank, latency and total time of one all-reduce.

    Parameters
    ----------
    payload_bytes : float
        The vector summed, bytes (>= 0).
    n : int
        Ranks, from 2 to 4096 (``MAX_RANKS``).
    fabric : Fabric, default FAST_RING
        The wire (the per-hop fit, so that steps cost something).

    Returns
    -------
    list of tuple of str
        ``(algorithm, steps, bytes per rank, latency, total)``, formatted.
    """
    payload_bytes = require_number("payload_bytes", payload_bytes, unit="bytes")
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    return [
        (
            algo.description,
            str(allreduce_steps(n, name)),
            format_bytes(allreduce_factor(n, name) * payload_bytes, "KiB", decimals=1),
            format_seconds(allreduce_latency(n, fabric, name), "us", decimals=1),
            format_seconds(allreduce_time(payload_bytes, n, fabric, name), "us", decimals=1),
        )
        for name, algo in ALGORITHMS.items()
    ]


def algorithm_numbers() -> dict[str, str]:
    """Numbers the algorithms chapter glues.

    Returns
    -------
    dict of str to str
    """
    m = MODEL

    def kib(nbytes: float) -> str:
        return format_bytes(nbytes, "KiB", decimals=0)

    out: dict[str, str] = {}
    for name in ALGORITHMS:
        out[f"alg_{name}_latency_8"] = format_seconds(
            allreduce_latency(8, FAST_RING, name), "us", decimals=1
        )
        two = decode_step(m, GPU, FAST_RING, 2, algorithm=name, include_bandwidth=False)
        four = decode_step(m, GPU, FAST_RING, 4, algorithm=name, include_bandwidth=False)
        out[f"alg_speedup_{name}_2_to_4"] = format_ratio(speedup(two, four))
    for n in (4, 8):
        out[f"alg_one_shot_vs_ring_{n}"] = kib(tie_payload(FAST_RING, n, "one_shot", "ring"))
        out[f"alg_one_vs_two_shot_{n}"] = kib(tie_payload(FAST_RING, n, "one_shot", "two_shot"))
    out["alg_vllm_limit_4"] = kib(VLLM_ONE_STAGE_LIMITS[0][1])
    out["alg_vllm_limit_8"] = kib(VLLM_ONE_STAGE_LIMITS[1][1])
    out["alg_vllm_buffer"] = format_bytes(VLLM_CUSTOM_BUFFER_BYTES, "MiB", decimals=0)
    out["alg_vllm_symm_limit_8"] = kib(VLLM_HOPPER_SYMM_MEM_CUSTOM_LIMITS[8])
    pr = VLLM_PR_2192
    out["alg_pr2192_batch"] = format_count(pr.batch)
    out["alg_pr2192_tokens"] = format_count(pr.prompt_tokens)
    out["alg_pr2192_output"] = format_count(pr.output_tokens)
    out["alg_pr2192_before"] = format_seconds(pr.before_s, "s")
    out["alg_pr2192_after"] = format_seconds(pr.after_s, "s")
    out["alg_pr2192_saved"] = format_count(100 * pr.time_saved, decimals=0) + " %"
    out["alg_hop"] = format_seconds(FAST_RING.hop_latency, "us", decimals=3)
    out["alg_base"] = format_seconds(FAST_RING.latency, "us", decimals=2)
    # CUDA graphs: the launch overhead leaves alpha on every line of the lesson.
    out["graph_saving"] = format_seconds(CUDA_GRAPH_LAUNCH_SAVING, "us", decimals=0)
    lines = {}
    for label, n, fabric in (("2_fast", 2, FAST), ("4_fast", 4, FAST), ("4_slow", 4, SLOW)):
        lines[label] = decode_step(
            m, GPU, cuda_graph_fabric(fabric), n, include_bandwidth=False
        ).total_s
        out[f"graph_line_{label}"] = format_seconds(lines[label], "ms")
    out["graph_speedup_2_to_4"] = format_ratio(lines["2_fast"] / lines["4_fast"])
    out["graph_fast_latency"] = format_seconds(cuda_graph_fabric(FAST).latency, "us", decimals=0)
    out["graph_slow_latency"] = format_seconds(cuda_graph_fabric(SLOW).latency, "us", decimals=0)
    return out


def anatomy_numbers() -> dict[str, str]:
    """The parts of one small 2-GPU all-reduce on the fast fabric, in us (the anatomy figure's).

    Returns
    -------
    dict of str to str
    """
    parts = allreduce_anatomy(MODEL.hidden_vector_bytes)
    out = {
        f"anatomy_{key}": format_seconds(part.seconds, "us", decimals=2)
        for key, part in zip(("launch", "fixed", "hops", "bytes"), parts, strict=True)
    }
    return out | {"anatomy_total": format_seconds(sum(p.seconds for p in parts), "us", decimals=2)}


#: What ``book/algorithms.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(
    overview.WORKED,
    algorithm_numbers,
    anatomy_numbers,
    Quote(latency.scaling_numbers, ("ring_peak_n", "ring_peak_speedup")),
)
