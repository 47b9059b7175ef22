"""Time per batch of the sorting set loss against explicit Hungarian matching, set sizes 10 to 1000.

Usage: python benchmarks/nmrshift_sort_vs_hungarian.py [--batch 16] [--repeats 5]
Prints one line per set size: milliseconds per batch (forward + backward) for both, and their ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from repro.papers.nmrshift.losses import hungarian_set_loss, sorted_set_loss  # noqa: E402


def time_loss(loss, pred, mask, obs, n_obs, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        p = pred.clone().requires_grad_(True)
        start = time.perf_counter()
        loss(p, mask, obs, n_obs).sum().backward()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, 1 thread, batch {args.batch}, best of {args.repeats}")
    print(f"{'set size':>8} {'sort ms':>10} {'hungarian ms':>13} {'ratio':>8} {'max |diff|':>11}")
    for size in (10, 30, 100, 300, 1000):
        pred = torch.randn(args.batch, size, dtype=torch.float64)
        obs = torch.randn(args.batch, size, dtype=torch.float64)
        mask = torch.ones(args.batch, size, dtype=torch.bool)
        n_obs = torch.full((args.batch,), size)
        t_sort = time_loss(sorted_set_loss, pred, mask, obs, n_obs, args.repeats)
        t_hung = time_loss(hungarian_set_loss, pred, mask, obs, n_obs, args.repeats)
        diff = (sorted_set_loss(pred, mask, obs, n_obs) - hungarian_set_loss(pred, mask, obs, n_obs)).abs().max().item()
        print(f"{size:>8} {t_sort:>10.3f} {t_hung:>13.3f} {t_hung / t_sort:>8.1f} {diff:>11.2e}")


if __name__ == "__main__":
    main()
