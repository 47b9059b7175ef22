"""The CyCIF exemplar (scimap 2.3.6 wheel, MCMICRO exemplar-001) as the canonical cell table, gates, workflow.

``scimapExampleData.h5ad`` holds 11,201 cells x 9 markers: raw intensities (``.raw``), their log1p
(``layers['log']``), centroids and morphology, scimap's own phenotype call and ROI labels. ``manual_gates.csv``
gives one gate per marker on the log1p scale (recorded with the gates); ``phenotype_workflow.csv`` the
hierarchical rules (a BOM and blank cells, as the brief warns).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from repro.workflow.io import InputError

FOLDER = "scimap/tests/scimapExampleData"
H5AD, GATES, WORKFLOW = "scimapExampleData.h5ad", "manual_gates.csv", "phenotype_workflow.csv"
MORPHOLOGY = ["Area", "MajorAxisLength", "MinorAxisLength", "Eccentricity", "Solidity", "Extent", "Orientation"]
RULES = ("pos", "neg", "allpos", "allneg", "anypos", "anyneg")


def read_h5ad(path: str | Path) -> pd.DataFrame:
    """Cell table: ``sample, cell_id, x, y``, one raw-intensity column per marker, morphology, ``phenotype_ref``
    (scimap's call stored in the file) and ``roi``."""
    import anndata

    path = Path(path)
    try:
        adata = anndata.read_h5ad(path)
    except (OSError, KeyError, ValueError) as err:
        raise InputError(path, f"cannot read as AnnData ({err})") from err
    need = ["X_centroid", "Y_centroid", "CellID", "imageid", *MORPHOLOGY]
    missing = [c for c in need if c not in adata.obs]
    if missing or adata.raw is None:
        raise InputError(path, f"AnnData lacks obs columns {missing} or raw intensities")
    obs = adata.obs
    raw = np.asarray(adata.raw.X, dtype=np.float64)
    table = pd.DataFrame(
        {
            "sample": obs["imageid"].astype(str).to_numpy(),
            "cell_id": obs["CellID"].to_numpy(),
            "x": obs["X_centroid"].to_numpy(),
            "y": obs["Y_centroid"].to_numpy(),
        }
    )
    for j, marker in enumerate(adata.raw.var_names):
        table[str(marker)] = raw[:, j]
    for col in MORPHOLOGY:
        table[col] = obs[col].to_numpy()
    table["phenotype_ref"] = obs["phenotype"].astype(str).to_numpy() if "phenotype" in obs else ""
    table["roi"] = obs["ROI"].astype(str).to_numpy() if "ROI" in obs else ""
    return table


def read_gates(path: str | Path) -> pd.DataFrame:
    """``marker, gate, scale``: one gate per marker on the log1p scale."""
    path = Path(path)
    try:
        raw = pd.read_csv(path, encoding="utf-8-sig")
    except (OSError, pd.errors.ParserError) as err:
        raise InputError(path, f"cannot read gates ({err})") from err
    if raw.shape[1] < 2 or "markers" not in raw.columns:
        raise InputError(path, "needs a 'markers' column and one gate column")
    gates = pd.DataFrame({"marker": raw["markers"].astype(str), "gate": pd.to_numeric(raw.iloc[:, 1], errors="coerce")})
    if gates["gate"].isna().any():
        raise InputError(path, f"non-numeric gates for {gates.loc[gates.gate.isna(), 'marker'].tolist()}")
    gates["scale"] = "log1p"
    return gates


def read_workflow(path: str | Path) -> pd.DataFrame:
    """Long table ``parent, phenotype, marker, rule`` (blank cells dropped; the BOM is stripped)."""
    path = Path(path)
    try:
        wide = pd.read_csv(path, encoding="utf-8-sig")
    except (OSError, pd.errors.ParserError) as err:
        raise InputError(path, f"cannot read the phenotype workflow ({err})") from err
    if wide.shape[1] < 3:
        raise InputError(path, "needs parent, phenotype and marker columns")
    parent, phenotype = wide.columns[0], wide.columns[1]
    rows = []
    for _, r in wide.iterrows():
        for marker in wide.columns[2:]:
            rule = r[marker]
            if isinstance(rule, str) and rule.strip():
                if rule.strip() not in RULES:
                    raise InputError(path, f"unknown rule {rule!r} for {r[phenotype]!r} / {marker}")
                rows.append(
                    {"parent": str(r[parent]), "phenotype": str(r[phenotype]), "marker": marker, "rule": rule.strip()}
                )
    return pd.DataFrame(rows)
