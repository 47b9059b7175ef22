"""The real-chains variant end to end on a tiny chains table in the structures source's layout."""

import json
from types import SimpleNamespace as NS

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from repro.data.structures import COLUMNS
from repro.metrics.protein_geometry import build_backbone, rmsd
from repro.papers.geocoupling import data, evaluate, train
from repro.papers.geocoupling.chains import AMINO, ChainScorer, ca_angles, rebuild
from repro.workflow.io import InputError

HELIX, STRAND = (-1.1, -0.8), (-2.3, 2.3)
SETTINGS = {
    "benchmark": "chains",
    "residues": 10,
    "designable": -3,
    "val_fraction": 0.2,
    "data_seed": 0,
    "chains": {"window": 7, "stride": 1, "codebook": 4, "classifier_c": 1.0, "clash_distance": 3.0},
    "seeds": [0, 1],
    "jitter": 0.05,
    "couplings": ["synchronous", "random", "learned"],
    "model": {"hidden": 8},
    "train": {"epochs": 2, "steps_per_epoch": 2, "batch": 8, "lr": 0.01, "checkpoint_every": 1},
    "sampling": {"samples": 12, "steps": 3},
    "search": {"alpha_range": [0.25, 4.0], "initial": [0.5, 2.0], "rounds": 0, "per_round": 1},
    "time_check_pairs": 8,
}


def chain_row(k: int, rng) -> dict:
    """A chain whose helix-former residues (A, L, E) sit in helices and the others in strands."""
    length = 40
    seq = "".join(rng.choice(list(AMINO), size=length))
    helical = np.array([r in "ALE" for r in seq])
    phi = np.where(helical, HELIX[0], STRAND[0]) + 0.05 * rng.standard_normal(length)
    psi = np.where(helical, HELIX[1], STRAND[1]) + 0.05 * rng.standard_normal(length)
    backbone = build_backbone(phi, psi).astype(np.float32)
    split = "val" if k % 4 == 0 else "train"
    return dict(
        chain_id=f"c{k}",
        source_file=f"c{k}.pdb",
        licence="test",
        sequence=seq,
        n_residues=length,
        backbone=backbone.reshape(-1),
        dssp="C" * length,
        split=split,
    )


@pytest.fixture(scope="module")
def chains_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    rows = [chain_row(k, rng) for k in range(12)]
    table = pa.table({c: [r[c] for r in rows] for c in COLUMNS})
    path = tmp_path_factory.mktemp("chains") / "chains.parquet"
    pq.write_table(table, path)
    return str(path)


def make_benchmark(chains_file, tmp_path, settings=SETTINGS):
    out = NS(benchmark=str(tmp_path / "benchmark.npz"), manifest=str(tmp_path / "manifest.json"))
    data.main(NS(params=NS(settings=settings), input=NS(chains=chains_file), output=out))
    return out


def test_rebuilding_a_trace_from_its_own_angles_is_exact():
    ca = build_backbone(np.full(12, -1.0), np.full(12, -0.7))[:, 1].astype(np.float64)
    theta, tau = ca_angles(ca)
    j = np.arange(len(ca) - 3)
    centroids = np.stack([theta[j + 2], tau[j]], -1)
    u, v = ca[0] - ca[1], ca[2] - ca[1]
    first = np.arccos(u @ v / np.linalg.norm(u) / np.linalg.norm(v))
    bond = np.linalg.norm(np.diff(ca, axis=0), axis=1)
    assert np.allclose(bond, bond[0], atol=0.05)  # ideal geometry: one CA-CA distance
    traced = rebuild(j[None], centroids, first)[0] * bond[0] / 3.8
    assert rmsd(traced, ca) < 1e-3


def test_chains_benchmark_scores_real_pairs_above_shuffled_ones(chains_file, tmp_path):
    out = make_benchmark(chains_file, tmp_path)
    bench = dict(np.load(out.benchmark))
    assert bench["train_seq"].shape[1] == 7 and bench["train_struct"].shape[1] == 4
    score = ChainScorer(bench)
    real = score(bench["val_seq"], bench["val_struct"])
    shuffled = score(bench["val_seq"], np.random.default_rng(1).permutation(bench["val_struct"]))
    assert real["validity"] == 1.0 and real["consistency"] > shuffled["consistency"] + 0.1
    assert json.loads(open(out.manifest).read())["counts"]["val_windows"] == len(bench["val_seq"])


def test_too_few_windows_are_named(chains_file, tmp_path):
    settings = SETTINGS | {"chains": SETTINGS["chains"] | {"window": 39, "codebook": 100}}
    with pytest.raises(InputError, match="too few windows"):
        make_benchmark(chains_file, tmp_path, settings)


def test_train_and_evaluate_run_on_chains_without_the_lattice_checks(chains_file, tmp_path, repo):
    out = make_benchmark(chains_file, tmp_path)
    runs = str(tmp_path / "runs.npz")
    train.main(
        NS(
            input=NS(benchmark=out.benchmark, code=[train.__file__]),
            output=NS(runs=runs),
            params=NS(settings=SETTINGS, seed=0, checkpoints=str(tmp_path / "ckpt")),
            threads=1,
        )
    )
    result = NS(metrics=str(tmp_path / "metrics.json"), claims=str(tmp_path / "claims.json"))
    evaluate.main(
        NS(
            input=NS(
                benchmark=out.benchmark,
                runs=runs,
                saw_counts=str(repo / "resources/geocoupling/saw_counts.yaml"),
                reported=str(repo / "resources/geocoupling/reported.yaml"),
            ),
            output=result,
            params=NS(settings=SETTINGS, scale="smoke"),
        )
    )
    claims = json.loads(open(result.claims).read())
    ids = {c["id"] for c in (claims["claims"] if isinstance(claims, dict) else claims)}
    assert "geocoupling_learned_beats_synchronous" in ids and "geocoupling_enumeration_counts" not in ids
    metrics = json.loads(open(result.metrics).read())
    assert set(metrics["per_coupling"]) == {"synchronous", "random", "learned"}
