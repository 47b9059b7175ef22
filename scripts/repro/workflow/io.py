"""Atomic file writers.

Every output the workflow produces goes through these helpers so that a crash or a bad
input never leaves a half-written file behind: data is written to a temporary sibling
and renamed into place only once complete (rename is atomic on one filesystem).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_HINT = "fix or replace the file, then run the same command again (only what the file feeds reruns)"


class InputError(ValueError):
    """Bad input data; the message names the file and what is wrong with it, ``hint`` what to do."""

    def __init__(self, path: str | os.PathLike, problem: str, hint: str = DEFAULT_HINT):
        self.path = str(path)
        self.problem = problem
        self.hint = hint
        super().__init__(f"{path}: {problem}")

    def block(self) -> str:
        """The message a user reads first: the file, the problem, what to do."""
        return f"data error in {self.path}\n  problem: {self.problem}\n  what to do: {self.hint}"


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    Works for files and directories (zarr stores). On any exception the temporary is
    removed and ``path`` is left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent)) / target.name
    try:
        yield tmp
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as indented JSON atomically (numpy scalars and arrays allowed)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, default=_json_default, allow_nan=True) + "\n")


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write text atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file, or of the sorted files of a directory (a zarr store), for manifests."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def read_json(path: str | os.PathLike) -> Any:
    """Read JSON, turning a parse failure into an :class:`InputError` naming the file."""
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise InputError(path, f"not valid JSON ({err})") from err


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array of an .npz file, turning a read failure into an :class:`InputError` naming the file."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return dict(data)
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the arrays ({err})") from err


def write_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write arrays as a compressed .npz atomically with the same bytes on every run.

    ``np.savez`` stamps each zip entry with the current time, so two identical runs would differ in
    their sha256 (and in every manifest recording it); here each entry carries a fixed date.
    """
    import zipfile

    with atomic_path(path) as tmp, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w", force_zip64=True) as handle:
                np.lib.format.write_array(handle, np.asanyarray(value), allow_pickle=False)
