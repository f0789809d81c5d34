"""The lab: measure a real all-reduce, fit t(m) = alpha + m/B, use it as a fabric.

The command line is :mod:`~lesson_lib.lab.cli` (``python -m lesson_lib.lab``).
Importing this package does not import :mod:`mpi4py` or start MPI.
"""

from lesson_lib.lab.cli import main
from lesson_lib.lab.fit import AlphaBetaFit, fabric_from_fit, fit_alpha_beta, fit_measurement
from lesson_lib.lab.nccl_tests import (
    NcclTestsFormatError,
    parse_all_reduce_perf,
    read_all_reduce_perf,
)
from lesson_lib.lab.records import Measurement, ResultsError, load_reference, read_results

__all__ = [
    "AlphaBetaFit",
    "Measurement",
    "NcclTestsFormatError",
    "ResultsError",
    "fabric_from_fit",
    "fit_alpha_beta",
    "fit_measurement",
    "load_reference",
    "main",
    "parse_all_reduce_perf",
    "read_all_reduce_perf",
    "read_results",
]
