"""Reader of the published VERDE preprocessed set (n = 256, log2 q = 20, binary; dl.fbaipublicfiles.com/verde).

Layout of the release folder: ``orig_A.npy`` (4n, n), ``orig_b.npy`` (4n,) or (4n, k), ``secret.npy`` (n,) or
(n, k), ``params.pkl`` (a dict with at least N (= n), Q (= q) and sigma), and ``train.prefix`` with one reduced
sample per line, ``a_1 a_2 ... a_n ; b_1 ... b_k`` (integers, b one per secret). R itself is not released, so
R_norm is NaN and the R-based checks are skipped for this source. Bad files raise InputError naming the file.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError


def _npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read ({err})") from err


def read_prefix(path: Path, n: int) -> tuple[np.ndarray, np.ndarray]:
    a_rows, b_rows = [], []
    try:
        lines = path.read_text().splitlines()
    except OSError as err:
        raise InputError(path, f"cannot read ({err})") from err
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split(";")
        if len(parts) != 2:
            raise InputError(path, f"line {number}: expected 'a ; b', got {line[:60]!r}")
        try:
            a, b = [int(v) for v in parts[0].split()], [int(v) for v in parts[1].split()]
        except ValueError as err:
            raise InputError(path, f"line {number}: non-integer entry ({err})") from err
        if len(a) != n:
            raise InputError(path, f"line {number}: {len(a)} entries of a, expected n = {n}")
        a_rows.append(a)
        b_rows.append(b)
    if not a_rows:
        raise InputError(path, "no samples")
    return np.array(a_rows, dtype=np.int64), np.array(b_rows, dtype=np.int64).T


def read_verde(folder: str) -> dict[str, np.ndarray]:
    from repro.papers.lwe.lwe import centre

    root = Path(folder)
    try:
        params = pickle.loads((root / "params.pkl").read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError) as err:
        raise InputError(root / "params.pkl", f"cannot read ({err})") from err
    missing = [k for k in ("N", "Q", "sigma") if k not in params]
    if missing:
        raise InputError(root / "params.pkl", f"missing keys {missing}")
    n, q = int(params["N"]), int(params["Q"])
    orig_a = _npy(root / "orig_A.npy").astype(np.int64)
    if orig_a.ndim != 2 or orig_a.shape[1] != n:
        raise InputError(root / "orig_A.npy", f"shape {orig_a.shape}, expected (4n, {n})")
    secrets = np.atleast_2d(_npy(root / "secret.npy").T).astype(np.int8)
    orig_b = np.atleast_2d(_npy(root / "orig_b.npy").T).astype(np.int64)
    ra, rb = read_prefix(root / "train.prefix", n)
    if rb.shape[0] != secrets.shape[0]:
        raise InputError(root / "train.prefix", f"{rb.shape[0]} b values per line, {secrets.shape[0]} secrets")
    return {
        "orig_A": orig_a,
        "orig_b": orig_b,
        "orig_e": centre(orig_b - secrets.astype(np.int64) @ orig_a.T, q),
        "secrets": secrets,
        "hamming": secrets.sum(axis=1),
        "R_A": centre(ra, q),
        "R_b": np.mod(rb, q),
        "R_norm": np.full(ra.shape[0], np.nan),
        "params": np.array([n, q, 0, 0], dtype=np.int64),
        "sigma": np.float64(params["sigma"]),
    }
