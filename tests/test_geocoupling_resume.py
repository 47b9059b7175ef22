"""GeoCoupling: data -> train -> evaluate on a tiny chains table; training interrupted inside its loop and rerun
ends with the same samples bit for bit."""

import json
from types import SimpleNamespace as NS

import pytest
from geocoupling_chains import SETTINGS, write_chains
from interrupt import Interrupted, interrupted_at, same_arrays

from repro.papers.geocoupling import data, evaluate, train


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("geocoupling")
    out = NS(benchmark=str(tmp / "benchmark.npz"), lattice=str(tmp / "lattice.npz"), manifest=str(tmp / "m.json"))
    data.main(NS(params=NS(settings=SETTINGS), input=NS(chains=write_chains(tmp / "chains.parquet")), output=out))
    return out


def run(benchmark, tmp_path, name):
    job = NS(
        input=NS(benchmark=benchmark.benchmark, code=[train.__file__]),
        output=NS(runs=str(tmp_path / f"{name}.npz")),
        params=NS(settings=SETTINGS, seed=0, checkpoints=str(tmp_path / f"ckpt_{name}")),
        threads=1,
    )
    train.main(job)
    return job.output.runs


def test_interrupted_training_resumes_bit_for_bit(benchmark, tmp_path, monkeypatch):
    reference = run(benchmark, tmp_path, "reference")
    with interrupted_at(monkeypatch, 1) as hits, pytest.raises(Interrupted):
        run(benchmark, tmp_path, "resumed")
    assert hits == [1]
    assert list((tmp_path / "ckpt_resumed").glob("*.pt")), "no checkpoint written before the interruption"
    resumed = run(benchmark, tmp_path, "resumed")
    same_arrays(reference, resumed)


def test_evaluate_writes_every_claim_with_a_value(benchmark, tmp_path, repo):
    runs = run(benchmark, tmp_path, "e2e")
    out = NS(metrics=str(tmp_path / "metrics.json"), claims=str(tmp_path / "claims.json"))
    evaluate.main(
        NS(
            input=NS(
                benchmark=benchmark.benchmark,
                lattice=benchmark.lattice,
                runs=runs,
                saw_counts=str(repo / "resources/geocoupling/saw_counts.yaml"),
                reported=str(repo / "resources/geocoupling/reported.yaml"),
            ),
            output=out,
            params=NS(settings=SETTINGS, scale="smoke"),
        )
    )
    claims = json.loads(open(out.claims).read())["claims"]
    assert all(c["ours"] is not None for c in claims), [c["id"] for c in claims if c["ours"] is None]
    metrics = json.loads(open(out.metrics).read())
    assert set(metrics["per_coupling"]) == {"synchronous", "random", "learned"}
    assert len(metrics["samples"]["learned"]["untrained"]["valid"]) == 2 * SETTINGS["sampling"]["samples"]
