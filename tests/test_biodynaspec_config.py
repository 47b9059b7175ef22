"""The biodynaspec and atlas config sections validate, and a typo names the key."""

from __future__ import annotations

import pytest
import yaml

from repro.workflow.config import ConfigError, load_config, validate_config


@pytest.mark.parametrize("config_file", ["config/config.yaml", "config/full.yaml"])
def test_sections_validate(repo, config_file):
    config = load_config(config_file)
    validate_config(config["papers"]["biodynaspec"], repo / "workflow/schemas/papers/biodynaspec.schema.yaml")
    validate_config(config["data"]["atlas"], repo / "workflow/schemas/data/atlas.schema.yaml")


def test_bad_values_are_named(repo):
    config = yaml.safe_load((repo / "config/config.yaml").read_text())
    section = {**config["papers"]["biodynaspec"], "window": 1, "modles": ["static"]}
    with pytest.raises(ConfigError) as err:
        validate_config(section, repo / "workflow/schemas/papers/biodynaspec.schema.yaml")
    assert "window: 1 is less than the minimum of 2" in str(err.value) and "modles" in str(err.value)
    atlas = {**config["data"]["atlas"], "source": "remote"}
    with pytest.raises(ConfigError, match="'remote' is a required property"):
        validate_config(atlas, repo / "workflow/schemas/data/atlas.schema.yaml")
