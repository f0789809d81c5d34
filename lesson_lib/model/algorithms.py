"""The all-reduces decode really uses: ties between algorithms, engines' limits, CUDA graphs.

The engines' custom all-reduce limits come with their sources (:data:`SOURCES`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lesson_lib.model._validate import require_instance, require_int, require_number
from lesson_lib.model.collectives import MAX_RANKS, allreduce_factor, allreduce_latency
from lesson_lib.model.specimen import CUDA_GRAPH_LAUNCH_SAVING
from lesson_lib.model.specs import Fabric
from lesson_lib.model.units import KiB, MiB

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
    """One before/after timing a pull request reports for a whole benchmark run."""

    #: The setup, as the source gives it.
    what: str
    tp: int
    #: Requests in the benchmark's batch.
    batch: int
    #: Tokens in per request.
    prompt_tokens: int
    #: Tokens generated per request.
    output_tokens: int
    #: Reported latency of the whole run before the change, seconds.
    before_s: float
    #: The same after the change, seconds.
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
        The wire; with no per-hop latency all algorithms share one latency, tied at 0 bytes.
    n : int
        Ranks, from 2 to 4096 (``MAX_RANKS``).
    first, second : str
        Two keys of :data:`~lesson_lib.model.collectives.ALGORITHMS` that send
        different bytes per rank at ``n`` (else they never tie, or always do).

    Returns
    -------
    float
        Payload bytes (>= 0): 505 KiB for one-shot against two-shot on 4 GPUs of ``FAST_RING``.
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


def cuda_graph_fabric(fabric: Fabric, saving_s: float = CUDA_GRAPH_LAUNCH_SAVING) -> Fabric:
    """``fabric`` with its fixed latency lowered by the launch overhead CUDA graphs remove.

    Parameters
    ----------
    fabric : Fabric
    saving_s : float, default CUDA_GRAPH_LAUNCH_SAVING
        Seconds saved per all-reduce, from 0 to ``fabric.latency``.

    Returns
    -------
    Fabric
        A copy named "... with CUDA graphs".
    """
    require_instance("fabric", fabric, Fabric)
    saving_s = require_number("saving_s", saving_s, maximum=fabric.latency, unit="s")
    name = f"{fabric.name} with CUDA graphs"
    return replace(fabric, name=name, latency=fabric.latency - saving_s)
