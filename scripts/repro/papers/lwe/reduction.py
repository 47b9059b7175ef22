"""Lattice preprocessing of LWE samples (SALSA / PICANTE / VERDE style) with fpylll.

From the original samples a random subset A_sub of m rows builds the q-ary embedding
[[0, q I_n], [omega I_m, A_sub]]; LLL (and optionally BKZ) reduces it and every reduced row
[omega R, R A_sub + q k] with R != 0 gives a new sample (R A_sub mod q, R b_sub mod q) whose error R e is
small. Where the reduction stops short, the first columns keep near-uniform entries (the cruel region) and
the later columns are small (cool). At n = 32-48 a full LLL reduces every column alike; a weak LLL (small
delta) reproduces the incomplete, Z-shaped profile that BKZ leaves at n >= 256.
"""

from __future__ import annotations

import numpy as np


def reduce_subset(a_sub: np.ndarray, q: int, omega: int, delta: float, block: int) -> tuple[np.ndarray, np.ndarray]:
    """(R, R A_sub centred) of the reduced rows with R != 0."""
    from fpylll import BKZ, LLL, IntegerMatrix

    m, n = a_sub.shape
    basis = np.zeros((m + n, m + n), dtype=np.int64)
    basis[:n, m:] = q * np.eye(n, dtype=np.int64)
    basis[n:, :m] = omega * np.eye(m, dtype=np.int64)
    basis[n:, m:] = a_sub
    lattice = IntegerMatrix.from_matrix(basis.tolist())
    LLL.reduction(lattice, delta=delta)
    if block > 0:
        BKZ.reduction(lattice, BKZ.Param(block_size=block, max_loops=2))
    out = np.zeros((m + n, m + n), dtype=np.int64)
    lattice.to_matrix(out)
    keep = np.any(out[:, :m] != 0, axis=1)
    return out[keep, :m] // omega, out[keep, m:]
