"""The problem set's one list: which modules hold its problems, in order.

Each module named here defines ``PROBLEM``, a :class:`~lesson_lib.coursework.problems.bank.Problem`.
Adding a problem is one new module beside these and one line in :data:`MODULES`.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module

from lesson_lib.coursework.problems.bank import Problem

#: Problem modules of ``lesson_lib.coursework.problems``, in the order of the set.
MODULES: tuple[str, ...] = (
    "q01_weights",
    "q02_kv_cache",
    "q03_ring_bytes",
    "q04_decode_latency_bound",
    "q05_decode_time",
    "q06_speedup",
    "q07_crossover",
    "q08_prefill_wire",
    "q09_tp_inside_node",
    "q10_sequences_fit",
    "q11_latency_budget",
    "q12_cluster_layout",
    "q13_one_shot_vs_ring",
    "q14_batch_crossover",
    "q15_batched_throughput",
    "q16_cuda_graphs",
    "q17_alltoall_bytes",
    "q18_alltoall_latency",
    "q19_measured_system",
    "q20_kv_handoff_nic",
    "q21_kv_handoff_per_gpu",
    "q22_dcp_sequences",
    "q23_jitter_cost",
    "q24_token_price",
    "q25_fp8_latency_share",
)


def load(modules: Iterable[str] = MODULES) -> dict[str, Problem]:
    """Import each problem module and key its ``PROBLEM`` by id.

    Parameters
    ----------
    modules : iterable of str, default :data:`MODULES`

    Returns
    -------
    dict of str to Problem
        In the order given.

    Raises
    ------
    ValueError
        If two modules define the same problem id.
    """
    problems: dict[str, Problem] = {}
    for name in modules:
        problem = import_module(f"{__package__}.{name}").PROBLEM
        if problem.qid in problems:
            raise ValueError(f"problem id {problem.qid!r} defined twice (again in {name})")
        problems[problem.qid] = problem
    return problems


#: Every problem of the set by id (``"q1"`` ..), in order.
PROBLEMS: dict[str, Problem] = load()
