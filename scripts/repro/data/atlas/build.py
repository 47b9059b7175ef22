"""Rule entry ``atlas_data``: preprocess a raw ATLAS layout into ``data/atlas/`` (arrays, meta, splits, manifest)."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import pandas as pd

from repro.data.atlas.preprocess import preprocess_all
from repro.data.atlas.splits import SPLITS
from repro.workflow.io import InputError, atomic_path, read_json, sha256, write_json

log = logging.getLogger(__name__)


def main(job) -> None:
    """Preprocess every protein listed in the raw folder's ``entries.json`` and write the canonical layout."""
    section = job.params.section
    raw = Path(job.input.raw)
    entries = read_json(job.input.entries)
    names = list(entries["replicates"])
    rows, errors = preprocess_all(
        raw,
        names,
        Path(job.output.processed),
        stride=section["stride"],
        workers=job.threads,
        replicates=entries["replicates"],
        expected_frames=entries.get("expected_frames"),
    )
    if errors and section["on_error"] == "fail":
        raise InputError(raw, "preprocessing failed for " + "; ".join(errors.values()))
    meta = pd.DataFrame(rows)
    meta["dt_ps"] = entries["dt_ps"] * section["stride"]
    with atomic_path(job.output.meta) as tmp:
        meta.to_parquet(tmp, index=False)
    done = set(meta["name"])
    with atomic_path(job.output.splits) as tmp:
        tmp.mkdir()
        for split in SPLITS:
            kept = [n for n in entries["splits"].get(split, []) if n in done]
            pd.DataFrame({"name": kept}).to_csv(tmp / f"atlas_{split}.csv", index=False)
    write_json(
        job.output.manifest,
        {
            "source": section["source"],
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "licence": entries["licence"],
            "origin": entries.get("origin"),
            "stride": section["stride"],
            "proteins": sorted(done),
            "failed": errors,
            "raw_files": {
                str(p.relative_to(raw)): {"bytes": p.stat().st_size, "sha256": sha256(p)}
                for n in sorted(done)
                for p in sorted((raw / n).iterdir())
            },
        },
    )
