"""Train -> evaluate on a tiny synthetic set: outputs, claims computed from the numbers, resumable training."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from interrupt import Interrupted, interrupted_at
from test_spectra_process import SECTION, _run

from repro.papers.nmrshift import evaluate, train
from repro.workflow.entry import Job

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
    "claims": {"identity_pairs": 50, "identity_max_size": 10},
}


@pytest.fixture(scope="module")
def spectra(tmp_path_factory, repo):
    section = {**SECTION, "embedded": {**SECTION["embedded"], "n_labelled": 20, "malformed_fraction": 0.0}}
    return _run(tmp_path_factory.mktemp("nmr"), repo, section)


def _train(spectra, tmp, variant, name=None):
    out = tmp / f"{name or variant}.parquet"
    job = Job(
        SimpleNamespace(labelled=spectra.labelled, unlabelled=spectra.unlabelled, code=[train.__file__]),
        SimpleNamespace(**{f"predictions_1H_{variant}": str(out)}),
        SimpleNamespace(
            settings=SETTINGS,
            seed=0,
            device="cpu",
            checkpoints=str(tmp / "ckpt" / (name or variant)),
            runs=[("1H", variant)],
        ),
    )
    train.main(job)
    return out


def test_runs_grouped_in_one_job_equal_runs_in_jobs_of_their_own(spectra, tmp_path):
    alone = [pd.read_parquet(_train(spectra, tmp_path, v)) for v in ("supervised", "semi")]
    outputs = {f"predictions_1H_{v}": str(tmp_path / f"grouped_{v}.parquet") for v in ("supervised", "semi")}
    job = Job(
        SimpleNamespace(labelled=spectra.labelled, unlabelled=spectra.unlabelled, code=[train.__file__]),
        SimpleNamespace(**outputs),
        SimpleNamespace(
            settings=SETTINGS,
            seed=0,
            device="cpu",
            checkpoints=str(tmp_path / "ckpt" / "grouped"),
            runs=[("1H", "supervised"), ("1H", "semi")],
        ),
    )
    train.main(job)
    for frame, path in zip(alone, outputs.values()):
        grouped = pd.read_parquet(path)
        assert len(grouped) == len(frame) and all(np.array_equal(a, b) for a, b in zip(frame["pred"], grouped["pred"]))


def test_train_evaluate_writes_metrics_and_computed_claims(spectra, tmp_path, repo):
    preds = [str(_train(spectra, tmp_path, v)) for v in ("supervised", "semi")]
    out = SimpleNamespace(
        metrics=str(tmp_path / "metrics.json"),
        claims=str(tmp_path / "claims.json"),
        pairs=str(tmp_path / "pairs.parquet"),
    )
    params = SimpleNamespace(settings=SETTINGS, seed=0, scale="smoke")
    inputs = SimpleNamespace(
        predictions=preds,
        labelled=spectra.labelled,
        unlabelled=spectra.unlabelled,
        reported=str(repo / "resources/nmrshift/reported.yaml"),
    )
    evaluate.main(Job(inputs, out, params))
    metrics = json.loads(open(out.metrics).read())
    for key in ("1H/supervised", "1H/semi"):
        block = metrics["variants"][key]
        assert block["L_mol"]["mae"] <= block["L_atom"]["mae"] + 1e-9
        assert block["L_atom"]["n_atoms"] > 0 and block["set_literature"]["n_atoms"] > 0
    claims = {c["id"]: c for c in json.loads(open(out.claims).read())["claims"]}
    semi = claims["semi_beats_supervised_1H"]
    pooled = metrics["variants"]["1H/semi"]["L_atom"]["mae"] / metrics["variants"]["1H/supervised"]["L_atom"]["mae"]
    assert semi["ours"] == pytest.approx(pooled)
    assert semi["interval"]["low"] <= semi["ours"] <= semi["interval"]["high"]
    # weak_only did not run: its learning check has no input (fails), so the claim resting on it is inconclusive
    assert claims["weak_only_collapse"]["ours"] is None and claims["learn_weak_only_1H"]["verdict"] == "fails"
    assert claims["weak_only_collapse"]["verdict"] == "inconclusive"
    assert claims["sort_equals_hungarian"]["verdict"] == "pass"


def test_interrupted_training_resumes_bit_for_bit(spectra, tmp_path, monkeypatch):
    """Raised inside the loop at epoch 1 (after the epoch-0 checkpoint), rerun: the same predictions."""
    first = pd.read_parquet(_train(spectra, tmp_path, "semi"))
    with interrupted_at(monkeypatch, 1) as hits, pytest.raises(Interrupted):
        _train(spectra, tmp_path, "semi", name="resumed")
    assert hits == [1] and list((tmp_path / "ckpt" / "resumed").rglob("*.pt"))
    again = pd.read_parquet(_train(spectra, tmp_path, "semi", name="resumed"))
    assert len(first) == len(again)
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
        SimpleNamespace(labelled=spectra.labelled, unlabelled=spectra.unlabelled, code=[train.__file__]),
        SimpleNamespace(predictions_13C_semi=str(out)),
        SimpleNamespace(
            settings=settings, seed=0, device="cpu", checkpoints=str(tmp_path / "ck"), runs=[("13C", "semi")]
        ),
    )
    train.main(job)
    frame = pd.read_parquet(out)
    assert set(frame["kind"]) == {"labelled", "unlabelled"}
    assert all(np.isfinite(p).all() for p in frame["pred"])
