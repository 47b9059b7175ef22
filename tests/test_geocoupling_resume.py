"""GeoCoupling training interrupted inside its loop and rerun ends with the same samples bit for bit."""

from types import SimpleNamespace as NS

import pytest
from interrupt import Interrupted, interrupted_at, same_arrays

from repro.papers.geocoupling import data, train

SETTINGS = {
    "seeds": [0, 1],
    "jitter": 0.05,
    "couplings": ["synchronous", "random", "learned"],
    "model": {"hidden": 8},
    "train": {"epochs": 4, "steps_per_epoch": 3, "batch": 16, "lr": 0.01, "checkpoint_every": 1},
    "sampling": {"samples": 20, "steps": 4},
    "search": {"alpha_range": [0.25, 4.0], "initial": [0.5, 2.0], "rounds": 1, "per_round": 1},
    "time_check_pairs": 8,
}


@pytest.fixture(scope="module")
def lattice(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("geocoupling")
    out = NS(benchmark=str(tmp / "benchmark.npz"), manifest=str(tmp / "manifest.json"))
    data.main(
        NS(
            params=NS(
                settings={
                    "benchmark": "hp_lattice",
                    "residues": 8,
                    "designable": -2,
                    "val_fraction": 0.2,
                    "data_seed": 0,
                }
            ),
            output=out,
        )
    )
    return out.benchmark


def run(lattice, tmp_path, name):
    job = NS(
        input=NS(benchmark=lattice, code=[train.__file__]),
        output=NS(runs=str(tmp_path / f"{name}.npz")),
        params=NS(settings=SETTINGS, seed=0, checkpoints=str(tmp_path / f"ckpt_{name}")),
        threads=1,
    )
    train.main(job)
    return job.output.runs


def test_interrupted_training_resumes_bit_for_bit(lattice, tmp_path, monkeypatch):
    reference = run(lattice, tmp_path, "reference")
    with interrupted_at(monkeypatch, 2) as hits, pytest.raises(Interrupted):
        run(lattice, tmp_path, "resumed")
    assert hits == [2]
    assert list((tmp_path / "ckpt_resumed").glob("*.pt")), "no checkpoint written before the interruption"
    resumed = run(lattice, tmp_path, "resumed")
    same_arrays(reference, resumed)
