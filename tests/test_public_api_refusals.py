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

import importlib
import inspect
import time

import pytest

from lesson_lib.specimen import FAST, GPU, MODEL

MODULES = [
    "collectives",
    "memory",
    "step_time",
    "layout",
    "payloads",
    "prefill",
    "scaling",
    "algorithms",
    "batching",
    "cluster",
    "sizing",
    "tensor_parallel",
    "ring",
]

#: Valid values by parameter name, then by annotation.
BY_NAME = {
    "n": 4,
    "tp": 4,
    "pp": 2,
    "max_n": 16,
    "context_tokens": 4096,
    "prompt_tokens": 4096,
    "sequences": 1,
    "tokens": 1,
    "target_s": 0.02,
    "payload_bytes": 10240.0,
    "first": "one_shot",
    "second": "two_shot",
}
BY_TYPE = {"ModelSpec": MODEL, "Accelerator": GPU, "Fabric": FAST, "int": 4, "float": 1e6}
WRONG = {"ModelSpec": "Qwen", "Accelerator": 80e9, "Fabric": {"latency": 1e-5}}
#: Seconds one refused call may take on a busy machine; a missing bound takes minutes.
TIME_LIMIT_S = 5.0


def _valid(param: inspect.Parameter) -> object:
    if param.name in BY_NAME:
        return BY_NAME[param.name]
    if param.default is not inspect.Parameter.empty and param.default is not None:
        return param.default
    return BY_TYPE.get(str(param.annotation), inspect.Parameter.empty)


def _functions():
    for module_name in MODULES:
        module = importlib.import_module(f"lesson_lib.{module_name}")
        for name, function in vars(module).items():
            if name.startswith(("_", "x_")) or not inspect.isfunction(function):
                continue
            if function.__module__ != module.__name__:
                continue
            original = getattr(module, f"x_{name}__mutmut_orig", function)
            params = list(inspect.signature(original).parameters.values())
            args = {p.name: _valid(p) for p in params}
            if any(v is inspect.Parameter.empty for v in args.values()):
                continue
            yield name, function, params, args


def _cases(kind: str):
    for name, function, params, args in _functions():
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
