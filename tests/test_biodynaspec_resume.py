"""BioDynaSpec training interrupted inside its loop and rerun ends bit for bit where an uninterrupted run ends."""

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest
import torch
from interrupt import Interrupted, interrupted_at

from repro.data.atlas.layout import ca_name
from repro.papers.biodynaspec import train

SETTINGS = {
    "window": 4,
    "crop": 8,
    "d_model": 16,
    "layers": 1,
    "heads": 2,
    "irfc_kernels": 4,
    "diffusion_steps": 4,
    "flow_steps": 4,
    "train_replicates": [1],
    "epochs": 4,
    "batches_per_epoch": 2,
    "batch_size": 2,
    "lr": 0.001,
}


@pytest.fixture(scope="module")
def atlas(tmp_path_factory):
    """The processed ATLAS layout with one random-walk protein of 10 residues and 30 frames."""
    root = tmp_path_factory.mktemp("atlas")
    rng = np.random.default_rng(0)
    ca = np.cumsum(rng.normal(0, 0.3, (30, 10, 3)), axis=0) + np.arange(10)[None, :, None] * 3.8
    (root / "processed" / "toy").mkdir(parents=True)
    np.save(root / "processed" / "toy" / ca_name("toy", 1), ca.astype(np.float32))
    pd.DataFrame({"name": ["toy"], "replicate": [1], "sequence": ["ACDEFGHIKL"]}).to_parquet(root / "meta.parquet")
    (root / "splits").mkdir()
    pd.DataFrame({"name": ["toy"]}).to_csv(root / "splits" / "atlas_train.csv", index=False)
    return root


def run(atlas, tmp_path, name: str, model: str) -> dict:
    job = NS(
        input=NS(
            processed=str(atlas / "processed"),
            meta=str(atlas / "meta.parquet"),
            splits=str(atlas / "splits"),
            code=[train.__file__],
        ),
        output=NS(**{f"model_{model}": str(tmp_path / f"{name}.pt")}),
        params=NS(settings=SETTINGS, seed=0, device="cpu", checkpoints=str(tmp_path / f"ckpt_{name}"), models=[model]),
    )
    train.main(job)
    return torch.load(tmp_path / f"{name}.pt", weights_only=False)


@pytest.mark.parametrize("model", ["biodynaspec", "flow"])
def test_interrupted_training_resumes_bit_for_bit(atlas, tmp_path, monkeypatch, model):
    reference = run(atlas, tmp_path, "reference", model)
    with interrupted_at(monkeypatch, 2) as hits, pytest.raises(Interrupted):
        run(atlas, tmp_path, "resumed", model)
    assert hits == [2] and list((tmp_path / "ckpt_resumed").glob("*.pt"))
    resumed = run(atlas, tmp_path, "resumed", model)
    assert reference["history"] == resumed["history"]
    for key, value in reference["state"].items():
        assert torch.equal(value, resumed["state"][key]), key
