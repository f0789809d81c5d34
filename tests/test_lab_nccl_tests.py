"""Tests of lesson_lib.lab.nccl_tests on files written in all_reduce_perf's format."""

from __future__ import annotations

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
    with pytest.raises(NcclTestsFormatError, match=r"bad.txt: 1 line\(s\) of the all_reduce_perf table could not be read"):
        read_all_reduce_perf(bad)
