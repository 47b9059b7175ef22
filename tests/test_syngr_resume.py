"""SynGR training interrupted inside its loop and rerun ends bit for bit where an uninterrupted run ends."""

from types import SimpleNamespace as NS

import pytest
from interrupt import Interrupted, interrupted_at, same_arrays
from test_syngr_model import SYNTHETIC

from repro.papers.syngr import benchmark, train
from repro.papers.syngr.synthetic import generate

SECTION = {
    "variants": {"tiny": ["syngr"]},
    "seeds": [0],
    "model": {"d": 16, "heads": 2, "layers": 1, "ff": 32},
    "train": {"epochs": 3, "batch": 32, "lr": 0.01, "weight_decay": 0.01, "history": 3},
    "synergy": {"ratio": 0.3, "weight": 0.1, "temperature": 0.07},
    "eval": {"beams": 5, "ks": [1, 5]},
}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    path = tmp_path_factory.mktemp("syngr") / "tiny.npz"
    b = generate(SYNTHETIC, 0, 3.0)
    codes = benchmark.quantise(b.text, b.image, {"levels": 2, "codebook": 4, "fused_dims": 2, "iterations": 5}, 0)
    benchmark.write(path, b.text, b.image, b.sequences, codes, b.synergy)
    return str(path)


def run(bench: str, out) -> None:
    job = NS(
        input=NS(benchmark=bench, code=[train.__file__]),
        output=NS(runs=str(out / "runs" / "tiny.npz")),
        params=NS(settings=SECTION, device="cpu"),
        wildcards=NS(benchmark="tiny"),
        threads=1,
    )
    train.main(job)


def test_interrupted_training_resumes_bit_for_bit(bench, tmp_path, monkeypatch):
    run(bench, tmp_path / "plain")
    with interrupted_at(monkeypatch, 2) as hits, pytest.raises(Interrupted):
        run(bench, tmp_path / "resumed")
    assert hits == [2]
    assert list((tmp_path / "resumed" / "runs" / "checkpoints" / "tiny").glob("*.pt"))
    run(bench, tmp_path / "resumed")
    same_arrays(tmp_path / "plain" / "runs" / "tiny.npz", tmp_path / "resumed" / "runs" / "tiny.npz")
