"""The package imports light: drawing libraries load only when a figure or explorer is built."""

import subprocess
import sys


def test_import_does_not_pull_in_drawing_libraries():
    """`import lesson_lib` must not import matplotlib, mpi4py or MyST-NB."""
    code = (
        "import sys, lesson_lib; "
        "print(sorted(m for m in ('matplotlib', 'mpi4py', 'myst_nb') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_contract_is_importable_from_the_package():
    """The model's public names are importable from lesson_lib itself."""
    import lesson_lib

    names = (
        "KB MB GB TB KiB MiB GiB US MS ModelSpec Accelerator Fabric ring_allreduce_factor "
        "allreduce_wire_bytes allreduce_time crossover_bytes simulate_ring_allreduce decode_step "
        "prefill_step memory_budget max_sequences check_layout"
    ).split()
    missing = [n for n in names if not hasattr(lesson_lib, n)]
    assert missing == []
    assert set(names) <= set(lesson_lib.__all__)


def test_notebook_and_server_imports_compile_no_grammars():
    """`import nbformat` and JupyterLab's server load no Lark grammars (rfc3987-syntax).

    jsonschema 4.24+ imports rfc3987-syntax for its IRI format checks, about a
    second per import on this machine: JupyterLab's start, the grader and every
    notebook tool pay it. requirements.in pins jsonschema below 4.24.
    """
    code = (
        "import sys, nbformat, jupyter_server.serverapp; "
        "print(sorted(m for m in ('lark', 'rfc3987_syntax') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
