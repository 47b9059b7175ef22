"""Rule entry of the structures source: package test structures or a user's folder -> chains.parquet + manifest.

``source: embedded`` reads the extracted members of the catalogued packages the section names
(data/packages/<name>/files, each with its manifest giving package, version and licence); ``source:
local`` reads ``local.root`` in the ``local.layout`` (folder, afdb or cath) under ``local.licence``.
The split is by group of identical sequences (all models of an NMR ensemble and repeated copies of one
protein land in the same split), drawn from the section's seed, so it is deterministic.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from repro.data.structures import COLUMNS, SPLITS
from repro.data.structures.reader import ChainRecord, read_folder, structure_files
from repro.workflow.io import InputError, atomic_path, read_json
from repro.workflow.manifest import file_record, write_manifest

log = logging.getLogger(__name__)


def assign_splits(sequences: list[str], fractions: list[float], seed: int) -> list[str]:
    """train/val/test per chain: groups of identical sequences, in a seeded order, fill the splits by chain count."""
    groups = sorted(set(sequences), key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    order = np.random.default_rng(seed).permutation(len(groups))
    sizes = {s: sequences.count(s) for s in groups}
    bounds = np.cumsum(np.asarray(fractions, dtype=float) / np.sum(fractions)) * len(sequences)
    split_of, filled = {}, 0
    for g in order:
        group = groups[g]
        # A group goes to the split its midpoint falls in, so no split is starved by one large group.
        middle = filled + sizes[group] / 2
        split_of[group] = SPLITS[int(np.searchsorted(bounds, middle, side="right").clip(0, len(SPLITS) - 1))]
        filled += sizes[group]
    return [split_of[s] for s in sequences]


DEFAULT_MAX_REFUSED = 0.1
"""Largest fraction of a user's structure files that may be refused whole (unreadable, no usable residues)."""


def refused_files(files: list[Path], result, max_fraction: float, root) -> dict:
    """Files refused whole (counted, first ten named, logged); an InputError above ``max_fraction`` of them."""
    from repro.data.refusals import Refusals

    refusals = Refusals(root, "structure files")
    refusals.seen(len(files))
    whole = {str(f) for f in files}
    for item in result.skipped:
        if item["item"] in whole:
            refusals.refuse(Path(item["item"]).name, item["reason"].split(" (")[0])
    return refusals.close(max_fraction)


def chains_table(chains: list[ChainRecord], licences: list[str], splits: list[str]) -> pa.Table:
    """The canonical table (column order :data:`repro.data.structures.COLUMNS`)."""
    columns = {
        "chain_id": pa.array([c.chain_id for c in chains], pa.string()),
        "source_file": pa.array([c.source_file for c in chains], pa.string()),
        "licence": pa.array(licences, pa.string()),
        "sequence": pa.array([c.sequence for c in chains], pa.string()),
        "n_residues": pa.array([len(c.sequence) for c in chains], pa.int32()),
        "backbone": pa.array([c.backbone.reshape(-1) for c in chains], pa.list_(pa.float32())),
        "dssp": pa.array([c.dssp for c in chains], pa.string()),
        "split": pa.array(splits, pa.string()),
    }
    return pa.table([columns[c] for c in COLUMNS], names=list(COLUMNS))


def _package_sources(folders: list[str], manifests: list[str], section: dict) -> tuple[list, list[dict]]:
    """(ReadResult, licence) per package folder, and the manifest's record of each package."""
    results, sources = [], []
    for folder, manifest_path in zip(folders, manifests, strict=True):
        manifest = read_json(manifest_path)
        settings = manifest.get("settings", {})
        result = read_folder(folder, "folder", section["min_residues"], section["max_models"])
        results.append((result, manifest["licence"], Path(folder)))
        sources.append(
            {
                "package": settings.get("package"),
                "version": settings.get("version"),
                "file": settings.get("file"),
                "sha256": manifest.get("details", {}).get("package_sha256"),
                "licence": manifest["licence"],
                "chains": len(result.chains),
                "skipped": result.skipped,
            }
        )
    return results, sources


def main(job) -> None:
    section = job.params.section
    if section["source"] == "embedded":
        results, sources = _package_sources(list(job.input.packages), list(job.input.package_manifests), section)
    else:
        local = section["local"]
        result = read_folder(
            local["root"], local["layout"], section["min_residues"], section["max_models"], local.get("limit")
        )
        files = structure_files(local["root"], local["layout"])[: local.get("limit")]
        refused = refused_files(files, result, local.get("max_refused_fraction", DEFAULT_MAX_REFUSED), local["root"])
        results = [(result, local["licence"], Path(local["root"]))]
        sources = [
            {
                "root": local["root"],
                "layout": local["layout"],
                "licence": local["licence"],
                "files": len(files),
                "chains": len(result.chains),
                "refused_files": refused,
                "skipped": result.skipped,
            }
        ]
    chains, licences, inputs = [], [], []
    for result, licence, root in results:
        chains += result.chains
        licences += [licence] * len(result.chains)
        inputs += sorted(
            {root / c.source_file if (root / c.source_file).is_file() else c.source_file for c in result.chains},
            key=str,
        )
    if section["source"] == "local":  # every file the user placed, refused ones included (size and sha256)
        inputs = files
    if not chains:
        raise InputError(job.output.chains, "no usable chains in any source")
    splits = assign_splits([c.sequence for c in chains], section["split_fractions"], section["seed"])
    with atomic_path(job.output.chains) as tmp:
        pq.write_table(chains_table(chains, licences, splits), tmp)
    counts = {s: splits.count(s) for s in SPLITS}
    log.info("%d chains (%s); %d items skipped", len(chains), counts, sum(len(s["skipped"]) for s in sources))
    root = Path(job.output.manifest).parent
    write_manifest(
        job.output.manifest,
        source=section["source"],
        producer="repro.data.structures.build",
        files=[file_record(job.output.chains, root)]
        + [file_record(p, root, role="input") for p in inputs if Path(p).is_file()],
        licence="; ".join(sorted(set(licences))),
        settings={k: v for k, v in section.items() if k != "resources"},
        packages=("mdtraj", "numpy", "pyarrow"),
        details={
            "sources": sources,
            "chains": len(chains),
            "split_counts": counts,
            "dssp_reference_chains": sum(c.dssp_source == "reference" for c in chains),
        },
    )
