"""The nmrshift and spectra config sections of both scales match their schemas; typos are caught."""

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource


def _validator(repo, rel):
    """Validator for one section schema, resolving its relative $refs from workflow/schemas as the workflow does."""
    root = repo / "workflow/schemas"

    def retrieve(uri):
        return Resource.from_contents(yaml.safe_load((root / uri).read_text()))

    return Draft202012Validator({"$ref": rel}, registry=Registry(retrieve=retrieve))


@pytest.mark.parametrize("config_file", ["config/config.yaml", "config/full.yaml"])
def test_sections_validate(repo, config_file):
    from repro.workflow.config import load_config

    config = load_config(config_file)
    paper = _validator(repo, "papers/nmrshift.schema.yaml")
    data = _validator(repo, "data/spectra.schema.yaml")
    assert not list(paper.iter_errors(config["papers"]["nmrshift"]))
    assert not list(data.iter_errors(config["data"]["spectra"]))


def test_typo_and_bad_value_are_reported(repo):
    config = yaml.safe_load((repo / "config/config.yaml").read_text())
    section = dict(config["papers"]["nmrshift"], n_labeled=3)
    section["train"] = dict(section["train"], lr=0)
    errors = list(_validator(repo, "papers/nmrshift.schema.yaml").iter_errors(section))
    assert any("n_labeled" in e.message for e in errors)
    assert any(list(e.absolute_path) == ["train", "lr"] for e in errors)
