"""Stage: the co-design benchmark under results/geocoupling/data/.

- benchmark.npz: backbone windows of the structures source's train / val / test chains
  (:mod:`repro.papers.geocoupling.windows`): training sequences and standardised structure vectors, the
  validation and test windows (sequences and backbones, the references of the nearest-fragment RMSD), the
  standardisation, and what the scores need, all fitted on the training windows only: the bond-length and
  bond-angle ranges and the clash distance of real backbones, and the sequence -> secondary-structure predictor
  (labels: each real training window's own DSSP) (:mod:`repro.papers.geocoupling.scores`);
- lattice.npz: the exactly solved HP lattice of the search check (:mod:`repro.papers.geocoupling.search_check`);
- manifest.json: settings, counts and sha256.
"""

from __future__ import annotations

import numpy as np

from repro.papers.geocoupling import scores
from repro.papers.geocoupling.lattice import solve
from repro.papers.geocoupling.windows import Standardiser, features, windows
from repro.workflow.io import InputError, atomic_path, sha256, write_json


def window_arrays(chains, cfg: dict) -> dict[str, np.ndarray]:
    """Everything benchmark.npz holds, from the chains (train / val / test splits of the structures source)."""
    width, stride = int(cfg["windows"]["width"]), int(cfg["windows"]["stride"])
    parts = {split: windows(chains, split, width, stride) for split in ("train", "val", "test")}
    counts = {split: len(p[0]) for split, p in parts.items()}
    if min(counts.values()) < 2:
        raise ValueError(f"too few windows of {width} standard residues without a chain break: {counts}")
    train_seq, train_bb, _ = parts["train"]
    standard = Standardiser.fit(features(train_bb))
    score_cfg = cfg["scores"]
    labels = scores.dssp_classes(train_bb)
    coef, intercept = scores.fit_predictor(train_seq, labels, float(score_cfg["predictor_c"]))
    reference = scores.geometry_reference(train_bb, float(score_cfg["geometry_quantile"]),
                                          float(score_cfg["clash_quantile"]), float(score_cfg["rama_mass"]))  # fmt: skip
    out = {
        "train_seq": train_seq,
        "train_x": standard.encode(train_bb).astype(np.float32),
        "train_class_counts": np.bincount(labels.ravel(), minlength=len(scores.CLASSES)),
        "feature_mean": standard.mean,
        "feature_scale": standard.scale,
        "width": np.int64(width),
        "predictor_coef": coef,
        "predictor_intercept": intercept,
        **reference,
    }
    for split in ("val", "test"):
        seq, bb, ids = parts[split]
        out[f"{split}_seq"], out[f"{split}_backbone"] = seq, bb.astype(np.float32)
        out[f"{split}_ids"] = np.array(ids)
    return out


def lattice_arrays(cfg: dict) -> dict[str, np.ndarray]:
    lat = solve(int(cfg["residues"]))
    return {
        "turns": lat.turns,
        "energy": lat.energy,
        "e_min": lat.e_min,
        "degeneracy": lat.degeneracy,
        "index_of_code": lat.index_of_code,
        "walks": np.int64(lat.walks),
        "designable": np.int64(cfg["designable"]),
    }


def main(job) -> None:
    from repro.data.structures import read_chains

    settings = job.params.settings
    try:
        arrays = window_arrays(read_chains(job.input.chains), settings)
    except ValueError as err:
        raise InputError(job.input.chains, str(err)) from err
    with atomic_path(job.output.benchmark) as tmp:
        np.savez(tmp, **arrays)
    lattice = lattice_arrays(settings["search_check"])
    with atomic_path(job.output.lattice) as tmp:
        np.savez(tmp, **lattice)
    write_json(
        job.output.manifest,
        {
            "source": "structures (data/structures/chains.parquet) and the HP-lattice enumeration",
            "generator": "repro.papers.geocoupling.data",
            "settings": settings,
            "counts": {
                "train_windows": len(arrays["train_seq"]),
                "val_windows": len(arrays["val_seq"]),
                "test_windows": len(arrays["test_seq"]),
                "train_dssp_classes": dict(zip(scores.CLASSES, arrays["train_class_counts"].tolist())),
                "lattice_conformations": len(lattice["turns"]),
            },
            "files": {
                "benchmark.npz": {"sha256": sha256(job.output.benchmark)},
                "lattice.npz": {"sha256": sha256(job.output.lattice)},
            },
        },
    )
