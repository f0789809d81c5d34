"""The presets: each from its shipped config, within a few percent of its model card."""

from __future__ import annotations

import json

import pytest

import lesson_lib
from lesson_lib.model.presets import (
    MOE_PRESETS,
    PRESETS,
    SOURCES,
    config_path,
    preset,
)
from lesson_lib.model.specimen import MODEL

#: What each model card says, typed from the cards (total, active), and the KV bytes per
#: token and fixed state worked out by hand from the config fields.
CARDS = {
    # 27B (lesson); KV 2 x 16 layers x 4 heads x 256 x 2 B = 65,536;
    # state 48 x (48 x 128 x 128 x 4 + 10,240 x 3 x 2) = 48 x 3,207,168 = 153,944,064
    "Qwen3.8-27B": (27e9, 27e9, 65_536, 153_944_064),
    # "70B"; KV 2 x 80 x 8 x 128 x 2 = 327,680 (320 KiB)
    "Llama-3.1-70B": (70e9, 70e9, 327_680, 0),
    # "46.7B total parameters but only uses 12.9B per token"; KV 2 x 32 x 8 x 128 x 2 = 131,072
    "Mixtral-8x7B": (46.7e9, 12.9e9, 131_072, 0),
    # "235B in total and 22B activated"; KV 2 x 94 x 4 x 128 x 2 = 192,512
    "Qwen3-235B-A22B": (235e9, 22e9, 192_512, 0),
    # "671B total parameters with 37B activated"; MLA 61 x (512 + 64) x 2 = 70,272
    "DeepSeek-V3": (671e9, 37e9, 70_272, 0),
}


def test_the_issue_names_the_presets_under_lesson_lib_models():
    """``lesson_lib.models.PRESETS`` holds the specimen first and the four others."""
    import lesson_lib.models

    assert lesson_lib.models.PRESETS is PRESETS
    assert lesson_lib.PRESETS is PRESETS
    assert list(PRESETS) == list(CARDS)
    assert PRESETS["Qwen3.8-27B"] == MODEL


@pytest.mark.parametrize("name", list(CARDS))
def test_counts_match_the_model_cards_within_a_few_percent(name):
    """Total and active parameters within 3 % of the card; KV and state bytes by hand."""
    total, active, kv, state = CARDS[name]
    m = PRESETS[name]
    assert m.params == pytest.approx(total, rel=0.03)
    assert m.active_params == pytest.approx(active, rel=0.03)
    assert m.kv_bytes_per_token == kv
    assert m.state_bytes == state
    assert SOURCES[name].card_params == total and SOURCES[name].card_active == active


def test_moe_presets_and_their_alltoalls():
    """Three MoE presets; all-to-alls per token = 2 x MoE layers: 64, 188 and 116."""
    assert {k: m.alltoalls_per_token for k, m in MOE_PRESETS.items()} == {
        "Mixtral-8x7B": 2 * 32,
        "Qwen3-235B-A22B": 2 * 94,
        "DeepSeek-V3": 2 * (61 - 3),
    }
    assert PRESETS["Llama-3.1-70B"].alltoalls_per_token == 0


def test_every_shipped_config_is_small_and_linked():
    """Each config file is a JSON object under 4 kB, linked to a public config.json."""
    config_dir = config_path("DeepSeek-V3").parent
    assert config_dir.name == "configs"
    files = sorted(p.name for p in config_dir.glob("*.json"))
    assert files == sorted(s.file for s in SOURCES.values())
    for source in SOURCES.values():
        text = (config_dir / source.file).read_text()
        assert isinstance(json.loads(text), dict) and len(text) < 4000
        assert source.url.startswith("https://huggingface.co/")
        assert source.url.endswith("/blob/main/config.json")


def test_mtp_layers_are_stated_not_counted():
    """DeepSeek-V3 and the specimen ship one MTP layer each; the cards' totals exclude it."""
    assert PRESETS["DeepSeek-V3"].mtp_layers == 1
    assert MODEL.mtp_layers == 1
    assert PRESETS["Mixtral-8x7B"].mtp_layers == 0


def test_unknown_names_are_refused_with_the_list():
    """A typo names the parameter and lists the presets."""
    with pytest.raises(ValueError, match=r"name must be one of \['Qwen3.8-27B'"):
        preset("Llama-3-70B")
    with pytest.raises(ValueError, match="name must be one of"):
        config_path("nope")
    assert config_path("Qwen3.5-27B") == config_path(MODEL.name)
    assert preset("DeepSeek-V3") is PRESETS["DeepSeek-V3"]


def test_configs_ship_with_the_package():
    """pyproject's package data lists the configs, so a wheel has them."""
    text = (config_path("DeepSeek-V3").parents[3] / "pyproject.toml").read_text()
    assert '"lesson_lib.model" = ["configs/*.json"]' in text
    assert lesson_lib.models.config_path("DeepSeek-V3").is_file()
