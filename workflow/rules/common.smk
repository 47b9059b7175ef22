"""Helpers shared by all workflow files: repo paths, code inputs, per-paper config and targets."""

import os
from pathlib import Path

REPO = Path(workflow.basedir)
ENTRY = "../scripts/entry.py"


def repo_file(rel):
    """Path of a file shipped in the repo, relative to the working directory when possible."""
    return os.path.relpath(REPO / rel)


def code_files(*parts):
    """Python files under scripts/repro: a package folder ('papers/hysomi') or a module ('data/metagenome.py').

    Listed as rule inputs so that editing a paper's code reruns that paper's jobs only.
    """
    files = []
    for part in parts:
        path = REPO / "scripts/repro" / part
        files += [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
    return [os.path.relpath(f) for f in files]


def paper_config(slug):
    return config["papers"][slug]


def rule_name(slug):
    """Identifier form of a slug, used for rule names (cgmt-erm -> cgmt_erm)."""
    return slug.replace("-", "_")


def paper_targets(slug):
    """What every paper's target rule produces besides its figures."""
    return [
        f"results/{slug}/metrics.json",
        f"results/{slug}/claims.json",
        f"results/{slug}/provenance.json",
    ]


# Manifests of data a paper generates itself (simulations), registered by the paper's rule file.
PAPER_DATA_MANIFESTS = {}


def data_manifests(slug):
    """Manifests of the data a paper reads: shared sources named in its config, plus its own."""
    sources = paper_config(slug).get("data", [])
    shared = [f"data/{source}/manifest.json" for source in sources]
    return shared + PAPER_DATA_MANIFESTS.get(slug, [])
