"""Tests of lesson_lib.lab.nccl_tests on files written in all_reduce_perf's format."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lesson_lib.lab.fit import fit_measurement
from lesson_lib.lab.nccl_tests import (
    NcclTestsFormatError,
    parse_all_reduce_perf,
    read_all_reduce_perf,
)
from lesson_lib.lab.records import measurement_to_dict, read_results, write_results

HEADER = """\
# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  41001 on     node1 device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  41002 on     node1 device  1 [0x0b] NVIDIA A100-SXM4-80GB
#  Rank  2 Group  0 Pid  41003 on     node1 device  2 [0x48] NVIDIA A100-SXM4-80GB
#  Rank  3 Group  0 Pid  41004 on     node1 device  3 [0x4c] NVIDIA A100-SXM4-80GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""


def row(
    size: int, t_us: float, ranks: int = 4, root: bool = True, in_t: float | None = None
) -> str:
    """One data line as all_reduce_perf prints it."""
    algbw = size / (t_us * 1e-6) / 1e9
    busbw = algbw * 2 * (ranks - 1) / ranks
    in_t = t_us if in_t is None else in_t
    mid = "      -1" if root else ""
    return (
        f"{size:>12} {size // 4:>13}     float     sum{mid} {t_us:>8.2f} {algbw:>7.2f} "
        f"{busbw:>7.2f}      0 {in_t:>8.2f} {algbw:>7.2f} {busbw:>7.2f}      0\n"
    )


SIZES = [2**e for e in range(3, 28, 2)]
TIMES = [12.0 + s / 150e9 * 1e6 for s in SIZES]  # alpha 12 us, B 150 GB/s


def output(root: bool = True, extra: str = "") -> str:
    """A whole all_reduce_perf output, optionally with extra lines."""
    body = "".join(row(s, t, root=root) for s, t in zip(SIZES, TIMES, strict=True))
    footer = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 80.1\n#\n"
    return HEADER + body + extra + footer


def test_reads_well_formed_output():
    """Sizes, times (us -> s), rank count and devices come out right."""
    m = parse_all_reduce_perf(output())
    assert m.ranks == 4 and m.source == "nccl-tests"
    assert_allclose(m.bytes, SIZES)
    assert_allclose(m.median_s, np.array(TIMES) * 1e-6, rtol=1e-3)
    assert_allclose(m.busbw, m.algbw * 1.5)
    assert m.machine["hosts"] == ["node1"] and "A100" in m.machine["devices"][0]
    assert "nccl-tests" in m.label()


def test_fit_of_imported_output():
    """The same fit works on GPU data: alpha 12 us and B 150 GB/s come back."""
    fit = fit_measurement(parse_all_reduce_perf(output()))
    assert_allclose(fit.alpha, 12e-6, rtol=0.02)
    assert_allclose(fit.bandwidth, 150e9, rtol=0.02)


def test_old_format_without_root_column():
    """Output of older nccl-tests (no root column, header says 'error') reads the same."""
    old = output(root=False).replace("    root", "").replace("#wrong", " error")
    m = parse_all_reduce_perf(old)
    assert_allclose(m.bytes, SIZES)
    assert_allclose(m.median_s, np.array(TIMES) * 1e-6, rtol=1e-3)


def test_in_place_times_on_request():
    """in_place=True takes the second block of columns."""
    text = HEADER + row(1024, 20.0, in_t=30.0) + row(4096, 25.0, in_t=35.0)
    assert_allclose(parse_all_reduce_perf(text, in_place=True).median_s, [30e-6, 35e-6])
    assert_allclose(parse_all_reduce_perf(text).median_s, [20e-6, 25e-6])


def test_millisecond_units_line_is_honoured():
    """A units line that says (ms) scales times by 1e-3."""
    text = HEADER.replace("(us)", "(ms)") + row(1024, 2.0) + row(4096, 3.0)
    assert_allclose(parse_all_reduce_perf(text).median_s, [2e-3, 3e-3])


def test_malformed_lines_are_reported_with_line_numbers():
    """Every broken data line is listed with its 1-based number and the reason."""
    first = HEADER.count("\n") + 1
    bad = "        2048           512     float     sum      -1    abc  0.1 0.1 0 1.0 0.1 0.1 0\n"
    short = "        4096          1024     float\n"
    lines = [row(1024, 20.0), bad, row(8192, 30.0), short]
    with pytest.raises(NcclTestsFormatError) as info:
        parse_all_reduce_perf(HEADER + "".join(lines))
    problems = info.value.problems
    assert [p.line for p in problems] == [first + 1, first + 3]
    assert "should be a number but is 'abc'" in problems[0].reason
    assert "this line has 3 values but the table has 13 columns" in problems[1].reason
    assert f"line {first + 1}:" in str(info.value)


def test_lenient_mode_skips_and_records_bad_lines():
    """strict=False keeps the good lines and remembers which were skipped."""
    first = HEADER.count("\n") + 1
    text = HEADER + row(1024, 20.0) + "garbage line\n" + row(8192, 30.0)
    m = parse_all_reduce_perf(text, strict=False)
    assert_allclose(m.bytes, [1024, 8192])
    assert m.config["skipped_lines"] == [first + 1]


def test_sizes_must_grow():
    """A repeated or shrinking size (two runs pasted together) is flagged."""
    text = HEADER + row(1024, 20.0) + row(1024, 21.0)
    with pytest.raises(NcclTestsFormatError, match="is not larger than the one before it"):
        parse_all_reduce_perf(text)


def test_nccl_log_lines_are_not_data():
    """NCCL_DEBUG=INFO lines mixed into the output are ignored."""
    log = "node1:41001:41001 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    m = parse_all_reduce_perf(HEADER + log + row(1024, 20.0) + log + row(4096, 22.0))
    assert len(m.bytes) == 2


def test_rank_count_from_bandwidth_ratio_without_rank_lines():
    """Without '# Rank' lines, N comes from busbw / algbw = 2(N-1)/N."""
    body = "".join(row(s, t, ranks=8) for s, t in zip(SIZES[-4:], TIMES[-4:], strict=True))
    header = "\n".join(ln for ln in HEADER.splitlines() if "Rank" not in ln) + "\n"
    assert parse_all_reduce_perf(header + body).ranks == 8


def test_no_data_lines():
    """Output with no data (e.g. a crash before the table) is a clear error."""
    with pytest.raises(NcclTestsFormatError, match="no measurements found"):
        parse_all_reduce_perf(HEADER)


def test_read_file_and_save_as_results(tmp_path):
    """A saved output file imports, names itself, and saves as a results file."""
    src = tmp_path / "a100.txt"
    src.write_text(output())
    m = read_all_reduce_perf(src)
    assert m.path == str(src)
    again = read_results(write_results(tmp_path / "r.json", measurement_to_dict(m)))
    assert_allclose(again.median_s, m.median_s)
    assert again.source == "nccl-tests"
    bad = tmp_path / "bad.txt"
    bad.write_text(HEADER + "   8  2  float  sum  -1  x\n")
    with pytest.raises(
        NcclTestsFormatError,
        match=r"bad.txt: 1 line\(s\) of the all_reduce_perf table could not be read",
    ):
        read_all_reduce_perf(bad)


DATA = Path(__file__).resolve().parent / "data" / "nccl-tests"


@pytest.mark.parametrize(
    "name, ranks, first, last, rows",
    [
        ("gb10-2ranks-from-8KiB.txt", 2, 8192, 65536, 4),
        ("rows-only-8ranks-from-32KiB.txt", 8, 32768, 33554432, 11),
        ("multinode-8ranks-large-only.txt", 8, 536870912, 8589934592, 5),
        ("nvls-8gpus-from-1KiB.txt", 8, 1024, 32768, 6),
    ],
)
def test_real_outputs_import(name, ranks, first, last, rows):
    """Real pasted outputs (tests/data/nccl-tests/README.md) read with the right sizes and N."""
    m = read_all_reduce_perf(DATA / name)
    assert m.ranks == ranks and len(m.bytes) == rows
    assert m.bytes[0] == first and m.bytes[-1] == last
    # Times come from the time column: the printed algbw is size / time (2 decimals).
    assert m.median_s[0] > 0 and np.all(np.diff(m.bytes) > 0)


def test_real_output_times_match_their_printed_bandwidth():
    """size / time reproduces the algbw column nccl-tests printed next to it."""
    m = read_all_reduce_perf(DATA / "rows-only-8ranks-from-32KiB.txt")
    printed = [1.76, 3.46, 6.81, 13.42, 25.71, 37.78, 51.58, 78.78, 103.36, 138.28, 171.72]
    assert_allclose(m.algbw / 1e9, printed, rtol=0.01)
    in_place = read_all_reduce_perf(DATA / "rows-only-8ranks-from-32KiB.txt", in_place=True)
    assert_allclose(in_place.median_s[:2], [17.95e-6, 18.25e-6])


def test_gpu_names_and_hosts_from_rank_lines():
    """The GB10 output names its two hosts and devices."""
    m = read_all_reduce_perf(DATA / "gb10-2ranks-from-8KiB.txt")
    assert m.machine["hosts"] == ["spark-d708", "spark-dbf4"]
    assert set(m.machine["devices"]) == {"NVIDIA GB10"}


def test_small_bandwidths_need_ranks_and_say_so():
    """Bandwidths printed as 0.00 .. 0.18 GB/s cannot give N: the message asks for --ranks."""
    with pytest.raises(NcclTestsFormatError, match="give the number with --ranks"):
        read_all_reduce_perf(DATA / "units-line-only-small-sizes.txt")
    m = read_all_reduce_perf(DATA / "units-line-only-small-sizes.txt", ranks=2)
    assert len(m.bytes) == 10 and m.bytes[-1] == 4096


def test_old_twelve_column_layout_without_hash_lines():
    """The real A100 header (redop, no root, no '#') with rows in its layout: 8 ranks from
    the Rank lines, times from the 5th column (rows written here: the thread shows none)."""
    header = (DATA / "old-layout-a100-8gpus-header-only.txt").read_text()
    rows = (
        "          32             8   float     sum    30.10    0.00    0.00  0e+00    29.90    0.00    0.00  0e+00\n"
        "     1048576        262144   float     sum    45.00   23.30   40.78  0e+00    44.00   23.83   41.70  0e+00\n"
        "    67108864      16777216   float     sum   600.00  111.85  195.74  0e+00   590.00  113.74  199.05  0e+00\n"
    )
    m = parse_all_reduce_perf(header + rows)
    assert m.ranks == 8 and "NVIDIA A100-SXM4-40GB" in m.machine["devices"]
    assert_allclose(m.median_s, [30.10e-6, 45.00e-6, 600.00e-6])
    with pytest.raises(NcclTestsFormatError, match="no measurements found"):
        parse_all_reduce_perf(header)


def test_eleven_column_layout_without_redop():
    """A header without redop and root (size count type time algbw busbw error x2) reads too."""
    text = (
        "#  size  count  type   time  algbw  busbw  error   time  algbw  busbw  error\n"
        "   1024    256 float  20.00   0.05   0.09  0e+00  21.00   0.05   0.09  0e+00\n"
        "1048576 262144 float 100.00  10.49  18.35  0e+00 101.00  10.38  18.17  0e+00\n"
    )
    m = parse_all_reduce_perf(text)
    assert m.ranks == 8  # 18.35 / 10.49 = 1.75 = 2(N-1)/N
    assert_allclose(m.median_s, [20e-6, 100e-6])
    m = parse_all_reduce_perf(text.replace("#  size", "  size"), in_place=True)
    assert_allclose(m.median_s, [21e-6, 101e-6])


def test_fit_falls_back_and_says_what_is_extrapolated():
    """From 32 KiB up: no 'ranges' fit, a weighted fit whose note says alpha is extrapolated."""
    from lesson_lib.lab.fit import fit_what_the_sizes_allow

    fit, notes = fit_what_the_sizes_allow(
        read_all_reduce_perf(DATA / "rows-only-8ranks-from-32KiB.txt")
    )
    assert fit.method == "wls" and len(notes) == 1
    assert "alpha is extrapolated" in notes[0] and "32 KiB" in notes[0]
    assert 10e-6 < fit.alpha < 25e-6  # the smallest sizes took 18.7-19.5 us
    fit, notes = fit_what_the_sizes_allow(parse_all_reduce_perf(output()))
    assert fit.method == "ranges" and notes == []


def test_cli_messages_are_for_students(tmp_path):
    """The CLI prints the fit with its note, never 'small_max' or 'method'."""
    import io

    from lesson_lib.lab import cli

    out, err = io.StringIO(), io.StringIO()
    status = cli.main(
        ["nccl", str(DATA / "rows-only-8ranks-from-32KiB.txt"), "--out", str(tmp_path / "r.json")],
        stdout=out,
        stderr=err,
    )
    assert status == 0
    text = out.getvalue()
    assert "alpha is extrapolated" in text and "small_max" not in text and "method" not in text


def test_rank_lines_are_read_by_their_words():
    """_rank_line finds rank, host and device as the nccl-tests formats print them."""
    from lesson_lib.lab.nccl_tests import _rank_line

    assert _rank_line("Rank  0 Group  0 Pid  41001 on     node1 device  0 [0x07] NVIDIA A100") == (
        0,
        "node1",
        "NVIDIA A100",
    )
    assert _rank_line("Rank 3 Pid 7 on gpu-host-2 device 3 [0000:4c:00] NVIDIA H100 80GB HBM3") == (
        3,
        "gpu-host-2",
        "NVIDIA H100 80GB HBM3",
    )
    assert _rank_line("Rank x on a device 0 [1] b") is None
    assert _rank_line("Ranking on a device") is None


def test_a_long_line_costs_no_more_than_reading_it():
    """A 300 KB line of repeated 'on x device 0 [' (seconds for the old pattern) and a line
    at the length cap of the same words: each parsed in a few milliseconds of CPU time; the
    long one is reported as too long, not read as data."""
    import time

    from lesson_lib.lab.nccl_tests import MAX_LINE_CHARS, _rank_line

    long_line = "#  Rank  0 " + "on x device 0 [" * 20_000
    started = time.thread_time()
    with pytest.raises(NcclTestsFormatError, match="too long"):
        parse_all_reduce_perf(long_line + "\n" + output())
    at_cap = ("Rank 0 " + "on x device 0 [" * 1000)[:MAX_LINE_CHARS]
    assert _rank_line(at_cap) is None
    assert time.thread_time() - started < 0.5
    m = parse_all_reduce_perf(long_line + "\n" + output(), strict=False)
    assert m.config["skipped_lines"] == [1] and len(m.bytes) == len(SIZES)


def test_a_size_beyond_a_pebibyte_is_a_line_problem_not_an_overflow(tmp_path):
    """A 401-digit size once crashed `lab nccl` with an OverflowError traceback; now its line is
    named, with the allowed range (0 to 2**50 bytes, what a results file may hold)."""
    from lesson_lib.lab import cli

    first = HEADER.count("\n") + 1
    huge = row(1024, 20.0).replace("        1024", "1" + "0" * 400, 1)
    path = tmp_path / "huge.txt"
    path.write_text(HEADER + row(8, 10.0) + huge)
    with pytest.raises(NcclTestsFormatError) as info:
        read_all_reduce_perf(path)
    (problem,) = info.value.problems
    assert problem.line == first + 1
    assert "the size (column 1) should be a whole number from 0 to 1125899906842624" in str(problem)
    err = io.StringIO()
    status = cli.main(["nccl", str(path), "--out", str(tmp_path / "r.json")], stderr=err)
    assert status == cli.EXIT_BAD_FILE and f"line {first + 1}: the size" in err.getvalue()


def test_rows_nccl_tests_found_wrong_are_not_measurements():
    """A non-zero #wrong (results that did not match) refuses its row, naming it; "0" and
    "N/A" (checking switched off with -c 0) are read; --lenient skips the row."""
    first = HEADER.count("\n") + 1
    wrong = row(1024, 20.0).replace("      0 ", "      3 ", 1)
    with pytest.raises(NcclTestsFormatError) as info:
        parse_all_reduce_perf(HEADER + row(8, 10.0) + wrong + row(4096, 22.0))
    (problem,) = info.value.problems
    assert problem.line == first + 1
    assert problem.reason == (
        "nccl-tests found '3' wrong results in this row (#wrong, column 9): "
        "a wrong result is not a measurement"
    )
    lenient = parse_all_reduce_perf(HEADER + row(8, 10.0) + wrong, strict=False)
    assert list(lenient.bytes) == [8] and lenient.config["skipped_lines"] == [first + 1]
    unchecked = row(1024, 20.0).replace("      0", "    N/A")
    assert list(parse_all_reduce_perf(HEADER + unchecked).bytes) == [1024]


@pytest.mark.parametrize(
    ("drop_ranks", "message"),
    [
        (False, "the output shows 1 GPU(s) (its Rank lines), not 2 to 4096; give --ranks"),
        (True, "the output shows 44739 GPU(s) (busbw / algbw), not 2 to 4096; give --ranks"),
    ],
)
def test_a_rank_count_read_from_the_file_is_named_as_such(tmp_path, drop_ranks, message):
    """A count the user never typed (one Rank line; busbw / algbw = 1.99996, N = 2 / (2 - r))
    once came back as "bad option: ranks/n must be ..."; now the file is blamed, --ranks offered.
    """
    from lesson_lib.lab import cli

    lines = [ln for ln in HEADER.splitlines(keepends=True) if "Rank  0" in ln or "Rank" not in ln]
    lines = [ln for ln in lines if not (drop_ranks and "Rank" in ln)]
    big = "   134217728      33554432     float     sum      -1   100.00 1342.18 2684.30      0"
    path = tmp_path / "out.txt"
    path.write_text("".join(lines) + row(8, 10.0, ranks=1) + big + " 100.00 1342.18 2684.30 0\n")
    err = io.StringIO()
    status = cli.main(["nccl", str(path), "--out", str(tmp_path / "r.json")], stderr=err)
    assert status == cli.EXIT_BAD_FILE, err.getvalue()
    assert message in err.getvalue() and "give --ranks" in err.getvalue()
    assert "bad option" not in err.getvalue()
