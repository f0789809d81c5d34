"""Measured collectives beside the all-reduce: NCCL on one H100 node and DeepEP's all-to-all.

Source: NVIDIA's aiconfigurator-core 0.12.0 on PyPI (Apache-2.0), ``systems/data/h100_sxm/comm/``:
NCCL collectives on 8 H100 80GB HBM3 (the rows of ``nccl/2.27.3/`` and ``nccl/2.29.2/``, NCCL 2.29.2
by their own version column; read from the shipped copy, :mod:`lesson_lib.measured`) and
``sglang/0.5.12/wideep_deepep_ll_perf.parquet`` (DeepEP low-latency dispatch and combine for
DeepSeek-V3's shape, hidden 7168, top-8 of 256; typed here). How each time was taken is not said.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.model.units import US

#: The package the records come from.
SOURCE_URL: str = "https://pypi.org/project/aiconfigurator-core/0.12.0/"
#: The NCCL version the H100 rows name in their own version column.
NCCL_VERSION: str = "2.29.2"
#: Bytes of one fp16 element, the NCCL table's ``half`` rows.
FP16_BYTES: int = 2


@dataclass(frozen=True)
class MeasuredCollective:
    """One NCCL collective as the table reports it."""

    #: A key of :data:`lesson_lib.model.collectives.COLLECTIVES`.
    kind: str
    gpus: int
    #: Message size as the table gives it, fp16 elements.
    elements: int
    #: Reported time, seconds.
    latency_s: float

    @property
    def message_bytes(self) -> int:
        """The message in bytes, two per fp16 element."""
        return self.elements * FP16_BYTES


def _nccl_h100() -> tuple[MeasuredCollective, ...]:
    """NCCL 2.29.2 on 8 H100 SXM GPUs from the shipped tables (:mod:`lesson_lib.measured`)."""
    from lesson_lib.measured import measured_table

    records, runtime = [], f"nccl {NCCL_VERSION}"
    for elements in (256, 67_108_864):
        for kind in ("all_reduce", "reduce_scatter", "all_gather", "all_to_all"):
            op = "alltoall" if kind == "all_to_all" else kind  # as the shipped tables name it
            _, sizes, times = measured_table("h100_sxm", 8, "nccl", op, runtime=runtime)
            (index,) = [i for i, m in enumerate(sizes) if m == elements * FP16_BYTES]
            records.append(MeasuredCollective(kind, 8, elements, float(times[index])))
    return tuple(records)


#: NCCL 2.29.2 on 8 H100 SXM GPUs, the smallest and a large message of each collective,
#: read from the lesson's one copy of the measured tables (``lesson_lib/data/measured``).
NCCL_H100: tuple[MeasuredCollective, ...] = _nccl_h100()


@dataclass(frozen=True)
class MeasuredDispatch:
    """DeepEP's low-latency dispatch and combine for one number of tokens per rank."""

    #: Tokens each rank dispatches.
    tokens: int
    #: Width of each dispatched vector.
    hidden_size: int
    #: Top-k.
    experts_per_token: int
    #: Routed experts.
    num_experts: int
    #: Reported dispatch time, seconds (the kernels send FP8).
    dispatch_s: float
    #: Reported combine time, seconds (bf16).
    combine_s: float

    @property
    def layer_s(self) -> float:
        """One MoE layer's dispatch plus combine, seconds."""
        return self.dispatch_s + self.combine_s


#: DeepEP low-latency kernels (SGLang 0.5.12), one H100 node, DeepSeek-V3's shape.
DEEPEP_LL_H100: tuple[MeasuredDispatch, ...] = (
    MeasuredDispatch(1, 7168, 8, 256, 13.194 * US, 14.402 * US),
    MeasuredDispatch(8, 7168, 8, 256, 14.786 * US, 16.487 * US),
    MeasuredDispatch(128, 7168, 8, 256, 36.721 * US, 66.981 * US),
)
