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
    """The extract reads the shipped CSV: 512 B all-reduce on 8 H100s is 1.5505e-05 s there
    (the median of the table's two rows), 128 MiB 0.000579035 s."""
    by = {(r.kind, r.elements): r.latency_s for r in NCCL_H100}
    assert by[("all_reduce", 256)] == 1.5505e-05
    assert by[("all_reduce", 67_108_864)] == 0.000579035
    assert by[("all_to_all", 256)] == 7.87e-06
