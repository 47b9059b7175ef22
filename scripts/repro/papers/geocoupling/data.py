"""Stage: the benchmark under results/geocoupling/data/ (config ``benchmark``).

- benchmark.npz, hp_lattice: the symmetry-reduced conformations (turn strings), the energy of every (sequence,
  conformation), each sequence's ground-state energy and degeneracy, the walk count c_{n-1}, and the
  training / validation pairs (sequence bits, one ground-state turn string) of the designable sequences
  (E_min <= threshold), split by sequence;
- benchmark.npz, chains: windows of the structures source's train/val chains (see
  :mod:`repro.papers.geocoupling.chains`);
- manifest.json: settings, counts and sha256.
"""

from __future__ import annotations

import numpy as np

from repro.papers.geocoupling.lattice import sequence_bits, solve
from repro.workflow.io import InputError, atomic_path, sha256, write_json


def ground_state_pairs(energy: np.ndarray, e_min: np.ndarray, sequences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sequence, conformation index) of every ground state of ``sequences``."""
    hit = energy[sequences] == e_min[sequences, None]
    rows, conf = np.nonzero(hit)
    return sequences[rows], conf


def chains_benchmark(job) -> None:
    from repro.data.structures import read_chains
    from repro.papers.geocoupling.chains import build

    settings = job.params.settings
    try:
        arrays = build(read_chains(job.input.chains), settings["chains"], int(settings["data_seed"]))
    except ValueError as err:
        raise InputError(job.input.chains, str(err)) from err
    with atomic_path(job.output.benchmark) as tmp:
        np.savez(tmp, benchmark="chains", **arrays)
    write_json(
        job.output.manifest,
        {
            "source": "structures",
            "generator": "repro.papers.geocoupling.data (backbone windows of the structures source)",
            "settings": settings,
            "counts": {"train_windows": len(arrays["train_seq"]), "val_windows": len(arrays["val_seq"])},
            "files": {"benchmark.npz": {"sha256": sha256(job.output.benchmark)}},
        },
    )


def main(job) -> None:
    settings = job.params.settings
    if settings["benchmark"] == "chains":
        chains_benchmark(job)
        return
    n, threshold = int(settings["residues"]), int(settings["designable"])
    lattice = solve(n)
    designable = np.flatnonzero(lattice.e_min <= threshold)
    order = np.random.default_rng(int(settings["data_seed"])).permutation(designable)
    n_val = int(round(settings["val_fraction"] * len(order)))
    splits = {"val": np.sort(order[:n_val]), "train": np.sort(order[n_val:])}
    arrays = {
        "turns": lattice.turns,
        "energy": lattice.energy,
        "e_min": lattice.e_min,
        "degeneracy": lattice.degeneracy,
        "index_of_code": lattice.index_of_code,
        "walks": np.int64(lattice.walks),
        "designable": np.int64(threshold),
        "benchmark": "hp_lattice",
        "seq_vocab": np.int64(2),
        "struct_vocab": np.int64(3),
    }
    for split, seqs in splits.items():
        seq, conf = ground_state_pairs(lattice.energy, lattice.e_min, seqs)
        arrays[f"{split}_seq"] = sequence_bits(n, seq)
        arrays[f"{split}_struct"] = lattice.turns[conf]
        arrays[f"{split}_conf"] = conf
    with atomic_path(job.output.benchmark) as tmp:
        np.savez(tmp, **arrays)
    write_json(
        job.output.manifest,
        {
            "source": "embedded",
            "generator": "repro.papers.geocoupling.data (exhaustive HP-lattice enumeration)",
            "settings": settings,
            "counts": {
                "walks": int(lattice.walks),
                "conformations": len(lattice.turns),
                "designable_sequences": len(designable),
                "train_pairs": len(arrays["train_seq"]),
                "val_pairs": len(arrays["val_seq"]),
            },
            "files": {"benchmark.npz": {"sha256": sha256(job.output.benchmark)}},
        },
    )
