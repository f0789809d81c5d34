"""The measured chapter's lines and glued values, checked against the tables by hand."""

import pytest
from numpy.testing import assert_allclose

from lesson_lib.chapters.measured import (
    LINES_HEADER,
    _measured_lines,
    claims_table,
    measured_lines_table,
    measured_numbers,
)
from lesson_lib.measured import measured_fabric


def test_l40s_line_is_the_lessons_compute_plus_128_alphas():
    """Four GPUs: 54e9 / 4 / 3.35e12 = 4.0299 ms + 128 x the fitted 4-GPU alpha."""
    row = next(r for r in _measured_lines() if r.system == "l40s")
    alpha = measured_fabric("l40s", 4).fabric.latency
    assert row.link == "PCIe-class" and row.alpha_4 == alpha
    assert_allclose(row.line_4, 54e9 / 4 / 3.35e12 + 128 * alpha, rtol=1e-12)
    assert_allclose(row.line_2, 54e9 / 2 / 3.35e12 + 128 * row.alpha_2, rtol=1e-12)
    assert 5.4e-3 < row.line_4 < 5.7e-3  # alpha about 11.7 us


def test_rows_put_nvlink_systems_first_and_the_lessons_lines_on_top():
    """Seven NVLink-class systems, then three PCIe-class; the table starts with 9.34 / 5.31 ms."""
    links = [r.link for r in _measured_lines()]
    assert links == ["NVLink-class"] * 7 + ["PCIe-class"] * 3
    html = measured_lines_table()
    assert html.count("<tr>") == 1 + 2 + 10
    assert ">9.34<" in html and ">5.31<" in html and ">10.43<" in html
    assert all(f">{h}<" in html for h in ("system", "link"))
    assert len(LINES_HEADER) == 7


def test_glued_values_name_the_verdicts_and_ranges():
    """Four slow GPUs lose on none of the three PCIe systems; the PCIe alphas are 11.7-18.1 us."""
    v = measured_numbers()
    assert v["claim_four_slow_lose"] == "holds on 0 of 3"
    assert (v["pcie_alpha_4_low"], v["pcie_alpha_4_high"]) == ("11.7 us", "18.09 us")
    assert v["measured_systems"] == "10"
    assert "holds on" in claims_table() and "nowhere" in claims_table()


@pytest.mark.slow
def test_the_built_page_shows_each_claims_verdict(built_book):
    """The measured page prints "holds on k of n" for every claim, the headline's 0 of 3 too."""
    from lesson_lib.measured import evaluate_claims

    page = (built_book.html_dir / "book" / "measured.html").read_text()
    for claim in evaluate_claims():
        assert claim.verdict in page, claim.key
    assert "holds on 0 of 3" in page
