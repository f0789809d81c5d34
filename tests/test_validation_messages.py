"""Every model function names the bad argument first in its error message.

For each public function of the model modules, each numeric argument in turn
is replaced by NaN (a float) or a string (an integer) while the others stay
valid; the error must start with ``"<name> must be"``, the parameter's own
name. (``match=name`` alone would also accept a message that merely contains
it.)
"""

from __future__ import annotations

import math

import pytest
from model_functions import model_functions

from lesson_lib.specimen import MODEL
from lesson_lib.specs import Accelerator, Fabric, ModelSpec

MODULES = [
    "units",
    "collectives",
    "memory",
    "step_time",
    "layout",
    "payloads",
    "prefill",
    "scaling",
]


def cases():
    """(function, parameter name, bad value) for every numeric parameter we can fill."""
    for name, function, params, args in model_functions(MODULES):
        for p in params:
            kind = str(p.annotation)
            if kind in ("int", "float") and not isinstance(args[p.name], bool):
                bad = math.nan if kind == "float" else "four"
                yield pytest.param(function, args, p.name, bad, id=f"{name}-{p.name}")


CASES = list(cases())


def test_the_cases_cover_the_model():
    """The generic cases reach most model functions (not an empty parametrisation)."""
    assert len({c.values[0] for c in CASES}) >= 12


@pytest.mark.parametrize(("function", "args", "name", "bad"), CASES)
def test_message_starts_with_the_parameter(function, args, name, bad):
    """A bad value of one argument raises an error that starts by naming it."""
    with pytest.raises((TypeError, ValueError)) as info:
        function(**{**args, name: bad})
    assert str(info.value).startswith(f"{name} must be"), str(info.value)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: ModelSpec(**{**vars(MODEL), "params": -1.0}), "params"),
        (lambda: ModelSpec(**{**vars(MODEL), "hidden_size": 0}), "hidden_size"),
        (lambda: ModelSpec(**{**vars(MODEL), "num_layers": 0}), "num_layers"),
        (lambda: ModelSpec(**{**vars(MODEL), "head_dim": 0}), "head_dim"),
        (lambda: ModelSpec(**{**vars(MODEL), "max_context": 0}), "max_context"),
        (lambda: Accelerator("x", -1.0, 1.0, 1.0), "memory_bytes"),
        (lambda: Accelerator("x", 1.0, 0.0, 1.0), "hbm_bandwidth"),
        (lambda: Accelerator("x", 1.0, 1.0, 0.0), "peak_flops"),
        (lambda: Fabric("x", -1.0, 1.0), "latency"),
        (lambda: Fabric("x", 1.0, 0.0), "bandwidth"),
    ],
)
def test_specs_name_the_bad_field(build, name):
    """A model, card or fabric with a bad field names that field first."""
    with pytest.raises((TypeError, ValueError)) as info:
        build()
    assert str(info.value).startswith(f"{name} must be"), str(info.value)
