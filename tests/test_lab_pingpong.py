"""Tests of lesson_lib.lab.pingpong: parsing mpi4py.bench pingpong and running it."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from lesson_lib.lab.pingpong import (
    PingPongError,
    _parse_pingpong,
    _pingpong_args,
    _pingpong_from_dict,
    _read_pingpong,
    load_reference_pingpong,
    run_pingpong,
    write_pingpong,
)

#: Each test runs an MPI job or looks at MPICH's segments: one worker at a time.
pytestmark = pytest.mark.usefixtures("mpi_alone")

OUTPUT = """\
# MPI PingPong Test
# Size [B]  Bandwidth [MB/s] | Time Mean [s] ± StdDev [s]  Samples
         1              0.55 | 1.8000000e-06 ± 9.6155e-07    10000
         2              1.11 | 2.0000000e-06 ± 5.7332e-07    10000
         4              2.15 | 1.9000000e-06 ± 4.4214e-06    10000
         8              4.46 | 5.0000000e-06 ± 5.3493e-07    10000
        16              8.72 | 1.8346951e-06 ± 6.3258e-07    10000
   1048576          15338.78 | 6.8361111e-05 ± 5.0231e-05     1000
"""


def test_parse_table():
    """Every row is read: sizes, one-way mean times, spreads and sample counts."""
    pp = _parse_pingpong("some banner\n" + OUTPUT)
    assert_allclose(pp.bytes, [1, 2, 4, 8, 16, 1048576])
    assert_allclose(pp.mean_s[:2], [1.8e-6, 2.0e-6])
    assert pp.samples[-1] == 1000


def test_latency_is_median_of_tiny_messages():
    """Latency is the median over messages <= 8 B: robust to one slow size."""
    assert_allclose(_parse_pingpong(OUTPUT).latency_s, 1.95e-6)


def test_peak_bandwidth():
    """Peak bandwidth is the largest size / one-way time."""
    assert_allclose(_parse_pingpong(OUTPUT).bandwidth, 1048576 / 6.8361111e-05)


def test_no_table_is_an_error():
    """Output without a table (MPI failed) raises PingPongError."""
    with pytest.raises(PingPongError, match="no pingpong table"):
        _parse_pingpong("Abort(1) on node 0\n")


def test_json_round_trip_and_bad_content(tmp_path):
    """Saved measurements read back; wrong or broken content is refused clearly."""
    pp = _parse_pingpong(OUTPUT)
    again = _read_pingpong(write_pingpong(tmp_path / "pp.json", pp))
    assert_allclose(again.mean_s, pp.mean_s)
    with pytest.raises(PingPongError, match="not a pingpong file"):
        _pingpong_from_dict({"format": "x"})
    with pytest.raises(PingPongError, match="malformed"):
        _pingpong_from_dict({"format": "lesson_lib.lab.pingpong/1", "bytes": [1], "mean_s": []})


def test_arguments_for_a_short_probe():
    """The probe is limited in size and loop counts so it stays quick."""
    args = _pingpong_args(4096, 100)
    assert args[:3] == ["-m", "mpi4py.bench", "pingpong"]
    assert args[args.index("-n") + 1] == "4096" and args[args.index("-l") + 1] == "100"


def test_reference_pingpong_ships():
    """The reference probe ships and has a microsecond-scale latency."""
    assert 1e-7 < load_reference_pingpong().latency_s < 1e-4


@pytest.mark.slow
def test_run_pingpong_live():
    """A real short probe on 2 ranks runs and gives a well-formed, positive measurement.

    How fast it is depends on the machine and its load (a busy core turns
    microseconds into milliseconds of scheduling), so no speed is asserted here;
    the parsing and the latency rule are checked on fixed output above.
    """
    pp = run_pingpong(max_bytes=4096, loop=200, timeout=300)
    assert pp.bytes[0] <= 8 and pp.bytes[-1] == 4096 and pp.machine["logical_cores"] >= 1
    assert (pp.mean_s > 0).all() and 0 < pp.latency_s < 1.0
