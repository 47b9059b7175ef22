"""Reader of the published VERDE preprocessed set (n = 256, log2 q = 20, binary; dl.fbaipublicfiles.com/verde).

Layout of the release folder (facebookresearch/verde, the data the SALSA/PICANTE/VERDE lineage publishes):
``orig_A.npy`` (4n, n) integers, ``orig_b.npy`` (4n,) or (4n, k), ``secret.npy`` (n,) or (n, k) with one
binary secret per column, ``params.pkl`` (a dict with at least N (= n), Q (= q) and sigma; read as plain
values only, never by running code), and ``train.prefix`` with one reduced sample per line,
``a_1 a_2 ... a_n ; b_1 ... b_k`` (integers, b one per secret). R itself is not released, so R_norm is NaN and
the R-based checks are skipped for this source.

``train.prefix`` holds millions of lines at paper scale: it is read in chunks of ``chunk_lines`` lines, each
parsed by numpy, and written into a memory-mapped array under ``scratch``, so the reader's memory stays flat in
the file's size. A line with the wrong field count, a non-integer or a value outside (-q, q) is refused, not
misread: the reader counts the refused lines and names the first ten (line number and problem), and raises
InputError when more than ``max_bad_fraction`` of the lines are refused. Other bad files raise InputError
naming the file.
"""

from __future__ import annotations

import importlib
import io
import logging
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

log = logging.getLogger(__name__)
CHUNK_LINES = 4096  # a chunk parses to about 18 bytes per byte of text (Python tokens): 120 MB at n = 256
COUNT_BLOCK = 1 << 20  # bytes read at a time while counting the lines
FIRST_REFUSED = 10
# What params.pkl may reference besides plain Python values: numpy scalars and their dtypes.
PLAIN_GLOBALS = {
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
}


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles dicts, numbers and strings (and numpy scalars); refuses any other global, so a params.pkl
    cannot run code."""

    def find_class(self, module: str, name: str):
        if (module, name) in PLAIN_GLOBALS:
            return getattr(importlib.import_module(module), name)
        raise pickle.UnpicklingError(f"refers to {module}.{name}; only plain values are read")


def read_params(path: Path) -> dict:
    try:
        params = _PlainUnpickler(io.BytesIO(path.read_bytes())).load()
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError) as err:
        raise InputError(path, f"cannot read ({err})") from err
    if not isinstance(params, dict):
        raise InputError(path, f"holds a {type(params).__name__}, expected a dict of parameters")
    missing = [k for k in ("N", "Q", "sigma") if k not in params]
    if missing:
        raise InputError(path, f"missing keys {missing}")
    return params


def _npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read ({err})") from err


@dataclass
class Refused:
    """Lines of train.prefix that were refused: how many, of how many, and the first few (line, problem)."""

    lines: int = 0
    count: int = 0
    first: list[tuple[int, str]] = field(default_factory=list)

    def add(self, number: int, problem: str) -> None:
        self.count += 1
        if len(self.first) < FIRST_REFUSED:
            self.first.append((number, problem))

    @property
    def fraction(self) -> float:
        return self.count / self.lines if self.lines else 0.0

    def to_dict(self) -> dict:
        return {"lines": self.lines, "refused": self.count, "first_refused": [f"line {n}: {p}" for n, p in self.first]}


def _parse_chunk(lines: list[str], start: int, n: int, k: int, q: int, refused: Refused) -> np.ndarray:
    """(rows, n + k) int64 of the well-formed lines of one chunk (line numbers from ``start``)."""
    tokens, numbers = [], []
    for offset, line in enumerate(lines):
        if not line.strip():
            continue
        refused.lines += 1
        a_text, sep, b_text = line.partition(";")
        a, b = a_text.split(), b_text.split()
        if not sep:
            refused.add(start + offset, "expected 'a ; b'")
        elif len(a) != n:
            refused.add(start + offset, f"{len(a)} entries of a, expected n = {n}")
        elif len(b) != k:
            refused.add(start + offset, f"{len(b)} b values, expected one per secret (k = {k})")
        else:
            tokens.append(a + b)
            numbers.append(start + offset)
    if not tokens:
        return np.zeros((0, n + k), dtype=np.int64)
    try:
        rows = np.asarray(tokens).astype(np.int64)
    except ValueError:  # a non-integer somewhere: find it line by line
        good = []
        for row, number in zip(tokens, numbers):
            try:
                good.append(np.asarray(row).astype(np.int64))
            except ValueError as err:
                refused.add(number, f"non-integer entry ({err})")
        rows = np.stack(good) if good else np.zeros((0, n + k), dtype=np.int64)
        numbers = [num for row, num in zip(tokens, numbers) if _is_int_row(row)]
    bad = np.any(np.abs(rows) >= q, axis=1)
    for i in np.flatnonzero(bad):
        refused.add(numbers[i], f"entry outside (-q, q) with q = {q}")
    return rows[~bad]


def _is_int_row(row: list[str]) -> bool:
    try:
        np.asarray(row).astype(np.int64)
    except ValueError:
        return False
    return True


def read_prefix(
    path: Path,
    n: int,
    k: int,
    q: int,
    scratch: Path,
    max_bad_fraction: float = 0.0,
    chunk_lines: int = CHUNK_LINES,
) -> tuple[np.ndarray, np.ndarray, Refused]:
    """(R_A centred (N, n) memory-mapped in ``scratch`` (int32 when q < 2^31), R_b (k, N) int64 mod q, and the
    refused lines)."""
    from repro.papers.lwe.lwe import centre

    try:
        with open(path, "rb") as fh:
            total = sum(block.count(b"\n") for block in iter(lambda: fh.read(COUNT_BLOCK), b"")) + 1
    except OSError as err:
        raise InputError(path, f"cannot read ({err})") from err
    scratch.mkdir(parents=True, exist_ok=True)
    dtype = np.int32 if q < 2**31 else np.int64  # centred entries lie in [-q/2, q/2)
    ra = np.lib.format.open_memmap(scratch / "R_A.npy", mode="w+", dtype=dtype, shape=(total, n))
    rb = np.zeros((k, total), dtype=np.int64)
    refused, kept = Refused(), 0
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            number = 1
            while True:
                lines = [line for _, line in zip(range(chunk_lines), fh)]
                if not lines:
                    break
                rows = _parse_chunk(lines, number, n, k, q, refused)
                number += len(lines)
                ra[kept : kept + len(rows)] = centre(rows[:, :n], q)
                rb[:, kept : kept + len(rows)] = np.mod(rows[:, n:], q).T
                kept += len(rows)
    except OSError as err:
        raise InputError(path, f"cannot read ({err})") from err
    if refused.count:
        log.warning("%s: refused %d of %d lines; first: %s", path, refused.count, refused.lines, refused.first)
    if not kept:
        raise InputError(path, f"no well-formed samples ({refused.count} lines refused; first: {refused.first})")
    if refused.fraction > max_bad_fraction:
        raise InputError(
            path,
            f"{refused.count} of {refused.lines} lines refused ({refused.fraction:.1%}, more than the allowed "
            f"{max_bad_fraction:.1%}); first: " + "; ".join(f"line {n}: {p}" for n, p in refused.first),
        )
    ra.flush()
    return ra[:kept], rb[:, :kept], refused


def read_verde(folder: str, scratch: str | Path, max_bad_fraction: float = 0.0) -> tuple[dict[str, np.ndarray], dict]:
    """The canonical arrays of the release in ``folder`` (R_A memory-mapped under ``scratch``) and the
    reader's record for the manifest (refused lines, files)."""
    from repro.papers.lwe.lwe import centre

    root = Path(folder)
    params = read_params(root / "params.pkl")
    n, q = int(params["N"]), int(params["Q"])
    orig_a = _npy(root / "orig_A.npy").astype(np.int64)
    if orig_a.ndim != 2 or orig_a.shape[1] != n:
        raise InputError(root / "orig_A.npy", f"shape {orig_a.shape}, expected (4n, {n})")
    secrets = np.atleast_2d(_npy(root / "secret.npy").T).astype(np.int8)
    if secrets.shape[1] != n or not np.isin(secrets, (0, 1)).all():
        raise InputError(root / "secret.npy", f"expected binary secrets of length n = {n}, got shape {secrets.shape}")
    orig_b = np.atleast_2d(_npy(root / "orig_b.npy").T).astype(np.int64)
    if orig_b.shape != (secrets.shape[0], orig_a.shape[0]):
        raise InputError(root / "orig_b.npy", f"shape {orig_b.T.shape}, expected ({orig_a.shape[0]}, k) for k secrets")
    ra, rb, refused = read_prefix(root / "train.prefix", n, secrets.shape[0], q, Path(scratch), max_bad_fraction)
    arrays = {
        "orig_A": orig_a,
        "orig_b": orig_b,
        "orig_e": centre(orig_b - secrets.astype(np.int64) @ orig_a.T, q),
        "secrets": secrets,
        "hamming": secrets.sum(axis=1),
        "R_A": ra,
        "R_b": rb,
        "R_norm": np.full(ra.shape[0], np.nan),
        "params": np.array([n, q, 0, 0], dtype=np.int64),
        "sigma": np.float64(params["sigma"]),
    }
    files = [root / name for name in ("orig_A.npy", "orig_b.npy", "secret.npy", "params.pkl", "train.prefix")]
    return arrays, {"refused": refused.to_dict(), "files": files}
