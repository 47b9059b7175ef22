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

from repro.data.atlas.embedded import build_embedded  # noqa: E402
from repro.data.atlas.preprocess import naive_read_replicate, process_protein  # noqa: E402


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
    path = next((root / name).glob(f"{name}_prod_R{rep}_fit.xtc"))
    n_frames = len(md.open(str(path)))
    ours = timed(lambda: process_protein(root, name, out, stride=stride, replicates=[rep]))
    naive = timed(lambda: naive_read_replicate(path, root / name / f"{name}.pdb", stride))
    print(f"{name} R{rep}: {n_frames} frames, stride {stride}: ours {n_frames / ours:,.0f} frames/s "
          f"({ours:.2f} s), naive {n_frames / naive:,.0f} frames/s ({naive:.2f} s), speed-up {naive / ours:.2f}x")


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
