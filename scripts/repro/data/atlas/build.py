"""Rule entry ``atlas_data``: preprocess a raw ATLAS layout into ``data/atlas/`` (arrays, meta, splits, manifest)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from repro.data.atlas.preprocess import preprocess_all
from repro.data.atlas.splits import SPLITS
from repro.data.refusals import Refusals
from repro.workflow.io import InputError, atomic_path, read_json
from repro.workflow.manifest import file_record, write_manifest

DEFAULT_MAX_REFUSED = 0.1

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
    refusals = Refusals(raw, "proteins")
    refusals.seen(len(names))
    for name in sorted(errors):
        refusals.refuse(name, errors[name].split(": ", 1)[-1].split(" (")[0])
    refused = refusals.close(section.get("max_refused_fraction", DEFAULT_MAX_REFUSED))
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
    root = Path(job.output.manifest).parent
    inputs = [p for n in sorted(names) if (raw / n).is_dir() for p in sorted((raw / n).iterdir()) if p.is_file()]
    write_manifest(
        job.output.manifest,
        source=section["source"],
        producer="repro.data.atlas.build",
        files=[file_record(p, raw, role="input") for p in inputs] + [file_record(job.output.meta, root, role="output")],
        licence=entries["licence"],
        settings={k: v for k, v in section.items() if k != "resources"},
        packages=("mdtraj", "numpy"),
        details={
            "origin": entries.get("origin"),
            "stride": section["stride"],
            "proteins": sorted(done),
            "failed": errors,
            "refused": refused,
        },
    )
