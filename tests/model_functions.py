"""The public model functions, each with a set of valid arguments (shared by generic tests).

A test that must hold for every model function (its error messages, its
refusal of wrong objects and absurd sizes) walks :func:`model_functions`
instead of listing the functions by hand, so a new function is covered the
day it is added.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from typing import Any

from lesson_lib.model.presets import PRESETS
from lesson_lib.model.specimen import FAST, GPU, MODEL

#: A valid value for parameters by name, then by annotation.
BY_NAME: dict[str, Any] = {
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
    "ns": [1, 2],
    "first": "one_shot",
    "second": "two_shot",
}
BY_TYPE: dict[str, Any] = {
    "ModelSpec": MODEL,
    "Accelerator": GPU,
    "Fabric": FAST,
    "int": 4,
    "float": 1e6,
}


#: Valid values of one module's functions, by name then by annotation, before the above:
#: the MoE functions refuse a dense model, and three of them take a layout with no default.
BY_MODULE: dict[str, dict[str, Any]] = {
    "model.moe": {"ModelSpec": PRESETS["Mixtral-8x7B"], "parallelism": "ep"},
}


def valid(param: inspect.Parameter, module_name: str = "") -> object:
    """A valid argument for ``param`` of a function of ``module_name``, or ``Parameter.empty``."""
    own = BY_MODULE.get(module_name, {})
    if param.name in own:
        return own[param.name]
    if param.name in BY_NAME:
        return BY_NAME[param.name]
    if param.default is not inspect.Parameter.empty:
        return param.default  # a default, None included, is always a valid argument
    annotation = str(param.annotation)
    return own.get(annotation, BY_TYPE.get(annotation, inspect.Parameter.empty))


def model_functions(
    modules: list[str],
) -> Iterator[tuple[str, Any, list[inspect.Parameter], dict[str, object]]]:
    """``(name, function, parameters, valid arguments)`` of each public function.

    Functions whose arguments cannot all be filled are left out; under
    ``make mutation`` the signature is read from mutmut's original copy.
    """
    for module_name in modules:
        module = importlib.import_module(f"lesson_lib.{module_name}")
        for name, function in vars(module).items():
            if name.startswith(("_", "x_")) or not inspect.isfunction(function):
                continue  # x_...: mutmut's copies of the functions, under `make mutation`
            if function.__module__ != module.__name__:
                continue
            original = getattr(module, f"x_{name}__mutmut_orig", function)
            params = list(inspect.signature(original).parameters.values())
            args = {p.name: valid(p, module_name) for p in params}
            if any(v is inspect.Parameter.empty for v in args.values()):
                continue
            yield name, function, params, args
