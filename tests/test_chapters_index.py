"""The landing page's numbers: the worked example's, and three it quotes, checked by hand."""

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from lesson_lib.chapters.glue import chapter_numbers, glue_chapter
from lesson_lib.chapters.overview import worked_example_numbers


def test_the_landing_page_quotes_the_worked_example_and_both_answers():
    """PCIe 64 GB/s (specimen); 1 -> 4 slow GPUs 16.12 / 10.43 ms = 1.55x; 10.43 / 9.34 = 1.12x.

    One GPU reads 54 GB of weights at 3.35 TB/s: 16.12 ms a token; the four
    slow GPUs take 10.43 ms and the two fast ones 9.34 ms (the worked example).
    """
    values = chapter_numbers("index")
    worked = worked_example_numbers()
    assert {k: v for k, v in values.items() if k in worked} == worked
    assert values["pcie_bandwidth"] == "64 GB/s"
    assert values["speedup_1_to_4_slow"] == "1.55x"
    assert values["slow_4_vs_fast_2"] == "1.12x"
    assert values["box_4_tokens_per_s"] == "503" and values["box_2_tokens_per_s"] == "240"
    # per GPU: 503 / 4 = 125.75 against 240 / 2 = 120 (unrounded 125.8 / 119.9 = 1.05)
    assert (values["box_4_tokens_per_gpu"], values["box_2_tokens_per_gpu"]) == ("126", "120")
    assert values["per_gpu_4_vs_2"] == "1.05x"
    # 64 layers, an all-reduce after attention and after the FFN: 2 x 64 = 128
    assert (values["ar_num_layers"], values["ar_per_layer"]) == ("64", "2")


def test_the_landing_page_carries_the_caveat_from_measured_fabrics():
    """The landing page's sentence that four measured PCIe-class GPUs beat two fast ones holds.

    One GPU takes 16.12 ms a token. The measured PCIe-class four-GPU alphas, 11.7 to
    18.09 us, give 4.03 ms + 128 x 11.7 us = 5.53 ms and 4.03 + 128 x 0.01809 = 6.35 ms
    (6.34 from the unrounded fit): 16.12 / 6.34 = 2.54 and 16.12 / 5.53 = 2.91, both
    below two H100s' 8.06 ms + 128 x 6.333 us (fitted to NCCL 2.29.2's 6.18-6.46 us) = 8.87 ms.
    """
    values = chapter_numbers("index")
    measured = chapter_numbers("measured")  # where the page's link leads, with the lines
    assert measured["pcie_alpha_4_low"] == "11.7 us" and measured["pcie_alpha_4_high"] == "18.09 us"
    assert (measured["pcie_line_4_best"], measured["pcie_line_4_worst"]) == ("5.53 ms", "6.34 ms")
    assert (measured["pcie_speedup_1_to_4_low"], measured["pcie_speedup_1_to_4_high"]) == (
        "2.5x",
        "2.9x",
    )
    assert measured["reference_line_2"] == "8.87 ms"
    # The table's slow line leaves out the bytes, the figure's includes them:
    # 2 x 3/4 x 10 KiB x 128 / 64 GB/s = 0.031 ms more, 10.43 -> 10.46 ms.
    assert (values["line_4_slow"], values["line_bw_4_slow"]) == ("10.43 ms", "10.46 ms")


def test_glue_glues_every_number_hidden():
    """Each value of numbers() is glued once, under its name, with no visible output."""
    InteractiveShell.instance()
    with capture_output() as captured:
        names = glue_chapter("index")
    assert names == list(chapter_numbers("index"))
    assert [out.metadata["scrapbook"]["name"] for out in captured.outputs] == names
    assert all(not any(k.startswith("text/") for k in out.data) for out in captured.outputs)
