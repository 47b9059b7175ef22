"""Resumable, checksummed downloads of the NMRShiftDB2 SD file and the NMRexp release.

The files are large (NMRexp ≈ 3.3 GB) and login nodes drop connections, so they come through the
shared downloader (repro.workflow.download): a partial file (in ``.partial/``) is continued with an HTTP Range
request; a finished file is verified against the sha256 from the config (or recorded when none is
given) before it is moved into place, and never downloaded again. Each file is checked to be what it
claims (SD file, parquet, NMRexp CSV) so a redirect to an HTML page stops with a clear error instead
of feeding the parsers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from repro.data.spectra.sdf import check_sdf
from repro.workflow.download import download as fetch
from repro.workflow.io import InputError

NMREXP_REQUIRED = ("smiles", "nmr_type", "nmr_shift", "nmr_solvent")


def check_literature_table(path: str | os.PathLike) -> None:
    """Stop unless ``path`` is a parquet or CSV table with the NMRexp columns the parser needs."""
    path = Path(path)
    with open(path, "rb") as handle:
        head = handle.read(4096)
    if head.lstrip().lower().startswith((b"<!doctype", b"<html")):
        raise InputError(path, "is an HTML page, not an NMRexp table (download page instead of the data?)")
    if path.suffix == ".parquet":
        if head[:4] != b"PAR1":
            raise InputError(path, "is not a parquet file (no PAR1 magic)")
        columns = pq.read_schema(path).names
    else:
        columns = head.decode("utf-8", errors="replace").splitlines()[0].split(",")
    missing = [c for c in NMREXP_REQUIRED if c not in columns]
    if missing:
        raise InputError(path, f"lacks the NMRexp column(s) {missing}; has {columns[:8]}")


def check_role(path: Path, role: str) -> None:
    """Content check by role: 'labelled_sdf' or 'literature'."""
    if role == "labelled_sdf":
        check_sdf(path)
    elif role == "literature":
        check_literature_table(path)
    else:
        raise ValueError(f"unknown file role {role!r}")


def download(
    entry: dict[str, Any], target_dir: str | os.PathLike, timeout: float = 60.0, retries: int = 3
) -> dict[str, Any]:
    """Download one configured file (resuming a partial one), verify it and return its manifest record.

    repro.workflow.download keeps the partial file in ``.partial/`` under its final name until it has passed the
    checksum and the content check, so a wrong download never sits where the processing looks.
    """
    target = Path(target_dir) / entry["name"]
    fetched = fetch(
        entry["url"],
        target,
        sha256_expected=entry.get("sha256"),
        timeout=timeout,
        retries=retries,
        check=lambda path: check_role(path, entry["role"]),
    )
    check_role(target, entry["role"])
    return record(target, entry, fetched["sha256"])


def record(path: Path, entry: dict[str, Any], digest: str) -> dict[str, Any]:
    """Manifest line of one raw file: where from, size, checksum, licence (no wall-clock time: reruns compare it)."""
    return {
        "name": entry["name"],
        "role": entry["role"],
        "path": str(path),
        "url": entry.get("url"),
        "bytes": path.stat().st_size,
        "sha256": digest,
        "licence": entry.get("licence", "unknown"),
    }
