"""A tiny chains table in the structures source's layout, for the geocoupling tests: helix-former residues
(A, L, E) sit in helices and the others in strands, so that sequence and structure are coupled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from repro.data.structures import COLUMNS
from repro.metrics.protein_geometry import build_backbone
from repro.papers.geocoupling.windows import AMINO

HELIX, STRAND = (np.deg2rad(-62.0), np.deg2rad(-41.0)), (np.deg2rad(-120.0), np.deg2rad(130.0))
SPLITS = ("train", "train", "val", "test")

SETTINGS = {
    "data_seed": 0,
    "windows": {"width": 8, "stride": 2},
    "scores": {
        "predictor_c": 1.0,
        "geometry_quantile": 0.0005,
        "clash_quantile": 0.005,
        "rama_mass": 0.999,
        "prefilter": 8,
    },  # fmt: skip
    "seeds": [0, 1],
    "jitter": 0.05,
    "couplings": ["synchronous", "random", "learned"],
    "model": {"hidden": 16, "depth": 2},
    "train": {
        "warm_epochs": 2,
        "fine_epochs": 2,
        "steps_per_epoch": 2,
        "batch": 8,
        "lr": 0.01,
        "checkpoint_every": 1,
    },  # fmt: skip
    "sampling": {"samples": 10, "steps": 3},
    "search": {"alpha_range": [0.25, 4.0], "initial": [1.0, 2.0], "rounds": 1, "per_round": 1, "samples": 8},
    "time_check_pairs": 8,
    "search_check": {"residues": 6, "designable": -1, "samples": 40, "steps": 2, "grid": 3},
    "bootstrap_resamples": 200,
}


def chain_row(k: int, rng: np.random.Generator, length: int = 40) -> dict:
    # runs of helix formers and of others, so that windows hold whole helices and strands
    runs = rng.integers(4, 9, size=length)
    helical = np.repeat(np.arange(len(runs)) % 2 == k % 2, runs)[:length]
    seq = "".join(rng.choice(list("ALE" if h else "VITYSG")) for h in helical)
    phi = np.where(helical, HELIX[0], STRAND[0]) + 0.05 * rng.standard_normal(length)
    psi = np.where(helical, HELIX[1], STRAND[1]) + 0.05 * rng.standard_normal(length)
    backbone = build_backbone(phi, psi).astype(np.float32)
    assert set(seq) <= set(AMINO)
    return dict(chain_id=f"c{k}", source_file=f"c{k}.pdb", licence="test", sequence=seq, n_residues=length,
                backbone=backbone.reshape(-1), dssp="C" * length, split=SPLITS[k % 4])  # fmt: skip


def write_chains(path: Path, count: int = 16, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    rows = [chain_row(k, rng) for k in range(count)]
    pq.write_table(pa.table({c: [r[c] for r in rows] for c in COLUMNS}), path)
    return str(path)
