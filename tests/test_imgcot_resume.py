"""ImgCoT's training interrupted inside its loop and rerun ends bit for bit where an uninterrupted run ends."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pandas as pd
import pytest
from interrupt import Interrupted, interrupted_at
from test_imgcot_method import SMALL

from repro.papers.imgcot import data, train
from repro.workflow.io import read_json

SETTINGS = {
    "latent": {"n_latent": 2, "codebook": 8, "dim": 4},
    "tokenizer": {"epochs": 3, "batches_per_epoch": 2, "batch": 8, "lr": 0.01, "hidden": 8},
    "lm": {
        "d_model": 16,
        "layers": 1,
        "heads": 2,
        "epochs": 2,
        "finetune_epochs": 2,
        "batches_per_epoch": 2,
        "batch": 8,
        "lr": 0.01,
    },
}


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("imgcot")
    out = NS(problems=str(tmp / "p.parquet"), images=str(tmp / "i.zarr"), manifest=str(tmp / "m.json"))
    data.main(NS(params=NS(settings=SMALL), output=out))
    return out


def run(problems, tmp_path, name: str) -> tuple[pd.DataFrame, dict]:
    out = NS(predictions=str(tmp_path / f"{name}.parquet"), tokenizers=str(tmp_path / f"{name}.json"))
    job = NS(
        input=NS(problems=problems.problems, images=problems.images, code=[train.__file__]),
        output=out,
        params=NS(settings=SETTINGS, seed=0, device="cpu", checkpoints=str(tmp_path / f"ckpt_{name}")),
        threads=1,
    )
    train.main(job)
    return pd.read_parquet(out.predictions).drop(columns="decode_seconds"), read_json(out.tokenizers)


def test_interrupted_training_resumes_bit_for_bit(problems, tmp_path, monkeypatch):
    reference = run(problems, tmp_path, "reference")
    with interrupted_at(monkeypatch, 1) as hits, pytest.raises(Interrupted):
        run(problems, tmp_path, "resumed")
    assert hits == [1]
    assert list((tmp_path / "ckpt_resumed").glob("*.pt")), "no checkpoint written before the interruption"
    resumed = run(problems, tmp_path, "resumed")
    pd.testing.assert_frame_equal(reference[0], resumed[0])
    assert reference[1] == resumed[1]
    assert set(reference[0]["method"]) == set(train.METHODS)
