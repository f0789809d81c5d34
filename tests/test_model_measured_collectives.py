"""The measured collectives: the extract reads as the tables give it."""

from lesson_lib.model.collectives import COLLECTIVES
from lesson_lib.model.measured_collectives import DEEPEP_LL_H100, NCCL_H100, SOURCE_URL


def test_nccl_records():
    """Four collectives at two sizes on 8 GPUs; 256 fp16 elements are 512 B."""
    assert {r.kind for r in NCCL_H100} == {
        "all_reduce",
        "reduce_scatter",
        "all_gather",
        "all_to_all",
    }
    assert all(r.kind in COLLECTIVES and r.gpus == 8 for r in NCCL_H100)
    small = {r.kind: r for r in NCCL_H100 if r.elements == 256}
    assert small["all_to_all"].message_bytes == 512
    assert small["all_to_all"].latency_s < small["all_reduce"].latency_s


def test_deepep_records():
    """DeepSeek-V3's shape; one layer at one token is 13.194 + 14.402 = 27.596 us."""
    one = DEEPEP_LL_H100[0]
    assert (one.hidden_size, one.experts_per_token, one.num_experts) == (7168, 8, 256)
    assert abs(one.layer_s - 27.596e-6) < 1e-12
    assert [r.tokens for r in DEEPEP_LL_H100] == [1, 8, 128]
    assert SOURCE_URL.startswith("https://pypi.org/project/aiconfigurator-core/")


def test_nccl_records_are_the_shipped_tables_rows():
    """The extract reads the shipped CSV's NCCL 2.29.2 rows, three runs (the wheel's nccl/2.27.3
    and nccl/2.29.2 folders, both 2.29.2 by their version column) merged into their median:
    512 B all-reduce on 8 H100s 15.46, 15.55, 15.59 us -> 1.555e-05 s; 128 MiB 0.5781,
    0.57997, 0.57874 ms -> 0.00057874 s; 512 B all-to-all 7.44, 7.76, 7.98 us -> 7.76e-06 s."""
    by = {(r.kind, r.elements): r.latency_s for r in NCCL_H100}
    assert by[("all_reduce", 256)] == 1.555e-05
    assert by[("all_reduce", 67_108_864)] == 0.00057874
    assert by[("all_to_all", 256)] == 7.76e-06
