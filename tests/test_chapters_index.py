"""The landing page's numbers: the worked example's, and three it quotes, checked by hand."""

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from lesson_lib.chapters.glue import chapter_numbers, glue_chapter


def test_the_landing_page_quotes_the_worked_example_and_both_answers():
    """PCIe 64 GB/s (specimen); 1 -> 4 slow GPUs 16.12 / 10.43 ms = 1.55x; 10.43 / 9.34 = 1.12x.

    One GPU reads 54 GB of weights at 3.35 TB/s: 16.12 ms a token; the four
    slow GPUs take 10.43 ms and the two fast ones 9.34 ms (the worked example).
    """
    values = chapter_numbers("index")
    assert {k: v for k, v in values.items() if k in chapter_numbers("overview")} == chapter_numbers(
        "overview"
    )
    assert values["pcie_bandwidth"] == "64 GB/s"
    assert values["speedup_1_to_4_slow"] == "1.55x"
    assert values["slow_4_vs_fast_2"] == "1.12x"
    # the tie: 128 x alpha + 4.03 ms = 9.34 ms, alpha = (9.34 - 4.03) ms / 128 = 41.5 us
    assert values["break_even_4_vs_2"] == "41.5 us"
    assert values["box_4_tokens_per_s"] == "503" and values["box_2_tokens_per_s"] == "240"


def test_the_landing_page_carries_the_caveat_from_measured_fabrics():
    """One published PCIe figure nearly ties; three measured PCIe-class systems break the claim.

    At the published 43.47 us on 8 PCIe GPUs, four GPUs take
    4.03 ms + 128 x 43.47 us = 4.03 + 5.56 = 9.59 ms against two fast ones'
    9.34 ms: 9.59 / 9.34 = 1.027, "1.03x" slower. The measured PCIe-class
    systems' four-GPU alphas, 11.7 to 18.09 us, are all below the 41.5 us tie
    (the worst line is 4.03 + 128 x 0.01809 = 6.35 ms < 9.34 ms), so the
    claim that four slow GPUs lose holds on none of the three.
    """
    values = chapter_numbers("index")
    assert values["pub_pcie_8"] == "43.47 us" and values["pub_pcie_ranks"] == "8"
    assert values["pub_pcie_vs_fast_2"] == "1.03x"
    assert values["pcie_alpha_4_low"] == "11.7 us" and values["pcie_alpha_4_high"] == "18.09 us"
    assert values["claim_four_slow_lose"] == "holds on 0 of 3"
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
