"""The summary's numbers: the worked example's, and three it quotes from other chapters."""

from lesson_lib.chapters import batching
from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.chapters.overview import worked_example_numbers


def test_the_summary_quotes_the_ring_rate_and_the_kv_heads():
    """Ring of 4: 1.875 MiB a token x 50 tokens/s = 98,304,000 B/s = 0.0983 GB/s; 4 KV heads.

    The 50 tokens/s is the payloads chapter's stated rate, the four KV heads
    the specimen's; the batch crossover is the batching chapter's own value,
    the all-to-alls the experts chapter's.
    """
    values = chapter_numbers("summary")
    worked = worked_example_numbers()
    assert {k: v for k, v in values.items() if k in worked} == worked
    assert values["rate_4_mb"] == "98.3 MB/s"
    assert values["sizing_kv_heads"] == "4"
    assert values["batch_crossover_4"] == batching.batching_numbers()["batch_crossover_4"]
    # the whole box: four slow GPUs deliver more tokens per second than two fast ones
    assert int(values["box_4_tokens_per_s"]) > int(values["box_2_tokens_per_s"])
    assert values["ds_alltoalls"] == "116"  # DeepSeek-V3: 2 x (61 - 3) MoE layers
    # Three PCIe-class systems measured, alphas 11.7-18.09 us, all below the
    # 41.5 us tie: four slow GPUs win on every one.
    assert (values["pcie_alpha_4_low"], values["pcie_alpha_4_high"]) == ("11.7 us", "18.09 us")
    assert float(values["pcie_alpha_4_high"].split()[0]) < float(
        values["break_even_4_vs_2"].split()[0]
    )
