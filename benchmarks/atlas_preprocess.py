"""Preprocessing throughput: ours (only needed atoms, chunked, stride at read) vs the naive path.

Naive path: load every atom of every frame, then select heavy atoms, superpose, stride.
Data: the embedded AdK replicates (real MD, ~100 frames each) and a generated trajectory
of N frames (default 10,000; AdK heavy-atom topology with small random motions) written
as xtc. Prints frames per second (frames read from the file) for both paths.

Usage: python benchmarks/atlas_preprocess.py [--frames 10000] [--stride 40]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import mdtraj as md
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from repro.data.atlas.atom14 import gather_atom14  # noqa: E402
from repro.data.atlas.embedded import build_embedded  # noqa: E402
from repro.data.atlas.preprocess import (
    load_topology,
    naive_read_replicate,
    process_protein,  # noqa: E402
    read_replicate,
    select_atoms,
)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def make_long(root: Path, frames: int) -> None:
    """A long synthetic replicate of AdK (real topology, random-walk-free thermal noise) in the ATLAS layout."""
    src = root / "adk"
    top = md.load(str(src / "adk.pdb"))
    rng = np.random.default_rng(0)
    xyz = top.xyz[0][None] + rng.normal(scale=0.02, size=(frames, top.n_atoms, 3)).astype(np.float32)
    out = root / "adklong"
    out.mkdir()
    top.save_pdb(str(out / "adklong.pdb"))
    md.Trajectory(xyz, top.topology).save_xtc(str(out / "adklong_prod_R1_fit.xtc"))


def bench(root: Path, name: str, rep: int, stride: int, out: Path) -> None:
    """Read-only and full (read + atom14 + save) throughput of both paths, best of 2 runs."""
    path = next((root / name).glob(f"{name}_prod_R{rep}_fit.xtc"))
    top_path = root / name / f"{name}.pdb"
    n_frames = len(md.open(str(path)))
    top = load_topology(top_path, name)
    sel = select_atoms(top, top_path, name)
    out.mkdir(parents=True, exist_ok=True)

    def naive_full():
        xyz = naive_read_replicate(path, top_path, stride)
        np.save(out / "naive_atom14.npy", gather_atom14(xyz, sel.atom14).astype(np.float16))
        np.save(out / "naive_ca.npy", xyz[:, sel.ca].astype(np.float32))

    runs = {
        "ours read": lambda: read_replicate(path, top, sel, stride, name),
        "naive read": lambda: naive_read_replicate(path, top_path, stride),
        "ours full": lambda: process_protein(root, name, out / "ours", stride=stride, replicates=[rep]),
        "naive full": naive_full,
    }
    times = {k: min(timed(fn) for _ in range(2)) for k, fn in runs.items()}
    cells = ", ".join(f"{k} {n_frames / t:,.0f} frames/s ({t:.2f} s)" for k, t in times.items())
    print(
        f"{name} R{rep}: {n_frames} frames, stride {stride}: {cells}; "
        f"speed-up read {times['naive read'] / times['ours read']:.2f}x, full {times['naive full'] / times['ours full']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=10000)
    parser.add_argument("--stride", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "raw"
        root.mkdir()
        build_embedded(root)
        for rep in (1, 2, 3):
            bench(root, "adk", rep, 1, Path(tmp) / f"out{rep}")
        make_long(root, args.frames)
        bench(root, "adklong", 1, 1, Path(tmp) / "long1")
        bench(root, "adklong", 1, args.stride, Path(tmp) / "long40")


if __name__ == "__main__":
    main()
