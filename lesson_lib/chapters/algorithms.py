"""The all-reduces decode really uses: ring, two-shot and one-shot side by side.

The ring of :mod:`lesson_lib.chapters.payloads` is the textbook all-reduce and what
NCCL's bandwidth figures describe. For decode's small messages, serving
engines run their own kernels over NVLink: vLLM's custom all-reduce picks a
one-stage (one-shot) kernel for two GPUs and for small messages on up to
eight fully connected GPUs, and a two-stage (two-shot) kernel otherwise;
TensorRT-LLM offers ``ONESHOT`` and ``TWOSHOT`` strategies beside ``NCCL``.
This module prices the three in the same alpha-beta-per-hop model
(:mod:`lesson_lib.model.collectives`) and gathers the numbers the chapter glues.
"""

from __future__ import annotations

from lesson_lib.chapters import latency, overview
from lesson_lib.chapters.glue import glue_numbers
from lesson_lib.model._validate import require_instance, require_int, require_number
from lesson_lib.model.collectives import (
    ALGORITHMS,
    MAX_RANKS,
    allreduce_factor,
    allreduce_latency,
    allreduce_steps,
    allreduce_time,
)
from lesson_lib.model.specimen import (
    CUDA_GRAPH_LAUNCH_SAVING,
    FAST,
    FAST_RING,
    GPU,
    MODEL,
    SLOW,
)
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import format_bytes, format_ratio, format_seconds

#: vLLM's rule for its one-stage kernel on fully connected GPUs, as (most ranks, messages below).
VLLM_ONE_STAGE_LIMITS: tuple[tuple[int, int], ...] = ((4, 512 * 1024), (8, 256 * 1024))

#: Where each claim about real systems comes from.
SOURCES: dict[str, str] = {
    "vllm_kernels": "https://github.com/vllm-project/vllm/blob/main/csrc/custom_all_reduce.cuh",
    "vllm_custom_ar": (
        "https://github.com/vllm-project/vllm/blob/main/vllm/distributed/"
        "device_communicators/custom_all_reduce.py"
    ),
    "vllm_pr_2192": "https://github.com/vllm-project/vllm/pull/2192",
    "trtllm_strategies": (
        "https://github.com/NVIDIA/TensorRT-LLM/blob/main/cpp/tensorrt_llm/kernels/"
        "customAllReduceKernels.h"
    ),
    "nvls_release": "https://github.com/NVIDIA/nccl/commit/5d3ab08b69754cb863ab1bf6e3fb6f7612bb725b",
    "nvls_bandwidth": "https://github.com/NVIDIA/nccl-tests/issues/212",
    "tree_is_chain": "https://github.com/NVIDIA/nccl/issues/919",
    "cuda_graph_nccl": "https://github.com/NVIDIA/nccl/issues/1984",
    "cuda_graph_vllm": "https://github.com/vllm-project/vllm/pull/26",
    "ring_measurement": "https://github.com/NVIDIA/nccl-tests/issues/123",
}


def tie_payload(fabric: Fabric, n: int, first: str, second: str) -> float:
    """Payload at which two all-reduce algorithms take the same time over ``n`` ranks.

    The one with fewer steps wins below it, the one that sends fewer bytes
    above it: ``latency difference x bandwidth / payload-factor difference``.

    Parameters
    ----------
    fabric : Fabric
        The wire; with no per-hop latency every algorithm has the same
        latency and the tie is at 0 bytes.
    n : int
        Ranks, from 2 to 4096 (``MAX_RANKS``).
    first, second : str
        Two keys of :data:`~lesson_lib.model.collectives.ALGORITHMS`.

    Returns
    -------
    float
        Payload bytes (>= 0).

    Raises
    ------
    ValueError
        If the two algorithms send the same bytes per rank at ``n`` (they
        never tie, or always do).

    Examples
    --------
    >>> round(tie_payload(FAST_RING, 4, "one_shot", "two_shot") / 1024)
    505
    """
    n = require_int("n", n, minimum=2, maximum=MAX_RANKS)
    extra = allreduce_factor(n, first) - allreduce_factor(n, second)
    if extra == 0:
        raise ValueError(
            f"{first!r} and {second!r} send the same bytes per rank at n = {n}: "
            "they never cross; compare them by latency alone"
        )
    saved = allreduce_latency(n, fabric, second) - allreduce_latency(n, fabric, first)
    return max(saved * fabric.bandwidth / extra, 0.0)


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
    rows = []
    for name, algo in ALGORITHMS.items():
        rows.append(
            (
                algo.description,
                str(allreduce_steps(n, name)),
                format_bytes(allreduce_factor(n, name) * payload_bytes, "KiB", decimals=1),
                format_seconds(allreduce_latency(n, fabric, name), "us", decimals=1),
                format_seconds(allreduce_time(payload_bytes, n, fabric, name), "us", decimals=1),
            )
        )
    return rows


def cuda_graph_fabric(fabric: Fabric, saving_s: float = CUDA_GRAPH_LAUNCH_SAVING) -> Fabric:
    """``fabric`` with its fixed latency lowered by the launch overhead CUDA graphs remove.

    Parameters
    ----------
    fabric : Fabric
        The wire.
    saving_s : float, default CUDA_GRAPH_LAUNCH_SAVING
        Seconds saved per all-reduce, from 0 to ``fabric.latency``.

    Returns
    -------
    Fabric
        A copy named "... with CUDA graphs".
    """
    require_instance("fabric", fabric, Fabric)
    saving_s = require_number("saving_s", saving_s, maximum=fabric.latency, unit="s")
    return Fabric(
        f"{fabric.name} with CUDA graphs",
        fabric.latency - saving_s,
        fabric.bandwidth,
        fabric.hop_latency,
    )


def algorithm_numbers() -> dict[str, str]:
    """Numbers the algorithms chapter glues.

    Returns
    -------
    dict of str to str
        For example ``"alg_ring_latency_8": "30.7 us"`` and
        ``"alg_speedup_one_shot_2_to_4": "1.79x"``.
    """
    m = MODEL
    out: dict[str, str] = {}
    for name in ALGORITHMS:
        out[f"alg_{name}_latency_8"] = format_seconds(
            allreduce_latency(8, FAST_RING, name), "us", decimals=1
        )
        two = decode_step(m, GPU, FAST_RING, 2, algorithm=name, include_bandwidth=False)
        four = decode_step(m, GPU, FAST_RING, 4, algorithm=name, include_bandwidth=False)
        out[f"alg_speedup_{name}_2_to_4"] = format_ratio(speedup(two, four))
    out["alg_one_shot_vs_ring_8"] = format_bytes(
        tie_payload(FAST_RING, 8, "one_shot", "ring"), "KiB", decimals=0
    )
    for n in (4, 8):
        out[f"alg_one_vs_two_shot_{n}"] = format_bytes(
            tie_payload(FAST_RING, n, "one_shot", "two_shot"), "KiB", decimals=0
        )
    out["alg_vllm_limit_4"] = format_bytes(VLLM_ONE_STAGE_LIMITS[0][1], "KiB", decimals=0)
    out["alg_vllm_limit_8"] = format_bytes(VLLM_ONE_STAGE_LIMITS[1][1], "KiB", decimals=0)
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


def numbers() -> dict[str, str]:
    """Every value the algorithms page glues: the worked example's numbers, the chapter's own and the ring's peak from the latency chapter.

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return {
        **overview.numbers(),
        **algorithm_numbers(),
        **{k: latency.scaling_numbers()[k] for k in ("ring_peak_n", "ring_peak_speedup")},
    }


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/algorithms.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
