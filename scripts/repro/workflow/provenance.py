"""Provenance of a results folder: config, data manifests, package versions, code version, seeds."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import platform
import subprocess
from pathlib import Path
from typing import Any

from repro.workflow.io import read_json, write_json

PACKAGES = (
    "repro",
    "snakemake",
    "torch",
    "numpy",
    "scipy",
    "pandas",
    "xarray",
    "zarr",
    "dask",
    "pyarrow",
    "scikit-learn",
    "mdtraj",
    "rdkit",
    "matplotlib",
)
REPO_ROOT = Path(__file__).resolve().parents[3]


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (None when absent)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_state(root: Path = REPO_ROOT) -> dict[str, Any]:
    """Commit and dirty flag of the checkout the code runs from (None outside git)."""

    def git(*args: str) -> str | None:
        try:
            return subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def main(job) -> None:
    """Rule entry: write ``provenance.json`` for one paper."""
    manifests = {str(p): read_json(p) for p in job.input.get("manifests", [])} if hasattr(job.input, "get") else {}
    write_json(
        job.output[0],
        {
            "paper": job.wildcards.paper,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "config": {"paper": job.params.section, "seed": job.params.seed, "scale": job.params.scale},
            "data_manifests": manifests,
            "code": git_state(),
            "packages": package_versions(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    )
