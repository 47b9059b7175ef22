"""HySoMi training interrupted inside its loop and rerun ends bit for bit where an uninterrupted run ends."""

from types import SimpleNamespace as NS

import pytest
from interrupt import Interrupted, interrupted_at, same_arrays
from test_metagenome_data import SECTION

from repro.data import metagenome
from repro.papers.hysomi import train

SETTINGS = {
    "n_train": [2, 4],
    "seeds": [0, 1],
    "epochs": 6,
    "lr": 0.02,
    "hidden": 8,
    "lambda_c": 1.0,
    "dt": 1.0,
    "patience": 10,
}


@pytest.fixture(scope="module")
def data(tmp_path_factory, repo):
    tmp = tmp_path_factory.mktemp("metagenome")
    out = {
        k: str(tmp / f)
        for k, f in [
            ("traits", "traits.parquet"),
            ("observations", "observations.zarr"),
            ("params_true", "params_true.parquet"),
            ("constraints", "constraints.yaml"),
            ("manifest", "manifest.json"),
        ]
    }
    metagenome.main(
        NS(
            input=NS(constraints=str(repo / "resources/hysomi/constraints.yaml")),
            output=NS(**out),
            params=NS(section={"source": "embedded", "embedded": SECTION}),
            config={"seed": 0},
        )
    )
    return out


def run(data, tmp_path, name: str, method: str) -> str:
    job = NS(
        input=NS(
            traits=data["traits"],
            observations=data["observations"],
            constraints=data["constraints"],
            code=[train.__file__],
        ),
        output=NS(**{f"run_{method}": str(tmp_path / f"{name}.npz")}),
        params=NS(
            settings=SETTINGS, seed=0, device="cpu", checkpoints=str(tmp_path / f"ckpt_{name}"), methods=[method]
        ),
        wildcards=NS(complexity="L1"),
    )
    train.main(job)
    return str(tmp_path / f"{name}.npz")


@pytest.mark.parametrize("method", ["constrained", "calibrated"])
def test_interrupted_training_resumes_bit_for_bit(data, tmp_path, monkeypatch, method):
    monkeypatch.setattr(train, "CHECKPOINT_EVERY", 2)
    reference = run(data, tmp_path, "reference", method)
    with interrupted_at(monkeypatch, 3) as hits, pytest.raises(Interrupted):
        run(data, tmp_path, "resumed", method)
    assert hits == [3]
    assert list((tmp_path / "ckpt_resumed").rglob("*.pt")), "no checkpoint written before the interruption"
    resumed = run(data, tmp_path, "resumed", method)
    same_arrays(reference, resumed)
