"""Config that cannot lie: duplicate keys stop the run, and config/full.yaml is an overlay of the default.

Snakemake deep-merges each ``--configfile`` over the default (``snakemake.utils.update_config``), so
full.yaml holds only what differs at paper scale. Keys the default lacks are allowed only where
``_allowed_addition`` says why (see also the header of config/full.yaml).
"""

from __future__ import annotations

import copy
import fnmatch

import pytest
import yaml
from snakemake.utils import update_config
from workflow_tools import REPO, copy_workflow, snakemake

from repro.workflow.config import ConfigError, check_config_files, load_config, load_strict, validate_config

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
DEFAULT = REPO / "config/config.yaml"
OVERLAY = REPO / "config/full.yaml"
# Paper-scale-only keys the default leaves to the code's own default, with the reason.
SCALE_ONLY = {
    "papers.nmrshift.model.heads": "attention heads of the transformer backbone; the smoke backbone has none",
    "papers.nmrshift.variants.*.folds": "a variant without `folds` runs every fold (the paper section's `folds`)",
    "papers.dissolvr.source.path": "the AqSolDB/BigSolDB CSV that the paper-scale source (kind: aqsoldb) reads",
    "papers.automat.source.*": "the STEM2Mat folder, tiers and sampling the paper-scale source (kind: stem2mat) reads",
    "papers.syngr.real.*": "the Amazon 2018 benchmarks the paper-scale reader loads (smoke: none, synthetic only)",
    "papers.holi-spatial.verifier.size_priors.*": "size priors of ScanNet's 18 classes (smoke: the pybullet assets')",
    "papers.syngr.variants.*": "the variants trained on each paper-scale Amazon benchmark",
    "papers.gpo.ns.path": "the FNO Navier-Stokes .mat file the paper-scale reader loads (smoke: the simulator)",
    "papers.flower.tasks.*.*": "The Well files and fields the paper-scale readers load (smoke: the simulators)",
    "papers.pdrf.radar.*": "the SEVIR VIL files and their sampling the paper-scale reader uses (smoke: the simulator)",
    "papers.sfda-regression.transfers.*": "the dSprites and MPI3D transfers the paper-scale readers load (smoke: digits)",
    # bf16 autocast applies on CUDA only (CPU runs stay float32): a key that means nothing at smoke scale
    **{
        f"papers.{slug}.train.precision": "bf16 autocast of the training step on the GPU (smoke: CPU, float32)"
        for slug in ("cod-lite", "flower", "focusing", "protein-tokens", "mosaic", "syngr")
    },
    "papers.mosaic.model.checkpoint": "recompute of each block in the backward pass: the 1.5 deg model's memory",
    "papers.mosaic.train.val_batch_size": "validation windows per pass (smoke: its few windows in one pass, unset)",
}


def _merged() -> dict:
    config = copy.deepcopy(load_strict(DEFAULT))
    update_config(config, load_strict(OVERLAY))
    return config


def _allowed_addition(path: list[str], overlay: dict) -> bool:
    """A key the default lacks: a paper's or data source's resources block, a switched source's settings, SCALE_ONLY."""
    if path[0] in ("papers", "data") and len(path) >= 3 and path[2] == "resources":
        return True
    if path[0] == "data" and len(path) >= 3:
        section = overlay["data"][path[1]]
        default = load_strict(DEFAULT)["data"][path[1]]
        if section.get("source", default.get("source")) != default.get("source"):
            return True
    return any(fnmatch.fnmatchcase(".".join(path), pattern) for pattern in SCALE_ONLY)


def _added_keys(default: dict, overlay: dict, path: list[str]) -> list[list[str]]:
    added = []
    for key, value in overlay.items():
        here = [*path, str(key)]
        if key not in default:
            added.append(here)
        elif isinstance(value, dict) and isinstance(default[key], dict):
            added += _added_keys(default[key], value, here)
    return added


def _redundant_keys(default: dict, overlay: dict, path: list[str]) -> list[str]:
    same = []
    for key, value in overlay.items():
        here = [*path, str(key)]
        if isinstance(value, dict) and isinstance(default.get(key), dict):
            same += _redundant_keys(default[key], value, here)
        elif key in default and default[key] == value and here != ["scale"]:
            same.append(".".join(here))
    return same


def test_merged_full_config_validates():
    validate_config(_merged(), SCHEMA)
    assert _merged()["scale"] == "full"


def test_every_overlay_key_exists_in_the_default_or_is_an_allowed_addition():
    overlay = load_strict(OVERLAY)
    stray = [".".join(p) for p in _added_keys(load_strict(DEFAULT), overlay, []) if not _allowed_addition(p, overlay)]
    assert not stray, f"config/full.yaml sets keys the default lacks: {stray} (see the header of full.yaml)"


def test_overlay_holds_only_what_differs():
    same = _redundant_keys(load_strict(DEFAULT), load_strict(OVERLAY), [])
    assert not same, f"config/full.yaml repeats default values: {same}"


def test_allowed_additions_reject_a_typo():
    overlay = load_strict(OVERLAY)
    assert not _allowed_addition(["papers", "talda", "iteratons"], overlay)
    assert _allowed_addition(["papers", "talda", "resources", "train"], overlay)


@pytest.mark.parametrize("path", [DEFAULT, OVERLAY], ids=["config.yaml", "full.yaml"])
def test_shipped_config_files_have_no_duplicate_key(path):
    """Also keeps one block per paper in full.yaml: a second `papers.<slug>` block is a duplicate key."""
    check_config_files([path])


def test_duplicate_key_names_file_line_and_key(tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("papers:\n  talda:\n    iterations: 10\n    mu: 0.1\n    iterations: 20\n")
    with pytest.raises(ConfigError, match=r"mine\.yaml:5: key 'iterations' is set twice .*first on line 3"):
        load_strict(bad)
    assert yaml.safe_load(bad.read_text())["papers"]["talda"]["iterations"] == 20, "plain YAML keeps the last"


def test_equal_keys_in_different_mappings_and_merge_overrides_are_fine(tmp_path):
    ok = tmp_path / "ok.yaml"
    ok.write_text("a: &base {x: 1, y: 1}\nb: {x: 2}\nc:\n  <<: *base\n  x: 3\n")
    assert load_strict(ok) == {"a": {"x": 1, "y": 1}, "b": {"x": 2}, "c": {"x": 3, "y": 1}}


@pytest.mark.parametrize("which", ["default", "configfile"])
def test_snakemake_stops_on_a_duplicate_key(tmp_path, which):
    work = copy_workflow(tmp_path / "wf")
    args = ["-n", "talda"]
    if which == "default":
        cfg = work / "config/config.yaml"
        cfg.write_text(cfg.read_text().replace("scale: smoke\n", "scale: smoke\nscale: full\n", 1))
        expected = "config/config.yaml:"
    else:
        (work / "user.yaml").write_text("seed: 1\nseed: 2\n")
        args += ["--configfile", "user.yaml"]
        expected = "user.yaml:2: key 'seed' is set twice"
    proc = snakemake(work, *args, check=False)
    assert proc.returncode != 0
    assert expected in proc.stdout + proc.stderr


def test_load_config_merges_as_snakemake_does():
    assert load_config("config/full.yaml") == _merged()
    assert load_config() == load_strict(DEFAULT)
