"""The all-reduces decode really uses: ring, two-shot and one-shot side by side.

The ring of :mod:`lesson_lib.chapters.payloads` is the textbook all-reduce and what
NCCL's bandwidth figures describe. For decode's small messages on GPUs that
all reach each other over NVLink or NVSwitch, serving engines run their own
kernels: vLLM's custom all-reduce picks a one-stage (one-shot) kernel for two
GPUs and for small messages on up to eight fully connected GPUs, and a
two-stage (two-shot) kernel otherwise, and switches itself off on more than
two GPUs that are not fully connected; TensorRT-LLM offers ``ONESHOT``,
``TWOSHOT``, ``MIN_LATENCY``, ``LOWPRECISION``, ``MNNVL`` and
``NCCL_SYMMETRIC`` strategies beside ``NCCL``. This module prices ring,
two-shot and one-shot in the same alpha-beta-per-hop model
(:mod:`lesson_lib.model.collectives`), holds the engines' published limits
with their sources, and gathers the numbers the chapter glues.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    NVLINK_BANDWIDTH,
    SLOW,
)
from lesson_lib.model.specs import Fabric
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import (
    KiB,
    MiB,
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)

#: vLLM's rule for its one-stage kernel on fully connected GPUs, as (most ranks, messages below)
#: (``csrc/custom_all_reduce.cuh``, ``REDUCE_CASE``).
VLLM_ONE_STAGE_LIMITS: tuple[tuple[int, int], ...] = ((4, 512 * 1024), (8, 256 * 1024))
#: The custom all-reduce's buffer, beyond which messages go elsewhere
#: (``CustomAllreduce(max_size=8192 * 1024)`` in ``custom_all_reduce.py``).
VLLM_CUSTOM_BUFFER_BYTES: float = 8 * MiB
#: On Hopper (compute capability 9.0) with PyTorch symmetric memory enabled, the
#: custom kernel is held to these sizes per GPU count and PyTorch's
#: symmetric-memory all-reduce takes larger messages (``CUSTOM_ALL_REDUCE_MAX_SIZES``
#: in ``all_reduce_utils.py``; the order of choice in ``cuda_communicator.py``). The
#: buffer still caps the custom kernel: below 8 MiB nothing changes on 2 or 4 GPUs.
VLLM_HOPPER_SYMM_MEM_CUSTOM_LIMITS: dict[int, float] = {
    2: 64 * MiB,
    4: 32 * MiB,
    6: 512 * KiB,
    8: 256 * KiB,
}


@dataclass(frozen=True)
class PublishedEndToEnd:
    """One before/after timing a pull request reports for a whole benchmark run.

    Attributes
    ----------
    what : str
        The setup, as the source gives it.
    tp : int
        Tensor-parallel GPUs.
    batch : int
        Requests in the benchmark's batch.
    prompt_tokens : int
        Tokens in per request.
    output_tokens : int
        Tokens generated per request.
    before_s : float
        Reported latency of the whole run before the change, seconds.
    after_s : float
        Reported latency of the whole run after the change, seconds.
    source : str
        URL.
    """

    what: str
    tp: int
    batch: int
    prompt_tokens: int
    output_tokens: int
    before_s: float
    after_s: float
    source: str

    @property
    def time_saved(self) -> float:
        """Share of the run's time saved, ``1 - after / before``."""
        return 1 - self.after_s / self.before_s


#: vLLM PR 2192's first latency row, Llama 70B on four A100-80G, batch 64,
#: 256 tokens in and 256 out, ``benchmark_latency.py``, NCCL before, custom all-reduce after.
VLLM_PR_2192 = PublishedEndToEnd(
    "Llama 70B on 4x A100-80G",
    tp=4,
    batch=64,
    prompt_tokens=256,
    output_tokens=256,
    before_s=16.37,
    after_s=14.57,
    source="https://github.com/vllm-project/vllm/pull/2192",
)

_VLLM = "https://github.com/vllm-project/vllm/blob/"
_VLLM_COMM = "00d618aab60448acdf3fac3e9c4e2e22d0c6c753/vllm/distributed/device_communicators/"

#: Where each claim about real systems comes from (source files at the commit read).
SOURCES: dict[str, str] = {
    "vllm_kernels": _VLLM + "c9eabec7d862b69d943f516580c883c20bea5a0e/csrc/custom_all_reduce.cuh",
    "vllm_custom_ar": _VLLM + _VLLM_COMM + "custom_all_reduce.py",
    "vllm_ar_utils": _VLLM + _VLLM_COMM + "all_reduce_utils.py",
    "vllm_cuda_comm": _VLLM + _VLLM_COMM + "cuda_communicator.py",
    "vllm_pr_2192": VLLM_PR_2192.source,
    "trtllm_strategies": (
        "https://github.com/NVIDIA/TensorRT-LLM/blob/10a94126384f89d2e943336bd98de1325389d56b/"
        "cpp/tensorrt_llm/kernels/customAllReduceKernels.h"
    ),
    "trtllm_auto": (
        "https://github.com/NVIDIA/TensorRT-LLM/blob/005b299bd30992a58607c7628bb2009264970f37/"
        "cpp/tensorrt_llm/common/customAllReduceUtils.h"
    ),
    "nccl_tests_readme": (
        "https://github.com/NVIDIA/nccl-tests/blob/01d6761451d62e5b968bd8806c92898928e069ec/"
        "README.md"
    ),
    "nvls_busbw": "https://github.com/NVIDIA/nccl-tests/issues/366",
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
    for n in (4, 8):
        out[f"alg_one_shot_vs_ring_{n}"] = format_bytes(
            tie_payload(FAST_RING, n, "one_shot", "ring"), "KiB", decimals=0
        )
        out[f"alg_one_vs_two_shot_{n}"] = format_bytes(
            tie_payload(FAST_RING, n, "one_shot", "two_shot"), "KiB", decimals=0
        )
    out["alg_vllm_limit_4"] = format_bytes(VLLM_ONE_STAGE_LIMITS[0][1], "KiB", decimals=0)
    out["alg_vllm_limit_8"] = format_bytes(VLLM_ONE_STAGE_LIMITS[1][1], "KiB", decimals=0)
    out["alg_vllm_buffer"] = format_bytes(VLLM_CUSTOM_BUFFER_BYTES, "MiB", decimals=0)
    out["alg_nvlink_bandwidth"] = format_rate(NVLINK_BANDWIDTH, "GB")
    out["alg_vllm_symm_limit_8"] = format_bytes(
        VLLM_HOPPER_SYMM_MEM_CUSTOM_LIMITS[8], "KiB", decimals=0
    )
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
