"""Provenance of a results folder (repro.workflow.provenance): what a rerun decision and a reader need to
know about how results were produced: config, data manifests, package versions, git commit."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from repro.workflow import provenance


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q")
    (root / "code.py").write_text("x = 1\n")
    git(root, "add", "code.py")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return root


def test_git_state_names_the_commit_and_sees_uncommitted_edits(repo):
    assert provenance.git_state(repo) == {"commit": git(repo, "rev-parse", "HEAD"), "dirty": False}
    (repo / "code.py").write_text("x = 2\n")
    assert provenance.git_state(repo)["dirty"] is True


def test_git_state_outside_a_checkout_is_unknown_not_an_error(tmp_path):
    assert provenance.git_state(tmp_path) == {"commit": None, "dirty": None}


def test_package_versions_match_the_installed_distributions():
    versions = provenance.package_versions(("numpy", "no-such-distribution-xyz"))
    assert versions == {"numpy": importlib.metadata.version("numpy"), "no-such-distribution-xyz": None}


def test_rule_entry_records_config_manifests_packages_and_code(tmp_path):
    manifest = tmp_path / "data/src/manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"files": [{"path": "a.parquet", "sha256": "ab" * 32}]}))
    out = tmp_path / "results/paper/provenance.json"
    section = {"enabled": True, "epochs": 3}
    job = SimpleNamespace(
        input={"claims": "claims.json", "manifests": [str(manifest)]},
        output=[str(out)],
        params=SimpleNamespace(section=section, seed=7, scale="smoke"),
        wildcards=SimpleNamespace(paper="paper"),
    )
    provenance.main(job)
    doc = json.loads(out.read_text())
    assert doc["paper"] == "paper"
    assert doc["config"] == {"paper": section, "seed": 7, "scale": "smoke"}
    assert doc["data_manifests"] == {str(manifest): json.loads(manifest.read_text())}
    assert doc["packages"]["numpy"] == importlib.metadata.version("numpy")
    assert doc["code"]["commit"] == provenance.git_state()["commit"]
    assert not list(out.parent.glob(".*")), "no temporary left beside the output"
