"""Train -> evaluate on a tiny synthetic set: outputs, claims computed from the numbers, resumable training."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from test_spectra_process import SECTION, _run

from repro.entry import Job
from repro.papers.nmrshift import evaluate, train

SETTINGS = {
    "nuclei": ["1H"],
    "folds": [0],
    "n_labelled": 6,
    "model": {"backbone": "environment_mlp", "width": 16, "layers": 2, "kernels": 8, "dropout": 0.0},
    "train": {
        "epochs": 2,
        "steps_per_epoch": 10,
        "batch_labelled": 2,
        "batch_unlabelled": 4,
        "lr": 0.003,
        "warmup": 0.03,
        "lambda": 1.0,
        "grad_clip": 1.0,
    },
    "variants": {
        "supervised": {"labelled": True, "unlabelled_fraction": 0.0, "matching": "sort", "solvent": "cls"},
        "semi": {"labelled": True, "unlabelled_fraction": 1.0, "matching": "sort", "solvent": "cls"},
    },
    "curve": ["supervised", "semi"],
    "claims": {
        "identity_pairs": 50,
        "identity_max_size": 10,
        "semi_ratio_below": 1.0,
        "twin_rel_diff": 0.05,
        "collapse_ratio_above": 1.5,
    },
}


@pytest.fixture(scope="module")
def spectra(tmp_path_factory, repo):
    section = {**SECTION, "embedded": {**SECTION["embedded"], "n_labelled": 20, "malformed_fraction": 0.0}}
    return _run(tmp_path_factory.mktemp("nmr"), repo, section)


def _train(spectra, tmp, variant):
    out = tmp / f"{variant}.parquet"
    job = Job(
        SimpleNamespace(labelled=spectra.labelled, unlabelled=spectra.unlabelled),
        SimpleNamespace(predictions=str(out)),
        SimpleNamespace(settings=SETTINGS, seed=0, device="cpu", checkpoints=str(tmp / "ckpt" / variant)),
        SimpleNamespace(nucleus="1H", variant=variant),
    )
    train.main(job)
    return out


def test_train_evaluate_writes_metrics_and_computed_claims(spectra, tmp_path, repo):
    preds = [str(_train(spectra, tmp_path, v)) for v in ("supervised", "semi")]
    out = SimpleNamespace(
        metrics=str(tmp_path / "metrics.json"),
        claims=str(tmp_path / "claims.json"),
        pairs=str(tmp_path / "pairs.parquet"),
    )
    params = SimpleNamespace(
        settings={**SETTINGS, "reported_file": str(repo / "resources/nmrshift/reported.yaml")}, seed=0, scale="smoke"
    )
    evaluate.main(
        Job(SimpleNamespace(predictions=preds, labelled=spectra.labelled, unlabelled=spectra.unlabelled), out, params)
    )
    metrics = json.loads(open(out.metrics).read())
    for key in ("1H/supervised", "1H/semi"):
        block = metrics["variants"][key]
        assert block["L_mol"]["mae"] <= block["L_atom"]["mae"] + 1e-9
        assert block["L_atom"]["n_atoms"] > 0 and block["set_literature"]["n_atoms"] > 0
    claims = {c["id"]: c for c in json.loads(open(out.claims).read())["claims"]}
    semi = claims["semi_beats_supervised_1H"]
    assert semi["ours"] == pytest.approx(semi["details"]["semi_mae"] / semi["details"]["supervised_mae"])
    assert semi["verdict"] == ("pass" if semi["ours"] < 1.0 else "fails")
    assert claims["sort_equals_hungarian"]["verdict"] == "pass"


def test_rerun_resumes_from_checkpoint_with_identical_predictions(spectra, tmp_path):
    first = pd.read_parquet(_train(spectra, tmp_path, "semi"))
    again = pd.read_parquet(_train(spectra, tmp_path, "semi"))
    for a, b in zip(first["pred"], again["pred"]):
        np.testing.assert_array_equal(a, b)


def test_transformer_backbone_trains_through_the_same_path(spectra, tmp_path):
    settings = {
        **SETTINGS,
        "model": {"backbone": "transformer", "width": 16, "layers": 1, "heads": 2, "kernels": 8, "dropout": 0.0},
        "train": {**SETTINGS["train"], "epochs": 1, "steps_per_epoch": 3},
    }
    out = tmp_path / "t.parquet"
    job = Job(
        SimpleNamespace(labelled=spectra.labelled, unlabelled=spectra.unlabelled),
        SimpleNamespace(predictions=str(out)),
        SimpleNamespace(settings=settings, seed=0, device="cpu", checkpoints=str(tmp_path / "ck")),
        SimpleNamespace(nucleus="13C", variant="semi"),
    )
    train.main(job)
    frame = pd.read_parquet(out)
    assert set(frame["kind"]) == {"labelled", "unlabelled"}
    assert all(np.isfinite(p).all() for p in frame["pred"])
