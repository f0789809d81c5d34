"""The lab: measure a real all-reduce, fit t(m) = alpha + m/B, use it as a fabric.

Modules, one concept each:

* :mod:`~lesson_lib.lab.sweep` the benchmark every MPI rank runs;
* :mod:`~lesson_lib.lab.launch` starting ``mpiexec`` with a timeout and clean-up;
* :mod:`~lesson_lib.lab.cli` the command line, ``python -m lesson_lib.lab``;
* :mod:`~lesson_lib.lab.records` results files and the shipped reference data;
* :mod:`~lesson_lib.lab.nccl_tests` importing nccl-tests' ``all_reduce_perf`` output;
* :mod:`~lesson_lib.lab.fit` fitting a measurement with the model's alpha-beta fit;
* :mod:`~lesson_lib.lab.pingpong` MPI's own latency probe, for comparison;
* :mod:`~lesson_lib.lab.report` and :mod:`~lesson_lib.lab.reading` the lab page's numbers and sentences.

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
