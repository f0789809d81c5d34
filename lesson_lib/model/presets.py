"""Models beside the specimen, each built from a copy of its public ``config.json``.

Each config in ``lesson_lib/model/configs/`` holds the fields
:meth:`ModelSpec.from_hf_config <lesson_lib.model.specs.ModelSpec.from_hf_config>` reads, copied
from the ``model_configs`` folder of NVIDIA's aiconfigurator-core 0.12.0 on PyPI; :data:`SOURCES`
links each public config. The specimen's count is stated (27 billion), not counted. Also reachable
as ``lesson_lib.models`` and ``lesson_lib.presets``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lesson_lib.model.specimen import MODEL
from lesson_lib.model.specs import ModelSpec

# Where the shipped configs are (a path on this machine, so not a documented constant).
_CONFIG_DIR: Path = Path(__file__).resolve().parent / "configs"


@dataclass(frozen=True)
class PresetSource:
    """Where one preset's config comes from, and what its model card says."""

    #: The shipped config, in ``lesson_lib/model/configs/``.
    file: str
    #: The public ``config.json`` it copies.
    url: str
    #: The model card it is checked against.
    card: str
    #: Total parameters the card gives.
    card_params: float
    #: Parameters active per token the card gives (the total for a dense model).
    card_active: float
    #: What is special about it.
    note: str = ""


_HF = "https://huggingface.co/"

#: Each preset's config file and public source, by preset name, in the order offered.
SOURCES: dict[str, PresetSource] = {
    MODEL.name: PresetSource(
        "Qwen3.5-27B.json",
        _HF + "Qwen/Qwen3.5-27B/blob/main/config.json",
        _HF + "Qwen/Qwen3.5-27B",
        27e9,
        27e9,
        "the specimen: the public Qwen3.5-27B config has its shape; parameters as the lesson "
        "states them; one MTP layer, not counted",
    ),
    "Llama-3.1-70B": PresetSource(
        "Llama-3.1-70B.json",
        _HF + "meta-llama/Llama-3.1-70B/blob/main/config.json",
        _HF + "meta-llama/Llama-3.1-70B",
        70e9,
        70e9,
        "dense, grouped-query attention (8 KV heads)",
    ),
    "Mixtral-8x7B": PresetSource(
        "Mixtral-8x7B.json",
        _HF + "mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
        "https://mistral.ai/news/mixtral-of-experts",
        46.7e9,
        12.9e9,
        "8 experts, top-2, in every layer",
    ),
    "Qwen3-235B-A22B": PresetSource(
        "Qwen3-235B-A22B.json",
        _HF + "Qwen/Qwen3-235B-A22B/blob/main/config.json",
        _HF + "Qwen/Qwen3-235B-A22B",
        235e9,
        22e9,
        "128 experts, top-8, in every layer",
    ),
    "DeepSeek-V3": PresetSource(
        "DeepSeek-V3.json",
        _HF + "deepseek-ai/DeepSeek-V3/blob/main/config.json",
        _HF + "deepseek-ai/DeepSeek-V3",
        671e9,
        37e9,
        "MLA; 256 routed experts, top-8, and 1 shared expert; first 3 layers dense; FP8 "
        "weights; one MTP layer, not counted",
    ),
}


def config_path(name: str) -> Path:
    """The shipped config of the preset ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`SOURCES` or a file stem (``"Qwen3.5-27B"``), else a ValueError listing them.

    Returns
    -------
    pathlib.Path
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a preset's name (str), got {type(name).__name__}")
    if name in SOURCES:
        return _CONFIG_DIR / SOURCES[name].file
    for source in SOURCES.values():
        if Path(source.file).stem == name:
            return _CONFIG_DIR / source.file
    raise ValueError(f"name must be one of {list(SOURCES)}, got {name!r}")


def _build(name: str) -> ModelSpec:
    # The lesson states the specimen's size; the config gives its shape.
    params = MODEL.params if name == MODEL.name else None
    return ModelSpec.from_hf_config(config_path(name), name=name, params=params)


#: The presets by name, the specimen first, then the models the MoE chapter compares.
PRESETS: dict[str, ModelSpec] = {name: _build(name) for name in SOURCES}

#: The mixture-of-experts presets, by name.
MOE_PRESETS: dict[str, ModelSpec] = {k: m for k, m in PRESETS.items() if m.is_moe}


def preset(name: str) -> ModelSpec:
    """The preset called ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`PRESETS`; any other is a ValueError listing them.

    Returns
    -------
    ModelSpec
    """
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise ValueError(f"name must be one of {list(PRESETS)}, got {name!r}") from None
