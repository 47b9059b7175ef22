"""ATLAS preprocessing throughput against mdtraj's own decode rate, and memory against trajectory length.

Data: a generated trajectory of AdK (the embedded real topology, 3,341 atoms, thermal noise around the
crystal frame) in the ATLAS layout, written as XTC in chunks. Each measurement runs in its own process
(peak resident memory from VmHWM) on the same file, in one run:

- decode: ``for chunk in mdtraj.iterload(file, chunk=1000)`` over every frame and atom (nothing else);
- naive: load every atom of every frame, select heavy atoms, superpose, stride, write atom14 + C-alpha;
- ours: ``repro.data.atlas.preprocess.process_protein`` (same outputs).

Rates are frames of the file per second. Prints naive and ours at stride 1 and ``--stride``, and the peak
memory of ours at each ``--frames`` (naive only at the first: it holds the whole trajectory).

    python benchmarks/atlas_preprocess.py --frames 10000 40000 --stride 40
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))


def make_long(root: Path, frames: int, name: str) -> Path:
    """A long synthetic replicate of AdK in the ATLAS layout, written 1,000 frames at a time."""
    import mdtraj as md

    from repro.data.atlas.embedded import build_embedded

    if not (root / "adk").exists():
        build_embedded(root)
    top = md.load(str(root / "adk" / "adk.pdb"))
    out = root / name
    out.mkdir()
    top.save_pdb(str(out / f"{name}.pdb"))
    rng = np.random.default_rng(0)
    with md.formats.XTCTrajectoryFile(str(out / f"{name}_prod_R1_fit.xtc"), "w") as fh:
        for start in range(0, frames, 1000):
            n = min(1000, frames - start)
            fh.write(top.xyz[0][None] + rng.normal(scale=0.02, size=(n, top.n_atoms, 3)).astype(np.float32))
    return out


def child(method: str, root: Path, name: str, stride: int, out: Path) -> dict:
    import mdtraj as md

    from repro.data.atlas.atom14 import gather_atom14
    from repro.data.atlas.preprocess import load_topology, naive_read_replicate, process_protein, select_atoms

    path = root / name / f"{name}_prod_R1_fit.xtc"
    top_path = root / name / f"{name}.pdb"
    start = time.perf_counter()
    if method == "decode":
        frames = sum(len(chunk) for chunk in md.iterload(str(path), top=str(top_path), chunk=1000))
    elif method == "naive":
        top = load_topology(top_path, name)
        sel = select_atoms(top, top_path, name)
        xyz = naive_read_replicate(path, top_path, stride)
        out.mkdir(parents=True, exist_ok=True)
        np.save(out / "atom14.npy", gather_atom14(xyz, sel.atom14).astype(np.float16))
        np.save(out / "ca.npy", xyz[:, sel.ca].astype(np.float32))
        frames = len(md.open(str(path)))
    else:
        process_protein(root, name, out, stride=stride, replicates=[1])
        frames = len(md.open(str(path)))
    seconds = time.perf_counter() - start
    status = Path("/proc/self/status").read_text()
    peak = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))) / 1024
    return {"seconds": seconds, "frames": frames, "peak_mb": peak}


def measure(method: str, root: Path, name: str, stride: int, work: Path) -> dict:
    out = work / f"{method}_{name}_{stride}"
    cmd = [sys.executable, __file__, "--child", method, "--root", str(root), "--name", name]
    cmd += ["--stride", str(stride), "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{method} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[10000, 40000])
    parser.add_argument("--stride", type=int, default=40)
    parser.add_argument("--child", choices=["decode", "naive", "ours"], help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.root, args.name, args.stride, args.out)))
        return
    import mdtraj as md

    print(f"mdtraj {md.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "raw"
        root.mkdir()
        for i, frames in enumerate(args.frames):
            name = f"adk{frames}"
            make_long(root, frames, name)
            runs = [("decode", 1), ("ours", 1), ("ours", args.stride)]
            if i == 0:
                runs += [("naive", 1), ("naive", args.stride)]
            results = {(m, s): measure(m, root, name, s, Path(tmp)) for m, s in runs}
            decode = results[("decode", 1)]
            rate = decode["frames"] / decode["seconds"]
            print(f"{frames} frames: mdtraj.iterload decode {rate:,.0f} frames/s, peak {decode['peak_mb']:.0f} MB")
            for (method, stride), r in results.items():
                if method == "decode":
                    continue
                fps = r["frames"] / r["seconds"]
                print(
                    f"  {method:>5} stride {stride:>3}: {r['seconds']:6.2f} s {fps:9,.0f} frames/s "
                    f"({fps / rate:.2f}x decode), peak {r['peak_mb']:.0f} MB"
                )
            for stride in (1, args.stride):
                if ("naive", stride) in results:
                    ratio = results[("naive", stride)]["seconds"] / results[("ours", stride)]["seconds"]
                    print(f"  ours vs naive at stride {stride}: {ratio:.2f}x")
            print(f"  load after: {os.getloadavg()}")
            for path in (root / name).iterdir():
                path.unlink()


if __name__ == "__main__":
    main()
