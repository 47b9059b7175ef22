"""Resumable, checksummed downloads of the NMRShiftDB2 SD file and the NMRexp release.

Why a small HTTP client of our own: the files are large (NMRexp ≈ 3.3 GB) and login nodes drop
connections, so a partial file (in ``.partial/``) is continued with an HTTP Range request; a finished
file is verified against the sha256 from the config (or recorded when none is given) and never
downloaded again. Each file is checked to be what it claims (SD file, parquet, NMRexp CSV) so a
redirect to an HTML page stops with a clear error instead of feeding the parsers.
"""

from __future__ import annotations

import logging
import os
import shutil
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from repro.data.spectra.sdf import check_sdf
from repro.io import InputError, sha256

log = logging.getLogger(__name__)
CHUNK = 1 << 20
NMREXP_REQUIRED = ("smiles", "nmr_type", "nmr_shift", "nmr_solvent")


def _fetch(url: str, part: Path, timeout: float) -> None:
    """Append the rest of ``url`` to ``part`` (Range request); restart if the server ignores the range."""
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and have:
            return
        raise
    with response:
        mode = "ab" if have and response.status == 206 else "wb"
        with open(part, mode) as out:
            shutil.copyfileobj(response, out, CHUNK)


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

    The partial file lives in ``.partial/`` under its final name until it has passed the checksum
    and the content check, so a wrong download never sits where the processing looks.
    """
    target = Path(target_dir) / entry["name"]
    part = Path(target_dir) / ".partial" / entry["name"]
    part.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        for attempt in range(1, retries + 1):
            try:
                _fetch(entry["url"], part, timeout)
                break
            except (OSError, urllib.error.URLError) as err:
                log.warning("%s: attempt %d failed (%s); resuming", entry["url"], attempt, err)
                if attempt == retries:
                    raise
        digest = sha256(part)
        try:
            if entry.get("sha256") and digest != entry["sha256"]:
                raise InputError(
                    entry["url"], f"sha256 {digest} differs from the configured {entry['sha256']}; partial file removed"
                )
            check_role(part, entry["role"])
        except InputError:
            part.unlink()
            raise
        os.replace(part, target)
    digest = sha256(target)
    if entry.get("sha256") and digest != entry["sha256"]:
        raise InputError(target, f"sha256 {digest} differs from the configured {entry['sha256']}")
    check_role(target, entry["role"])
    return record(target, entry, digest)


def record(path: Path, entry: dict[str, Any], digest: str) -> dict[str, Any]:
    """Manifest line of one raw file: where from, size, checksum, licence, when."""
    return {
        "name": entry["name"],
        "role": entry["role"],
        "path": str(path),
        "url": entry.get("url"),
        "bytes": path.stat().st_size,
        "sha256": digest,
        "licence": entry.get("licence", "unknown"),
        "retrieved": datetime.now(UTC).isoformat(timespec="seconds"),
    }
