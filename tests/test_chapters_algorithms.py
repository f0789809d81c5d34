"""Ring, two-shot and one-shot compared: tie payloads, rows, CUDA graphs, glued numbers."""

from numpy.testing import assert_allclose

from lesson_lib.chapters.algorithms import algorithm_numbers, algorithm_rows
from lesson_lib.model.algorithms import VLLM_PR_2192
from lesson_lib.model.specimen import SLOW


def test_rows_at_eight_gpus():
    """10 KiB at N = 8: steps 14 / 2 / 1, bytes 17.5 / 17.5 / 70 KiB, ring latency 30.7 us."""
    rows = algorithm_rows(10 * 1024, 8)
    assert [r[1] for r in rows] == ["14", "2", "1"]
    assert [r[2] for r in rows] == ["17.5 KiB", "17.5 KiB", "70 KiB"]
    assert rows[0][3] == "30.7 us" and rows[1][3] == "10 us" and rows[2][3] == "8.3 us"


def test_numbers_by_hand():
    """Glued values: ring 2 -> 4 on the per-hop fit 1.51x; one-shot 1.79x; graph lines."""
    v = algorithm_numbers()
    assert v["alg_speedup_ring_2_to_4"] == "1.51x"
    assert v["alg_speedup_two_shot_2_to_4"] == "1.76x"  # two steps: the lesson's fixed 10 us
    one = (27e9 / 3.35e12 + 128 * 8.275e-6) / (13.5e9 / 3.35e12 + 128 * 8.275e-6)
    assert v["alg_speedup_one_shot_2_to_4"] == f"{one:.2f}x"
    # CUDA graphs: alpha 10 -> 7 us and 50 -> 47 us on the three lines.
    assert v["graph_line_2_fast"] == f"{(27e9 / 3.35e12 + 128 * 7e-6) * 1e3:.2f} ms"
    assert v["graph_line_4_slow"] == f"{(13.5e9 / 3.35e12 + 128 * 47e-6) * 1e3:.2f} ms"
    assert v["alg_vllm_limit_4"] == "512 KiB" and v["alg_one_vs_two_shot_4"] == "505 KiB"
    # One-shot against the ring, 6.55 us + 1.725 us a step at 450 GB/s. On 4 GPUs
    # the ring's 6 steps cost 16.9 us, one-shot's one 8.275 us: 8.625 us saved
    # for 3 - 1.5 = 1.5 extra payloads, 8.625e-6 x 450e9 / 1.5 = 2,587,500 B =
    # 2,527 KiB. On 8: (30.7 - 8.275) us x 450e9 / (7 - 1.75) = 1,922,143 B = 1,877 KiB.
    assert v["alg_one_shot_vs_ring_4"] == "2,527 KiB"
    assert v["alg_one_shot_vs_ring_8"] == "1,877 KiB"
    assert_allclose(SLOW.latency, 50e-6)  # the graph line above assumes the slow fabric


def test_engine_limits_and_pr_2192_by_hand():
    """Read from the sources: 8192 x 1024 bytes of buffer, Hopper's 8-GPU cap MiB // 4.

    vLLM PR 2192's 70B row: 16.37 s -> 14.57 s, 1 - 14.57 / 16.37 = 0.110, for a
    batch of 64 requests of 256 tokens in and 256 out.
    """
    v = algorithm_numbers()
    assert v["alg_vllm_buffer"] == "8 MiB"
    assert v["alg_vllm_symm_limit_8"] == "256 KiB"
    assert v["alg_pr2192_batch"] == "64" and v["alg_pr2192_tokens"] == "256"
    assert v["alg_pr2192_before"] == "16.37 s" and v["alg_pr2192_after"] == "14.57 s"
    assert v["alg_pr2192_saved"] == "11 %"
    assert_allclose(VLLM_PR_2192.time_saved, 1.80 / 16.37)


def test_anatomy_numbers_by_hand():
    """3 us assumed launch + 3.55 + 3.45 us fitted + 10,240 B / 450e9 B/s = 0.02 us: 10.02 us."""
    from lesson_lib.chapters.algorithms import anatomy_numbers

    v = anatomy_numbers()
    assert v["anatomy_launch"] == "3 us"
    assert v["anatomy_bytes"] == f"{10_240 / 450e9 * 1e6:.2f} us" == "0.02 us"
    assert v["anatomy_total"] == "10.02 us"
