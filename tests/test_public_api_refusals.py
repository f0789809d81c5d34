"""Bad objects and absurd sizes are refused by every public model function, quickly.

For each public function of the model modules, each ``ModelSpec``,
``Accelerator`` or ``Fabric`` argument in turn is replaced by an object of
the wrong type, and each number by an integer with 400 digits, while the
others stay valid. A wrong type must raise TypeError and a size out of range
ValueError, each starting with the parameter's name, never AttributeError or
OverflowError, and within a generous time bound (so a size bound that is
missing cannot hang the suite: it shows up as a slow or successful call).
"""

from __future__ import annotations

import time

import pytest
from model_functions import model_functions

MODULES = [
    "model.collectives",
    "model.memory",
    "model.step_time",
    "model.layout",
    "model.kv_transfer",
    "model.context_parallel",
    "model.moe",
    "chapters.payloads",
    "model.payloads",
    "chapters.prefill",
    "model.prefill",
    "chapters.latency",
    "model.latency",
    "chapters.algorithms",
    "model.algorithms",
    "chapters.batching",
    "model.batching",
    "chapters.cluster",
    "chapters.sizing",
    "model.sizing",
    "chapters.allreduce",
    "model.tensor_parallel",
    "chapters.kv_transfer",
    "model.kv_links",
    "model.ring",
]

WRONG = {"ModelSpec": "Qwen", "Accelerator": 80e9, "Fabric": {"latency": 1e-5}}
#: Seconds one refused call may take on a busy machine; a missing bound takes minutes.
TIME_LIMIT_S = 5.0


def _cases(kind: str):
    for name, function, params, args in model_functions(MODULES):
        for p in params:
            annotation = str(p.annotation)
            if kind == "type" and annotation in WRONG:
                yield pytest.param(
                    function, args, p.name, WRONG[annotation], TypeError, id=f"{name}-{p.name}"
                )
            if kind == "size" and annotation in ("int", "float") and p.name not in ("decimals",):
                yield pytest.param(
                    function, args, p.name, 10**400, ValueError, id=f"{name}-{p.name}"
                )


TYPE_CASES = list(_cases("type"))
SIZE_CASES = list(_cases("size"))


def test_the_cases_reach_the_model():
    """Not an empty parametrisation: many functions and parameters are tried."""
    assert len(TYPE_CASES) >= 30 and len(SIZE_CASES) >= 30


def _refused(function, args, name, bad, error):
    start = time.monotonic()
    with pytest.raises(error) as info:
        function(**{**args, name: bad})
    assert time.monotonic() - start < TIME_LIMIT_S
    assert str(info.value).startswith(f"{name} must be"), str(info.value)


@pytest.mark.parametrize(("function", "args", "name", "bad", "error"), TYPE_CASES)
def test_wrong_object_is_a_type_error_naming_it(function, args, name, bad, error):
    """A string for the model, a number for the card, a dict for the fabric: TypeError."""
    _refused(function, args, name, bad, error)


@pytest.mark.parametrize(("function", "args", "name", "bad", "error"), SIZE_CASES)
def test_absurd_size_is_a_value_error_naming_it(function, args, name, bad, error):
    """A 400-digit integer is out of range: ValueError naming the parameter, no OverflowError."""
    _refused(function, args, name, bad, error)
